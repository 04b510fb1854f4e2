package ratelimit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// TestMisconfigurationIsAnError: every configuration that would compile into
// a limiter that silently limits nothing fails at New with a typed error
// naming the option and the value.
func TestMisconfigurationIsAnError(t *testing.T) {
	t.Parallel()
	p := core.MustParsePolicy("10/1m;name=p")
	key := ratelimit.WithKeyFunc(keyfuncs.RemoteIP)
	plan := func(keyfuncs.Request) (string, error) { return "free", nil }
	for _, tc := range []struct {
		name    string
		opts    []ratelimit.Option
		want    error
		mention string
	}{
		{"no policy at all", []ratelimit.Option{key}, ratelimit.ErrInvalidConfig, "no policy at all"},
		{"lower-case method", []ratelimit.Option{key, ratelimit.WithRoute("get", "/search", p)}, nil, `"get"`},
		{"method inside the pattern", []ratelimit.Option{key, ratelimit.WithRoute("GET", "GET /search", p)}, nil, `WithRoute("GET", "/search")`},
		{"pattern without a slash", []ratelimit.Option{key, ratelimit.WithRoute("GET", "search", p)}, nil, `"/search"`},
		{"empty pattern", []ratelimit.Option{key, ratelimit.WithRoute("GET", "", p)}, nil, "empty"},
		{"method not a token", []ratelimit.Option{key, ratelimit.WithRoute("GE T", "/x", p)}, nil, "not an HTTP method"},
		{"method no router serves", []ratelimit.Option{key, ratelimit.WithRoute("FOO", "/x", p)}, nil, "not an HTTP method"},
		{"method star", []ratelimit.Option{key, ratelimit.WithRoute("*", "/x", p)}, nil, "matches every method"},
		{"method ANY", []ratelimit.Option{key, ratelimit.WithRoute("ANY", "/x", p)}, nil, "matches every method"},
		{"pattern with a space", []ratelimit.Option{key, ratelimit.WithRoute("", "/a b", p)}, nil, "white space"},
		{"plans without a function", []ratelimit.Option{key, ratelimit.WithPlans(nil, map[string][]core.Policy{"free": {p}})}, nil, "plan function"},
		{"empty plan", []ratelimit.Option{key, ratelimit.WithPlans(plan, map[string][]core.Policy{"free": nil})}, nil, `"free" has no policy`},
		{"plan with no name", []ratelimit.Option{key, ratelimit.WithPlans(plan, map[string][]core.Policy{"": {p}})}, nil, "empty name"},
		{"invalid plan policy", []ratelimit.Option{key, ratelimit.WithPolicy(p), ratelimit.WithPlans(plan, map[string][]core.Policy{"free": {{Limit: 0, Window: 1}}})}, core.ErrInvalidPolicy, `plan "free"`},
		{"empty header name", []ratelimit.Option{ratelimit.WithKeyFunc(keyfuncs.Header("")), ratelimit.WithPolicy(p)}, keyfuncs.ErrInvalidOption, `Header("")`},
		{"header name with a colon, composed", []ratelimit.Option{ratelimit.WithKeyFunc(keyfuncs.Compose(keyfuncs.RemoteIP, keyfuncs.Header("X-Key:"))), ratelimit.WithPolicy(p)}, keyfuncs.ErrInvalidOption, `Header("X-Key:")`},
		{"invalid header as a fallback", []ratelimit.Option{ratelimit.WithKeyFunc(keyfuncs.Header("X-Key", keyfuncs.FallbackIfMissing(keyfuncs.Header("a b")))), ratelimit.WithPolicy(p)}, keyfuncs.ErrInvalidOption, `Header("a b")`},
		{"a slot shorter than its renewals can keep", []ratelimit.Option{key, ratelimit.WithPolicy(p, core.MustParsePolicy("4/500ms;algorithm=concurrency;name=inflight"))}, core.ErrInvalidPolicy, `"inflight": window 500ms`},
		{"burst on a fixed window", []ratelimit.Option{key, ratelimit.WithPolicy(core.Policy{Limit: 10, Window: time.Minute, Burst: 20, Algorithm: core.FixedWindow})}, core.ErrInvalidPolicy, "burst 20"},
		{"plans without global policies", []ratelimit.Option{key, ratelimit.WithPlans(plan, map[string][]core.Policy{"free": {p}})}, nil, "WithDenyUnknownPlans"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ratelimit.New(tc.opts...)
			if err == nil || m != nil {
				t.Fatalf("New = %v, nil error: a limiter that limits nothing", m)
			}
			if !errors.Is(err, ratelimit.ErrInvalidConfig) && !errors.Is(err, core.ErrInvalidPolicy) {
				t.Fatalf("error %v does not match ErrInvalidConfig", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("error %q does not mention %q", err, tc.mention)
			}
			var re *ratelimit.RouteError
			if strings.HasPrefix(tc.name, "pattern") || strings.Contains(tc.name, "method") {
				if !errors.As(err, &re) {
					t.Fatalf("error %T, want a *ratelimit.RouteError", err)
				}
			}
		})
	}
	// The valid forms still build.
	for _, opts := range [][]ratelimit.Option{
		{key, ratelimit.WithPolicy(p)},
		{key, ratelimit.WithRoute("GET", "/search", p)},
		{key, ratelimit.WithRoute("", "/users/{id}", p), ratelimit.WithRoute("PROPFIND", "/x", p)},
		{key, ratelimit.WithPlans(plan, map[string][]core.Policy{"free": {p}}), ratelimit.WithPolicy(p)},
		{key, ratelimit.WithPlans(plan, map[string][]core.Policy{"free": {p}}), ratelimit.WithDenyUnknownPlans()},
	} {
		if _, err := ratelimit.New(opts...); err != nil {
			t.Errorf("valid configuration refused: %v", err)
		}
	}
}

// TestErrorMessagesSayWhatIsWrong pins the wording of errors that once
// repeated a prefix, lost the input, gave advice for another call or were a
// nil dereference.
func TestErrorMessagesSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	key := ratelimit.WithKeyFunc(keyfuncs.RemoteIP)
	_, err := core.ParsePolicy("0/1m")
	mustSay(t, err, core.ErrInvalidPolicy, `ratelimit: invalid policy "0/1m": limit 0: must be at least 1`)
	_, err = ratelimit.New(key, ratelimit.WithPolicy(core.MustParsePolicy("1/1s")), ratelimit.WithRoute("GET", "/x"))
	mustSay(t, err, ratelimit.ErrInvalidConfig, `ratelimit: invalid middleware configuration: WithRoute("GET", "/x") has no policy; give it at least one`)
	m := must.Do(ratelimit.New(key, ratelimit.WithPolicy(core.MustParsePolicy("1/1s"))))
	_, err = m.Route()
	mustSay(t, err, ratelimit.ErrInvalidConfig, "Route needs at least one policy for the route")
	var nilM *ratelimit.Middleware
	_, err = nilM.Route(core.MustParsePolicy("1/1s"))
	mustSay(t, err, ratelimit.ErrInvalidConfig, "a nil *Middleware")
	mustSay(t, nilM.CheckPatterns(func(_, _ string) string { return "" }), ratelimit.ErrInvalidConfig, "a nil *Middleware")
}

func mustSay(t *testing.T, err, sentinel error, text string) {
	t.Helper()
	if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), text) || strings.Count(err.Error(), "ratelimit:") > 1 {
		t.Errorf("error %v, want %v saying %q, with one prefix", err, sentinel, text)
	}
}
