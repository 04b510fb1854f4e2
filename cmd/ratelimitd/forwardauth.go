package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/clocksleep"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// maxForwardHold bounds a leaky bucket's max_delay in a forward-auth rule:
// the answer is held that long, well within the server's write timeout.
const maxForwardHold = 5 * time.Second

// forwardEndpoint is one validated forward_auth endpoint, served at
// /v1/forward-auth/{name}: its rules matched as ServeMux patterns against
// the request the proxy forwards.
type forwardEndpoint struct {
	denyStatus int
	mux        *http.ServeMux // the rules' patterns, for matching only
	rules      map[string]*forwardRule
}

// forwardRule is one rule: its key and the policies checked together.
type forwardRule struct {
	pattern  string
	key      keyfuncs.KeyFunc
	policies []core.Policy
	cost     int
	set      *fields.Set
}

// forwardEndpointSpec is a forward_auth endpoint in the file.
type forwardEndpointSpec struct {
	// DenyStatus answers a denial: 429 (the default), or 403 for nginx,
	// whose auth_request turns any other status into a 500.
	DenyStatus located[int] `yaml:"deny_status"`
	// TrustedProxies are the prefixes of the proxies whose client-address
	// headers are believed.
	TrustedProxies []located[string] `yaml:"trusted_proxies"`
	// ClientIPHeaders are the headers read for the client address, in
	// order: X-Forwarded-For, X-Real-IP (the default), Forwarded.
	ClientIPHeaders []located[string] `yaml:"client_ip_headers"`
	// Rules map a ServeMux pattern to a rule.
	Rules map[string]forwardRuleSpec `yaml:"rules"`
}

// forwardRuleSpec is a rule in the file.
type forwardRuleSpec struct {
	// Key is where the key comes from, the first present of: client_ip,
	// header:<name> (hashed). The default is client_ip.
	Key []located[string] `yaml:"key"`
	// Policies are configured policy names, checked together.
	Policies []located[string] `yaml:"policies"`
	// Cost is what a request costs; default 1.
	Cost located[int] `yaml:"cost"`
}

// parseForwardAuth validates the forward_auth section against the
// configured policies.
func parseForwardAuth(file string, specs map[string]forwardEndpointSpec, policies map[string]core.Policy, maxPolicies int) (map[string]*forwardEndpoint, error) {
	out := make(map[string]*forwardEndpoint, len(specs))
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		ep, err := parseForwardEndpoint(file, name, specs[name], policies, maxPolicies)
		if err != nil {
			return nil, err
		}
		out[name] = ep
	}
	return out, nil
}

