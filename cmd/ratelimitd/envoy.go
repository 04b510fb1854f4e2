package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit/core"
)

// domainFile is a domain document in envoyproxy/ratelimit's format, with
// our extensions on rate_limit (algorithm, burst, window).
type domainFile struct {
	Domain      string           `yaml:"domain"`
	Descriptors []descriptorFile `yaml:"descriptors"`
}

type descriptorFile struct {
	Key            string           `yaml:"key"`
	Value          string           `yaml:"value"`
	RateLimit      *rateLimitFile   `yaml:"rate_limit"`
	ShadowMode     bool             `yaml:"shadow_mode"`
	DetailedMetric bool             `yaml:"detailed_metric"`
	ValueToMetric  bool             `yaml:"value_to_metric"`
	ShareThreshold bool             `yaml:"share_threshold"`
	QuotaMode      bool             `yaml:"quota_mode"`
	Descriptors    []descriptorFile `yaml:"descriptors"`
	line           int
}

type rateLimitFile struct {
	Name     string `yaml:"name"`
	Replaces []struct {
		Name string `yaml:"name"`
	} `yaml:"replaces"`
	Unit            string `yaml:"unit"`
	RequestsPerUnit *int64 `yaml:"requests_per_unit"`
	UnitMultiplier  int64  `yaml:"unit_multiplier"`
	Unlimited       bool   `yaml:"unlimited"`
	// Our extensions.
	Algorithm string `yaml:"algorithm"`
	Burst     int    `yaml:"burst"`
	Window    string `yaml:"window"`
	line      int
}

// attachLines sets the line of every descriptor and rate limit of ds from
// the document's node tree seq (the "descriptors" sequence), offset by
// base-1, for error messages. The strict decoder that refuses unknown
// fields cannot record lines itself: a custom unmarshaler would lose its
// strictness.
func attachLines(ds []descriptorFile, seq *yaml.Node, base int) {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	for i := range ds {
		if i >= len(seq.Content) {
			return
		}
		item := seq.Content[i]
		ds[i].line = item.Line + base - 1
		if line := mapKeyLine(item, "rate_limit"); line > 0 && ds[i].RateLimit != nil {
			ds[i].RateLimit.line = line + base - 1
		}
		attachLines(ds[i].Descriptors, mapValue(item, "descriptors"), base)
	}
}

// mapValue returns the value of key in mapping node n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// mapKeyLine returns the line of key in mapping node n, or 0.
func mapKeyLine(n *yaml.Node, key string) int {
	if n == nil || n.Kind != yaml.MappingNode {
		return 0
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return 0
}

// decodeDomain decodes a domain document strictly and attaches lines.
func decodeDomain(raw []byte, base int) (*domainFile, error) {
	var df domainFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&df); err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err == nil && len(root.Content) > 0 {
		attachLines(df.Descriptors, mapValue(root.Content[0], "descriptors"), base)
	}
	return &df, nil
}

// units are Envoy's rate-limit units, by their name in the file, with the
// window each stands for (a month is 30 days, a year 365).
var units = map[string]struct {
	code   int32 // RateLimitResponse_RateLimit_Unit
	window time.Duration
}{
	"second": {1, time.Second}, "minute": {2, time.Minute}, "hour": {3, time.Hour}, "day": {4, 24 * time.Hour},
	"week": {7, 7 * 24 * time.Hour}, "month": {5, 30 * 24 * time.Hour}, "year": {6, 365 * 24 * time.Hour},
}

// rule is a configured rate limit.
type rule struct {
	policy    core.Policy // Name: rate_limit.name, or the descriptor's path in the domain
	unit      int32
	perUnit   uint32
	unlimited bool // always OK, no state
	blocked   bool // requests_per_unit 0: always OVER_LIMIT, no state
	shadow    bool
	name      string // rate_limit.name, for replaces
	replaces  []string
}

// node is one level of a domain's descriptor tree.
type node struct {
	exact     map[entry]*node  // key and value
	anyValue  map[string]*node // key: entries without a value
	wildcards []wildcard       // values ending in "*", in file order
	rule      *rule
	path      string // "key_value.key2" as in envoyproxy/ratelimit's stats
}

