package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/redact"
)

// located is a YAML scalar and the line it was on, so that an invalid value
// is reported where it stands.
type located[T any] struct {
	V    T
	Line int
}

func (l *located[T]) UnmarshalYAML(n *yaml.Node) error {
	l.Line = n.Line
	return n.Decode(&l.V)
}

// fileConfig is the service's configuration file.
type fileConfig struct {
	// Backend selects the store; always behind core/resilient.
	Backend struct {
		// URL: "memory" (the default), redis://, rediss://,
		// redis-sentinel://h1:p,h2:p/master or redis-cluster://h1:p,h2:p.
		URL located[string] `yaml:"url"`
		// Budget is the longest a check waits for Redis; default 50ms.
		Budget located[string] `yaml:"budget"`
		// OnFailure: fallback (the default), open or closed.
		OnFailure located[string] `yaml:"on_failure"`
		// DenyCache is the number of denials each instance remembers and
		// answers itself until they expire (resilient.WithDenyCache); 0,
		// the default, turns it off. Redis backends only.
		DenyCache located[int] `yaml:"deny_cache"`
		// PasswordEnv and PasswordFile give Redis's password (the URL's
		// user is the ACL user) from an environment variable or a file,
		// instead of the URL; SentinelPasswordEnv and
		// SentinelPasswordFile give the Sentinels' own.
		PasswordEnv          located[string] `yaml:"password_env"`
		PasswordFile         located[string] `yaml:"password_file"`
		SentinelPasswordEnv  located[string] `yaml:"sentinel_password_env"`
		SentinelPasswordFile located[string] `yaml:"sentinel_password_file"`
		// TLS configures TLS to Redis: a rediss:// URL, or a Cluster or
		// Sentinel URL with this section.
		TLS *struct {
			CAFile     located[string] `yaml:"ca_file"`
			CertFile   located[string] `yaml:"cert_file"`
			KeyFile    located[string] `yaml:"key_file"`
			ServerName located[string] `yaml:"server_name"`
		} `yaml:"tls"`
	} `yaml:"backend"`
	// Policies name policies in the policy grammar.
	Policies map[string]located[string] `yaml:"policies"`
	// AdminTokenEnv names the environment variable holding the token that
	// POST /v1/reset requires, or two separated by a comma while one
	// replaces the other.
	AdminTokenEnv located[string] `yaml:"admin_token_env"`
	// AdminTokenFile names a file holding that token, or two on two lines;
	// it is read again at every reload.
	AdminTokenFile located[string] `yaml:"admin_token_file"`
	// Limits bound what one request may ask and what the memory store
	// holds; a change needs a restart.
	Limits struct {
		MaxBodyBytes   located[int] `yaml:"max_body_bytes"`
		MaxPolicies    located[int] `yaml:"max_policies"`
		MaxDescriptors located[int] `yaml:"max_descriptors"`
		MaxEntries     located[int] `yaml:"max_entries"`
		MaxKeyBytes    located[int] `yaml:"max_key_bytes"`
		MemoryKeys     located[int] `yaml:"memory_keys"`
	} `yaml:"limits"`
	// TLS serves HTTP and gRPC over TLS, and with ClientCAFile requires
	// client certificates (mTLS).
	TLS *serverTLSSpec `yaml:"tls"`
	// ForwardAuth names the forward-auth endpoints, for nginx's
	// auth_request, Caddy's forward_auth and Traefik's ForwardAuth.
	ForwardAuth map[string]forwardEndpointSpec `yaml:"forward_auth"`
	// Envoy configures the gRPC rate-limit service.
	Envoy struct {
		// Files are envoyproxy/ratelimit domain files (globs, relative to
		// the configuration file).
		Files []located[string] `yaml:"files"`
		// Domains are domain documents inline.
		Domains []yaml.Node `yaml:"domains"`
		// ResponseHeaders: "draft11" adds the IETF RateLimit fields to
		// response_headers_to_add; "none" (the default) adds nothing.
		ResponseHeaders located[string] `yaml:"response_headers"`
	} `yaml:"envoy"`
}