func parseForwardEndpoint(file, name string, spec forwardEndpointSpec, policies map[string]core.Policy, maxPolicies int) (*forwardEndpoint, error) {
	field := "forward_auth." + name
	bad := func(line int, f, format string, args ...any) error {
		return &configError{File: file, Line: line, Field: field + f, Msg: fmt.Sprintf(format, args...)}
	}
	if !validEndpointName(name) {
		return nil, bad(0, "", "an endpoint name is 1 to 64 letters, digits, '-' or '_' (it is the last segment of /v1/forward-auth/{name})")
	}
	ep := &forwardEndpoint{denyStatus: http.StatusTooManyRequests, mux: http.NewServeMux(), rules: map[string]*forwardRule{}}
	switch s := spec.DenyStatus.V; s {
	case 0:
	case http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		ep.denyStatus = s
	default:
		return nil, bad(spec.DenyStatus.Line, ".deny_status", "%d: want 429, 403 (for nginx's auth_request, which answers any other status as 500) or 503", s)
	}
	var opts []keyfuncs.IPOption
	var trusted []netip.Prefix
	for _, p := range spec.TrustedProxies {
		pfx, err := netip.ParsePrefix(p.V)
		if err != nil {
			a, aerr := netip.ParseAddr(p.V)
			if aerr != nil {
				return nil, bad(p.Line, ".trusted_proxies", "%q: want an address or a prefix, such as 127.0.0.1 or 10.0.0.0/8", p.V)
			}
			pfx = netip.PrefixFrom(a, a.BitLen())
		}
		// keyfuncs's own rule (no prefix of every address), asked entry by
		// entry so that the error names the entry's line.
		if _, err := keyfuncs.NewIPResolver(keyfuncs.WithTrustedProxies(pfx)); err != nil {
			return nil, bad(p.Line, ".trusted_proxies", "%v", err)
		}
		trusted = append(trusted, pfx)
	}
	opts = append(opts, keyfuncs.WithTrustedProxies(trusted...))
	if len(spec.ClientIPHeaders) > 0 {
		var hs []keyfuncs.ProxyHeader
		for _, h := range spec.ClientIPHeaders {
			switch strings.ToLower(h.V) {
			case "x-forwarded-for":
				hs = append(hs, keyfuncs.XForwardedFor)
			case "x-real-ip":
				hs = append(hs, keyfuncs.XRealIP)
			case "forwarded":
				hs = append(hs, keyfuncs.Forwarded)
			default:
				return nil, bad(h.Line, ".client_ip_headers", "%q: want X-Forwarded-For, X-Real-IP or Forwarded", h.V)
			}
		}
		opts = append(opts, keyfuncs.WithProxyHeaders(hs...))
	}
	ips, err := keyfuncs.NewIPResolver(opts...)
	if err != nil {
		return nil, bad(0, ".trusted_proxies", "%v", err)
	}
	if len(spec.Rules) == 0 {
		return nil, bad(0, ".rules", "no rule: give at least one, such as \"POST /login\": {policies: [login]}")
	}
	for _, pattern := range slices.Sorted(maps.Keys(spec.Rules)) {
		rs := spec.Rules[pattern]
		rf := ".rules." + pattern
		line := 0
		if len(rs.Policies) > 0 {
			line = rs.Policies[0].Line
		}
		if err := registerPattern(ep.mux, pattern); err != nil {
			return nil, bad(line, rf, "%v", err)
		}
		rule := &forwardRule{pattern: pattern, cost: 1}
		if len(rs.Policies) == 0 {
			return nil, bad(line, rf, "no policies: name at least one configured policy")
		}
		for _, pn := range rs.Policies {
			p, ok := policies[pn.V]
			if !ok {
				return nil, bad(pn.Line, rf+".policies", "no policy named %q is configured in policies", pn.V)
			}
			if p.Algorithm == core.Concurrency {
				return nil, bad(pn.Line, rf+".policies", "policy %q is a concurrency limit: forward-auth never sees a request end, so its slot would never be given back", pn.V)
			}
			if p.Algorithm == core.LeakyBucket {
				// The answer is held for the admission's delay, as the
				// middleware holds a request: at most max_delay, 1 s unless
				// the policy says, and never near the server's write timeout.
				if p.MaxDelay > maxForwardHold {
					return nil, bad(pn.Line, rf+".policies", "policy %q: max_delay %v: forward-auth holds the proxy's subrequest for the delay, at most %v", pn.V, p.MaxDelay, maxForwardHold)
				}
				p.MaxDelay = cmp.Or(p.MaxDelay, time.Second)
			}
			rule.policies = append(rule.policies, p)
		}
		if len(rule.policies) > maxPolicies {
			return nil, bad(line, rf+".policies", "at most %d policies (limits.max_policies)", maxPolicies)
		}
		if c := rs.Cost; c.Line > 0 {
			if c.V < 1 {
				return nil, bad(c.Line, rf+".cost", "%d: want at least 1", c.V)
			}
			rule.cost = c.V
		}
		for _, p := range rule.policies {
			if err := p.CheckCost(rule.cost); err != nil {
				return nil, bad(line, rf+".cost", "%v", err)
			}
		}
		if rule.set, err = fields.NewSet(fields.Draft11, rule.policies); err != nil {
			return nil, bad(line, rf+".policies", "%v", err)
		}
		rule.set.Clock = clock
		if rule.key, err = forwardKey(rs.Key, ips, len(trusted) > 0); err != nil {
			kl := line
			if len(rs.Key) > 0 {
				kl = rs.Key[0].Line
			}
			return nil, bad(kl, rf+".key", "%v", err)
		}
		ep.rules[pattern] = rule
	}
	return ep, nil
}

// registerPattern adds pattern to mux, turning ServeMux's panic on an
// invalid or conflicting pattern into an error.
func registerPattern(mux *http.ServeMux, pattern string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v; a rule's pattern is a Go ServeMux pattern, such as \"POST /login\" or \"/api/\"", r)
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return nil
}

// forwardKey builds a rule's key function from its sources: the first
// present of them gives the key.
func forwardKey(sources []located[string], ips *keyfuncs.IPResolver, trusted bool) (keyfuncs.KeyFunc, error) {
	if len(sources) == 0 {
		sources = []located[string]{{V: "client_ip"}}
	}
	var fn keyfuncs.KeyFunc
	for i := len(sources) - 1; i >= 0; i-- {
		src := sources[i].V
		switch name, isHeader := strings.CutPrefix(src, "header:"); {
		case src == "client_ip":
			if i != len(sources)-1 {
				return nil, fmt.Errorf("client_ip is always present: put it last")
			}
			if !trusted {
				return nil, fmt.Errorf("client_ip needs trusted_proxies: every check comes from the proxy, so without them every client would share the proxy's own address")
			}
			fn = ips.Key
		case isHeader:
			var opts []keyfuncs.HeaderOption
			if fn != nil {
				opts = append(opts, keyfuncs.FallbackIfMissing(fn))
			}
			fn = keyfuncs.Header(name, opts...)
			if !httpguts.ValidHeaderFieldName(name) {
				return nil, fmt.Errorf("%q: %q is not a header name", src, name)
			}
		default:
			return nil, fmt.Errorf("%q: want client_ip or header:<name>", src)
		}
	}
	return fn, nil
}

// validEndpointName reports whether s can name a forward_auth endpoint.
func validEndpointName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// forwarded is the request a proxy asks about.
type forwarded struct {
	method, host, path string
}