type wildcard struct {
	key, prefix string
	share       bool // share_threshold: one counter for every matching value
	n           *node
}

// domain is one configured domain.
type domain struct {
	name string
	root *node
}

func newNode(path string) *node {
	return &node{exact: map[entry]*node{}, anyValue: map[string]*node{}, path: path}
}

// loadDomainFile reads one envoyproxy/ratelimit domain file.
func loadDomainFile(path string) (*domain, error) {
	raw, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	df, err := decodeDomain(raw, 1)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &configError{File: path, Msg: "empty domain file"}
		}
		return nil, yamlError(path, 0, err)
	}
	return buildDomain(path, 1, df)
}

// parseDomainNode reads an inline domain document of the main file.
func parseDomainNode(file string, n *yaml.Node) (*domain, error) {
	// Decode with unknown fields refused: re-encode the node and decode it
	// strictly, since Node.Decode cannot refuse them. Lines in the error are
	// counted from the domain's first line.
	raw, err := yaml.Marshal(n)
	if err != nil {
		return nil, &configError{File: file, Line: n.Line, Field: "envoy.domains", Msg: err.Error()}
	}
	df, err := decodeDomain(raw, n.Line)
	if err != nil {
		ce := yamlError(file, n.Line-1, err).(*configError)
		if ce.Line == 0 {
			ce.Line, ce.Field = n.Line, "envoy.domains"
		}
		return nil, ce
	}
	return buildDomain(file, n.Line, df)
}

func buildDomain(file string, line int, df *domainFile) (*domain, error) {
	if df.Domain == "" {
		return nil, &configError{File: file, Line: line, Field: "domain", Msg: "a domain needs a name"}
	}
	d := &domain{name: df.Domain, root: newNode("")}
	if err := addDescriptors(file, df.Domain, d.root, df.Descriptors); err != nil {
		return nil, err
	}
	return d, nil
}

func addDescriptors(file, domainName string, parent *node, ds []descriptorFile) error {
	for i := range ds {
		desc := &ds[i]
		bad := func(field, format string, args ...any) error {
			return &configError{File: file, Line: desc.line, Field: field, Msg: fmt.Sprintf(format, args...)}
		}
		if desc.Key == "" {
			return bad("key", "a descriptor needs a key")
		}
		seg := desc.Key
		if desc.Value != "" {
			seg += "_" + desc.Value
		}
		path := seg
		if parent.path != "" {
			path = parent.path + "." + seg
		}
		child := newNode(path)
		switch {
		case strings.HasSuffix(desc.Value, "*"):
			child.path = path
			parent.wildcards = append(parent.wildcards, wildcard{key: desc.Key, prefix: strings.TrimSuffix(desc.Value, "*"), share: desc.ShareThreshold, n: child})
		case desc.ShareThreshold:
			return bad("share_threshold", "share_threshold applies to wildcard values (ending in *) only")
		case desc.Value != "":
			k := entry{desc.Key, desc.Value}
			if _, dup := parent.exact[k]; dup {
				return bad("value", "descriptor %s=%s is configured twice at this level", desc.Key, desc.Value)
			}
			parent.exact[k] = child
		default:
			if _, dup := parent.anyValue[desc.Key]; dup {
				return bad("key", "descriptor %s (any value) is configured twice at this level", desc.Key)
			}
			parent.anyValue[desc.Key] = child
		}
		if rl := desc.RateLimit; rl != nil {
			r, err := buildRule(file, domainName, path, desc, rl)
			if err != nil {
				return err
			}
			child.rule = r
		}
		if err := addDescriptors(file, domainName, child, desc.Descriptors); err != nil {
			return err
		}
	}
	return nil
}