// backendSpec is the validated backend section.
type backendSpec struct {
	URL       string // "memory" or a Redis URL
	Budget    time.Duration
	OnFailure string
	DenyCache int // entries; 0: off
	// Password and SentinelPassword, when set, replace the URL's.
	Password, SentinelPassword secret
	TLS                        tlsSpec
}

// secret is a password read from the configuration's sources; it prints
// as [redacted], so that no log line or error carries it.
type secret struct{ v string }

func (s secret) String() string {
	if s.v == "" {
		return ""
	}
	return "[redacted]"
}

// tlsSpec is the validated backend.tls section, its files made absolute.
type tlsSpec struct {
	On                                    bool // the section is there
	CAFile, CertFile, KeyFile, ServerName string
}

// maxDenyCache bounds backend.deny_cache. The table is allocated whole at
// start, 96 bytes an entry, and a remembered denial holds about 200 bytes
// more: at this bound, 96 MB at start and about 300 MB full.
const maxDenyCache = 1_000_000

// runtime is one complete, validated configuration: everything a request
// reads, swapped whole on reload.
type runtime struct {
	source      string // the file it came from, "" for none
	backend     backendSpec
	policies    map[string]core.Policy
	adminTokens []string // none disables POST /v1/reset; two during a rotation
	domains     map[string]*domain
	forward     map[string]*forwardEndpoint // forward_auth endpoints by name
	tls         *serverTLS                  // nil: plaintext
	limits      limits
	headers     bool     // Envoy response_headers_to_add
	files       []string // the domain files loaded
	globs       []string // envoy.files, each joined to the configuration's directory when relative

	writers cache // policies' String()s joined by "\x00" -> *fields.Writer
	sets    cache // policy names a request gave, joined by "\x00" -> *resolvedSet
	inline  *inlineSet
}

// limits are the bounds of the limits section.
type limits struct {
	body, policies, descriptors, entries, keyBytes, memoryKeys int
}

// defaultLimits are the bounds without a limits section.
var defaultLimits = limits{body: 64 << 10, policies: 16, descriptors: 64, entries: 16, keyBytes: 4096, memoryKeys: 10_000_000}

// limitRanges are each bound's accepted range.
var limitRanges = map[string][2]int{
	"max_body_bytes":  {1 << 10, 16 << 20},
	"max_policies":    {1, 64},
	"max_descriptors": {1, 1024},
	"max_entries":     {1, 256},
	"max_key_bytes":   {16, core.MaxKeyLen},
	"memory_keys":     {1000, 1_000_000_000},
}

// maxInlinePolicies bounds the distinct inline policies a service takes in
// its life.
const maxInlinePolicies = 1000

// inlineSet is the inline policies a service has taken. The stores keep
// what they learn of every policy they see for as long as they run (the
// memory store a table per policy in every shard its keys reach), so ever
// new inline policies, "1/s", "2/s", ..., would grow the process without
// bound; past maxInlinePolicies a new one is refused, and those taken
// before go on working. A nil set takes every policy.
type inlineSet struct {
	mu   sync.Mutex
	seen map[string]bool
}