// forwardedRequest reads the original request from the proxy's headers:
// the method from X-Forwarded-Method (Caddy, Traefik) or
// X-Original-Method, else the check's own (nginx sends the original
// method); the URI from X-Forwarded-Uri or X-Original-URI; the host from
// X-Forwarded-Host, else the check's Host.
func forwardedRequest(r *http.Request) (forwarded, error) {
	var f forwarded
	f.method = r.Header.Get("X-Forwarded-Method")
	if f.method == "" {
		f.method = r.Header.Get("X-Original-Method")
	}
	if f.method == "" {
		f.method = r.Method
	}
	if !httpguts.ValidHeaderFieldName(f.method) { // a method is a token too
		return f, badRequest("X-Forwarded-Method", "the forwarded method is not a token")
	}
	uri := r.Header.Get("X-Forwarded-Uri")
	field := "X-Forwarded-Uri"
	if uri == "" {
		uri, field = r.Header.Get("X-Original-Uri"), "X-Original-URI"
	}
	if uri == "" {
		return f, badRequest("X-Forwarded-Uri", "the proxy sent neither X-Forwarded-Uri nor X-Original-URI: configure it to pass the original request's URI (see the forward-auth docs)")
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil || u.Path == "" || u.Path[0] != '/' {
		return f, badRequest(field, "the forwarded URI is not an absolute path")
	}
	// The path the upstream serves, cleaned as ServeMux would redirect to
	// it, so that /api/../login matches the rules of /login.
	f.path = path.Clean(u.Path)
	if strings.HasSuffix(u.Path, "/") && f.path != "/" {
		f.path += "/"
	}
	f.host = r.Header.Get("X-Forwarded-Host")
	if f.host == "" {
		f.host = r.Host
	}
	return f, nil
}

// match returns the rule of the most specific pattern that matches f, nil
// when none does.
func (ep *forwardEndpoint) match(f forwarded) *forwardRule {
	req := &http.Request{Method: f.method, Host: f.host, URL: &url.URL{Path: f.path}}
	_, pattern := ep.mux.Handler(req)
	return ep.rules[pattern]
}

// forwardView is the forwarded request as key functions read it.
type forwardView struct {
	r     *http.Request
	f     *forwarded
	route string
}

func (v *forwardView) Method() string            { return v.f.method }
func (v *forwardView) Path() string              { return v.f.path }
func (v *forwardView) Route() string             { return v.route }
func (v *forwardView) Header(name string) string { return v.r.Header.Get(name) }
func (v *forwardView) RemoteAddr() string        { return v.r.RemoteAddr }
func (v *forwardView) Context() context.Context  { return v.r.Context() }

// handleForwardAuth answers a proxy's forward-auth subrequest: 200 with
// the RateLimit fields when the forwarded request may pass (or no rule
// matches it), the endpoint's denial status with Retry-After, the fields
// and a problem document when it may not.
func (s *service) handleForwardAuth(w *exchange, r *http.Request) error {
	rt := s.cfg.Load()
	name := r.PathValue("endpoint")
	ep := rt.forward[name]
	if ep == nil {
		return &apiError{status: http.StatusNotFound, detail: fmt.Sprintf("no forward_auth endpoint named %q is configured", name)}
	}
	f, err := forwardedRequest(r)
	if err != nil {
		return err
	}
	rule := ep.match(f)
	if rule == nil {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	key, err := rule.key(&forwardView{r: r, f: &f, route: rule.pattern})
	var mk *keyfuncs.MissingKeyError
	switch {
	case errors.Is(err, keyfuncs.ErrSkip):
		w.WriteHeader(http.StatusOK)
		return nil
	case errors.As(err, &mk):
		return &apiError{status: mk.Status, field: mk.Source, detail: "the request has no " + mk.Source + " to key its limit by"}
	case err != nil:
		return err
	}
	res, err := s.store.limiter.Check(r.Context(), key, rule.policies, rule.cost, nil)
	if err != nil {
		if r.Context().Err() != nil {
			return nil
		}
		return err
	}
	s.observe(rule.policies, res, rule.cost)
	var buf [128]byte
	if res.Allowed {
		var delay time.Duration // a leaky bucket's: the forwarded request leaves at its rate
		for _, d := range res.Decisions {
			delay = max(delay, d.Delay)
		}
		if delay > 0 && clocksleep.Sleep(r.Context(), clock, delay) != nil {
			return nil // the proxy went away
		}
		rule.set.WriteHeaders(&w.hdr, res.Decisions, res.Binding, buf[:0])
		w.WriteHeader(http.StatusOK)
		return nil
	}
	rule.set.WriteDenial(&w.hdr, res, buf[:0])
	p := fields.Problem{Type: fields.ProblemTypeQuotaExceeded, Title: "Request cannot be satisfied as the assigned quota has been exceeded",
		Status: ep.denyStatus, Detail: "Too many requests; retry after the number of seconds in Retry-After."}
	for i := range res.Decisions {
		if !res.Decisions[i].Allowed {
			p.ViolatedPolicies = append(p.ViolatedPolicies, fields.PolicyName(rule.policies[i]))
		}
	}
	writeJSONAs(w, ep.denyStatus, fields.ContentTypeProblem, &p)
	return nil
}