func buildRule(file, domainName, path string, desc *descriptorFile, rl *rateLimitFile) (*rule, error) {
	bad := func(field, format string, args ...any) error {
		return &configError{File: file, Line: rl.line, Field: "rate_limit." + field, Msg: fmt.Sprintf(format, args...)}
	}
	r := &rule{shadow: desc.ShadowMode, name: rl.Name}
	for _, rep := range rl.Replaces {
		if rep.Name == "" {
			return nil, bad("replaces", "a replaced rate limit needs a name")
		}
		r.replaces = append(r.replaces, rep.Name)
	}
	if rl.Unlimited {
		if rl.Unit != "" || rl.RequestsPerUnit != nil {
			return nil, bad("unlimited", "an unlimited rate limit has no unit and no requests_per_unit")
		}
		r.unlimited = true
		return r, nil
	}
	u, ok := units[strings.ToLower(rl.Unit)]
	if !ok {
		return nil, bad("unit", "%q: want second, minute, hour, day, week, month or year", rl.Unit)
	}
	if rl.RequestsPerUnit == nil {
		return nil, bad("requests_per_unit", "missing")
	}
	n := *rl.RequestsPerUnit
	if n < 0 || n > core.MaxLimit {
		return nil, bad("requests_per_unit", "%d: want 0 to %d", n, core.MaxLimit)
	}
	r.unit, r.perUnit = u.code, uint32(n)
	if n == 0 {
		r.blocked = true
		return r, nil
	}
	window := u.window
	if rl.UnitMultiplier > 1 {
		window *= time.Duration(rl.UnitMultiplier)
	}
	if rl.Window != "" {
		w, err := time.ParseDuration(rl.Window)
		if err != nil {
			return nil, bad("window", "%q: %v", rl.Window, err)
		}
		window = w
	}
	alg := core.FixedWindow // envoyproxy/ratelimit's own algorithm, unless the file says otherwise
	if rl.Algorithm != "" {
		a, err := core.ParseAlgorithm(rl.Algorithm)
		if err != nil {
			return nil, bad("algorithm", "%v", err)
		}
		if a == core.Concurrency {
			return nil, bad("algorithm", "concurrency: Envoy's protocol never says when a request ends, so its slot would never be given back")
		}
		alg = a
	}
	name := rl.Name
	if name == "" {
		name = domainName + "." + path
	}
	if len(name) > core.MaxNameLen {
		name = name[:core.MaxNameLen]
	}
	r.policy = core.Policy{Name: name, Limit: int(n), Window: window, Burst: rl.Burst, Algorithm: alg, Shadow: desc.ShadowMode}
	if err := r.policy.Validate(); err != nil {
		return nil, bad("", "%v", err)
	}
	return r, nil
}

// entry is one key/value pair of a request's descriptor.
type entry struct{ key, value string }

// match finds the rule for a descriptor's entries, as envoyproxy/ratelimit
// does: level by level, the most specific entry first (key and value, then
// the longest matching wildcard, then the key with any value); the rule is
// the one at the level of the descriptor's last entry. It returns the
// state key of the match: the domain and each entry, with the configured
// wildcard in place of the value where thresholds are shared.
func (d *domain) match(entries []entry) (*rule, string) {
	n := d.root
	var key strings.Builder
	key.WriteString(escapeKey(d.name))
	for _, e := range entries {
		next, v := n.exact[e], e.value
		if next == nil {
			best := -1
			for i, w := range n.wildcards {
				if w.key == e.key && strings.HasPrefix(e.value, w.prefix) && (best < 0 || len(w.prefix) > len(n.wildcards[best].prefix)) {
					best = i
				}
			}
			if best >= 0 {
				next = n.wildcards[best].n
				if n.wildcards[best].share {
					v = n.wildcards[best].prefix + "*"
				}
			}
		}
		if next == nil {
			next = n.anyValue[e.key]
		}
		if next == nil {
			return nil, ""
		}
		key.WriteByte('|')
		key.WriteString(escapeKey(e.key))
		key.WriteByte('=')
		key.WriteString(escapeKey(v))
		n = next
	}
	return n.rule, key.String()
}

// escapeKey escapes the separators of a state key.
func escapeKey(s string) string {
	if !strings.ContainsAny(s, "|=%") {
		return s
	}
	r := strings.NewReplacer("%", "%25", "|", "%7C", "=", "%3D")
	return r.Replace(s)
}