// take reports whether the inline policy s may be used: taken before, or
// taken now.
func (in *inlineSet) take(s string) bool {
	if in == nil {
		return true
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.seen[s] {
		return true
	}
	if len(in.seen) >= maxInlinePolicies {
		return false
	}
	if in.seen == nil {
		in.seen = make(map[string]bool)
	}
	in.seen[s] = true
	return true
}

// maxCached bounds each cache, so that requests with ever new inline
// policies cannot grow it.
const maxCached = 4096

// cache is a concurrent map that stops taking entries at maxCached: past
// that, what it would hold is computed again on every use.
type cache struct {
	m sync.Map
	n atomic.Int64
}

func (c *cache) load(key string) (any, bool) { return c.m.Load(key) }

func (c *cache) store(key string, v any) {
	if c.n.Load() < maxCached {
		if _, loaded := c.m.LoadOrStore(key, v); !loaded {
			c.n.Add(1)
		}
	}
}

// headerWriter returns the cached header writer of policies.
func (rt *runtime) headerWriter(policies []core.Policy) *fields.Writer {
	var b strings.Builder
	for i, p := range policies {
		if i > 0 {
			b.WriteByte(0)
		}
		b.WriteString(p.String())
	}
	k := b.String()
	if w, ok := rt.writers.load(k); ok {
		return w.(*fields.Writer)
	}
	w, err := fields.NewWriter(fields.Draft11, clock, policies)
	if err != nil {
		return nil
	}
	rt.writers.store(k, w)
	return w
}

// configError is an invalid configuration: the file, the line when known,
// the field, and what is wrong.
type configError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *configError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// unknownField matches go.yaml.in/yaml's report of a misspelled field.
var unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (.*)$`)

// yamlFields maps the name of every struct type reachable from the
// configuration's document types to its fields' YAML names, for the
// message of a misspelled field.
var yamlFields = func() map[string][]string {
	m := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if _, seen := m[t.String()]; seen || t.Kind() != reflect.Struct {
			return
		}
		m[t.String()] = nil // before the fields: descriptors nest
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
				names = append(names, name)
				walk(f.Type)
			}
		}
		m[t.String()] = names
	}
	walk(reflect.TypeOf(fileConfig{}))
	walk(reflect.TypeOf(domainFile{}))
	return m
}()

// yamlError turns a decoding error into a *configError with the file and
// line (base is the line the document starts at, minus one); a misspelled
// field reads `unknown field "bugdet" (want url, budget, on_failure,
// deny_cache)` instead of naming a Go type.
func yamlError(path string, base int, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return &configError{File: path, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	m := unknownField.FindStringSubmatch(te.Errors[0])
	if m == nil {
		return &configError{File: path, Msg: te.Errors[0]}
	}
	line, _ := strconv.Atoi(m[1])
	msg := fmt.Sprintf("unknown field %q", m[2])
	if want := yamlFields[m[3]]; len(want) > 0 {
		msg += " (want " + strings.Join(want, ", ") + ")"
	}
	return &configError{File: path, Line: base + line, Msg: msg}
}

// emptyRuntime is the configuration without a file: the memory store, no
// policy, no domain.
func emptyRuntime() *runtime {
	return &runtime{backend: backendSpec{URL: "memory", Budget: resilient.DefaultBudget, OnFailure: "fallback"},
		policies: map[string]core.Policy{}, domains: map[string]*domain{}, limits: defaultLimits}
}

// loadConfig reads and validates the configuration file at path; redisURL,
// when not empty, replaces its backend URL (the -redis flag).
func loadConfig(path, redisURL string) (*runtime, error) {
	rt := emptyRuntime()
	if path == "" {
		if redisURL != "" {
			rt.backend.URL = redisURL
		}
		return rt, nil
	}
	raw, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	rt.source = path
	var fc fileConfig
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(path, 0, err)
	}
	bad := func(line int, field, format string, args ...any) error {
		return &configError{File: path, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	// Backend.
	if u := fc.Backend.URL.V; u != "" {
		if err := checkBackendURL(u); err != nil {
			return nil, bad(fc.Backend.URL.Line, "backend.url", "%v", err)
		}
		rt.backend.URL = u
	}
	if redisURL != "" {
		if err := checkBackendURL(redisURL); err != nil {
			return nil, fmt.Errorf("-redis: %w", err)
		}
		rt.backend.URL = redisURL
	}
	if b := fc.Backend.Budget.V; b != "" {
		d, err := time.ParseDuration(b)
		if err != nil || d <= 0 || d > time.Minute {
			return nil, bad(fc.Backend.Budget.Line, "backend.budget", "%q: want a duration between 1ms and 1m, such as 50ms", b)
		}
		rt.backend.Budget = d
	}
	switch f := fc.Backend.OnFailure.V; f {
	case "":
	case "fallback", "open", "closed":
		rt.backend.OnFailure = f
	default:
		return nil, bad(fc.Backend.OnFailure.Line, "backend.on_failure", "%q: want fallback, open or closed", f)
	}
	switch n := fc.Backend.DenyCache.V; {
	case n < 0 || n > maxDenyCache:
		return nil, bad(fc.Backend.DenyCache.Line, "backend.deny_cache", "%d: want a number of entries from 0 (off) to %d", n, maxDenyCache)
	case n > 0 && rt.backend.URL == "memory":
		return nil, bad(fc.Backend.DenyCache.Line, "backend.deny_cache", "the memory store decides every check locally already; a deny cache is for a Redis backend")
	default:
		rt.backend.DenyCache = n
	}
	if err := loadBackendSecrets(&fc, &rt.backend, path, bad); err != nil {
		return nil, err
	}
	// Limits.
	l := &fc.Limits
	for _, b := range []struct {
		name string
		v    located[int]
		dst  *int
	}{{"max_body_bytes", l.MaxBodyBytes, &rt.limits.body}, {"max_policies", l.MaxPolicies, &rt.limits.policies},
		{"max_descriptors", l.MaxDescriptors, &rt.limits.descriptors}, {"max_entries", l.MaxEntries, &rt.limits.entries},
		{"max_key_bytes", l.MaxKeyBytes, &rt.limits.keyBytes}, {"memory_keys", l.MemoryKeys, &rt.limits.memoryKeys}} {
		if b.v.Line == 0 {
			continue
		}
		r := limitRanges[b.name]
		if b.v.V < r[0] || b.v.V > r[1] {
			return nil, bad(b.v.Line, "limits."+b.name, "%d: want %d to %d (default %d)", b.v.V, r[0], r[1], *b.dst)
		}
		*b.dst = b.v.V
	}
	if l.MemoryKeys.Line > 0 && rt.backend.URL != "memory" {
		return nil, bad(l.MemoryKeys.Line, "limits.memory_keys", "bounds the memory store; the backend is Redis (its fallback holds at most 1,000,000 states)")
	}
	// Policies.
	for _, name := range slices.Sorted(maps.Keys(fc.Policies)) {
		v := fc.Policies[name]
		if !validName(name) {
			return nil, bad(v.Line, "policies."+name, "a policy name is printable ASCII without spaces, at most %d bytes", core.MaxNameLen)
		}
		p, err := core.ParsePolicy(v.V)
		if err != nil {
			return nil, bad(v.Line, "policies."+name, "%v", err)
		}
		if p.Name != "" && p.Name != name {
			return nil, bad(v.Line, "policies."+name, "the policy names itself %q; leave name= out, the key names it", p.Name)
		}
		if p.Shadow {
			return nil, bad(v.Line, "policies."+name, "%s", errShadow)
		}
		p.Name = name
		rt.policies[name] = p
	}
	// Admin token.
	env, file := fc.AdminTokenEnv, fc.AdminTokenFile
	switch {
	case env.V != "" && file.V != "":
		return nil, bad(file.Line, "admin_token_file", "give admin_token_env or admin_token_file, not both")
	case env.V != "":
		tok := os.Getenv(env.V)
		if tok == "" {
			return nil, bad(env.Line, "admin_token_env", "the environment variable %s is not set; set it to a token of at least 16 characters (POST /v1/reset needs it), or remove admin_token_env to disable reset", env.V)
		}
		if rt.adminTokens, err = adminTokens(strings.Split(tok, ",")); err != nil {
			return nil, bad(env.Line, "admin_token_env", "the environment variable %s: %v", env.V, err)
		}
	case file.V != "":
		p := file.V
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		raw, err := readConfigFile(p)
		if err != nil {
			return nil, bad(file.Line, "admin_token_file", "%v", err)
		}
		if rt.adminTokens, err = adminTokens(strings.Split(strings.TrimRight(string(raw), "\r\n"), "\n")); err != nil {
			return nil, bad(file.Line, "admin_token_file", "%s: %v", p, err)
		}
	}
	// TLS.
	if rt.tls, err = loadServerTLS(path, fc.TLS, bad); err != nil {
		return nil, err
	}
	// Forward auth.
	if rt.forward, err = parseForwardAuth(path, fc.ForwardAuth, rt.policies, rt.limits.policies); err != nil {
		return nil, err
	}
	// Envoy.
	switch h := fc.Envoy.ResponseHeaders.V; h {
	case "", "none":
	case "draft11":
		rt.headers = true
	default:
		return nil, bad(fc.Envoy.ResponseHeaders.Line, "envoy.response_headers", "%q: want draft11 or none", h)
	}
	for i := range fc.Envoy.Domains {
		d, err := parseDomainNode(path, &fc.Envoy.Domains[i])
		if err != nil {
			return nil, err
		}
		if err := rt.addDomain(d, path, fc.Envoy.Domains[i].Line); err != nil {
			return nil, err
		}
	}
	dir := filepath.Dir(path)
	for _, f := range fc.Envoy.Files {
		pattern := f.V
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(dir, pattern)
		}
		rt.globs = append(rt.globs, pattern)
		matches, err := filepath.Glob(pattern)
		if err != nil || len(matches) == 0 {
			return nil, bad(f.Line, "envoy.files", "%q matches no file", f.V)
		}
		sort.Strings(matches)
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				return nil, bad(f.Line, "envoy.files", "%q matches the directory %s; name the domain files in it, such as %q", f.V, m, filepath.Join(f.V, "*.yaml"))
			} else if err == nil && !st.Mode().IsRegular() {
				return nil, bad(f.Line, "envoy.files", "%q matches %s, %s, not a domain file", f.V, m, fileKind(st.Mode()))
			}
			d, err := loadDomainFile(m)
			if err != nil {
				return nil, err
			}
			if err := rt.addDomain(d, m, 1); err != nil {
				return nil, err
			}
			rt.files = append(rt.files, m)
		}
	}
	return rt, nil
}

// maxConfigFile bounds the size of a configuration or domain file.
const maxConfigFile = 4 << 20

// readConfigFile reads a configuration or domain file: a regular file (or
// a link to one) of at most maxConfigFile bytes. Anything else is refused
// before it is opened or read, so that a path naming a device, a pipe or a
// directory fails at once with what it is instead of hanging the start or
// a reload on a read that never ends.
func readConfigFile(path string) ([]byte, error) {
	refuse := func(format string, args ...any) error {
		return &configError{File: path, Msg: fmt.Sprintf(format, args...)}
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, refuse("not a regular file (%s); name a YAML file", fileKind(st.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if !st.Mode().IsRegular() { // replaced between the two looks
		return nil, refuse("not a regular file (%s); name a YAML file", fileKind(st.Mode()))
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(raw) > maxConfigFile {
		return nil, refuse("larger than %d MiB", maxConfigFile>>20)
	}
	return raw, nil
}

// fileKind names the kind of file a mode is, for readConfigFile's error.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

func (rt *runtime) addDomain(d *domain, file string, line int) error {
	if _, dup := rt.domains[d.name]; dup {
		return &configError{File: file, Line: line, Field: "domain", Msg: fmt.Sprintf("domain %q is configured twice", d.name)}
	}
	rt.domains[d.name] = d
	return nil
}

// validName reports whether s can name a policy.
func validName(s string) bool {
	if s == "" || len(s) > core.MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// adminTokens checks the admin tokens given: one, or two during a rotation,
// each of at least 16 characters. The error never quotes a token.
func adminTokens(toks []string) ([]string, error) {
	for i, t := range toks {
		toks[i] = strings.TrimSpace(t)
	}
	if len(toks) > 2 {
		return nil, fmt.Errorf("holds %d tokens; give one, or two while one replaces the other", len(toks))
	}
	for i, t := range toks {
		if len(t) < 16 {
			return nil, fmt.Errorf("token %d of %d holds %d characters; give at least 16", i+1, len(toks), len(t))
		}
	}
	return toks, nil
}

// checkBackendURL validates a backend URL's form.
func checkBackendURL(u string) error {
	switch {
	case u == "memory":
		return nil
	case strings.HasPrefix(u, "redis://"), strings.HasPrefix(u, "rediss://"),
		strings.HasPrefix(u, "redis-sentinel://"), strings.HasPrefix(u, "redis-cluster://"):
		return nil
	}
	return fmt.Errorf("%q: want memory, redis://, rediss://, redis-sentinel://host:port,host:port/master or redis-cluster://host:port,host:port", redact.URL(u))
}
