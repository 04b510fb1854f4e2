package ratelimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/adapter"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/sink"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

func newLimiter(t *testing.T) (*core.Limiter, *core.ManualClock) {
	t.Helper()
	st := must.Do(memstore.New())
	clk := core.NewManualClock(t0)
	return core.NewLimiter(st, core.WithClock(clk)), clk
}

// keyed is mustNew on lim, with requests keyed by their X-Key header
// (byHeader).
func keyed(t *testing.T, lim *core.Limiter, opts ...ratelimit.Option) *ratelimit.Middleware {
	t.Helper()
	return mustNew(t, append([]ratelimit.Option{ratelimit.WithLimiter(lim), ratelimit.WithKeyFunc(byHeader)}, opts...)...)
}

func byHeader(r keyfuncs.Request) (string, error) {
	if k := r.Header("X-Key"); k != "" {
		return k, nil
	}
	return "", &keyfuncs.MissingKeyError{Source: "header X-Key", Status: http.StatusUnauthorized}
}

func req(method, route, key string) *keyfuncstest.Request {
	r := keyfuncstest.New("192.0.2.1:1234", "X-Key", key)
	r.Verb, r.Pattern, r.URLPath = method, route, route
	return r
}

func mustNew(t *testing.T, opts ...ratelimit.Option) *ratelimit.Middleware {
	t.Helper()
	m, err := ratelimit.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// failing is a Backend whose every call fails with an error carrying
// internal details that must never reach a client.
type failing struct{}

var errSecret = errors.New("dial tcp 10.1.2.3:6379: connection refused (secret-internal-detail)")

func (failing) Do(context.Context, []core.Item, time.Time, []core.Decision) error {
	return errSecret
}

func TestKeyFuncRequired(t *testing.T) {
	t.Parallel()
	_, err := ratelimit.New(ratelimit.WithPolicy(core.MustParsePolicy("1/s")))
	if !errors.Is(err, ratelimit.ErrInvalidConfig) || !strings.Contains(err.Error(), "WithKeyFunc") {
		t.Fatalf("err = %v, want ErrInvalidConfig", err)
	}
}

func TestConstructionErrors(t *testing.T) {
	t.Parallel()
	kf := ratelimit.WithKeyFunc(byHeader)
	for name, opts := range map[string][]ratelimit.Option{
		"bad policy":   {kf, ratelimit.WithPolicy(core.Policy{Limit: -1, Window: time.Second})},
		"bad route":    {kf, ratelimit.WithRoute("GET", "/x", core.Policy{Limit: 1})},
		"empty route":  {kf, ratelimit.WithRoute("GET", "", core.MustParsePolicy("1/s"))},
		"twice":        {kf, ratelimit.WithRoute("GET", "/x", core.MustParsePolicy("1/s")), ratelimit.WithRoute("GET", "/x", core.MustParsePolicy("2/s"))},
		"nil limiter":  {kf, ratelimit.WithLimiter(nil)},
		"header mode":  {kf, ratelimit.WithHeaders(ratelimit.HeaderMode(42))},
		"failure mode": {kf, ratelimit.WithFailureMode(ratelimit.FailureMode(9))},
		"same names":   {kf, ratelimit.WithPolicy(core.MustParsePolicy("1/s;name=a"), core.MustParsePolicy("2/s;name=a"))},
	} {
		if _, err := ratelimit.New(opts...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestAllowThenDenyThenRecover(t *testing.T) {
	t.Parallel()
	lim, clk := newLimiter(t)
	p := core.MustParsePolicy("2/10s;algorithm=fixed_window;name=api")
	m := keyed(t, lim, ratelimit.WithPolicy(p))
	clk.Set(t0.Add(3 * time.Second)) // 7 s left in the window

	for i, wantR := range []string{`"api";r=1;t=7`, `"api";r=0;t=7`} {
		rec := sink.NewRecorder()
		if v := m.Handle(context.Background(), req("GET", "/", "k"), rec, nil); !v {
			t.Fatalf("request %d: %v", i, v)
		}
		if got := rec.H.Get("Ratelimit"); got != wantR {
			t.Errorf("request %d: RateLimit %q, want %q", i, got, wantR)
		}
		if got := rec.H.Get("Ratelimit-Policy"); got != `"api";q=2;w=10` {
			t.Errorf("RateLimit-Policy %q", got)
		}
		if rec.Status != 0 {
			t.Errorf("allowed request written: %d", rec.Status)
		}
	}
	clk.Advance(500 * time.Millisecond) // 6.5 s left: rounds up to 7
	rec := sink.NewRecorder()
	if v := m.Handle(context.Background(), req("GET", "/", "k"), rec, nil); v {
		t.Fatal("third request not denied")
	}
	if rec.Status != 429 || rec.ContentType != fields.ContentTypeProblem {
		t.Fatalf("status %d, content type %q", rec.Status, rec.ContentType)
	}
	if got := rec.H.Get("Retry-After"); got != "7" || rec.H.Get("Ratelimit") != `"api";r=0;t=7` {
		t.Errorf("Retry-After %q, RateLimit %q", got, rec.H.Get("Ratelimit"))
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["type"] != fields.ProblemTypeQuotaExceeded || doc["status"] != float64(429) {
		t.Errorf("problem %s", rec.Body)
	}
	if v, _ := doc["violated-policies"].([]any); len(v) != 1 || v[0] != "api" {
		t.Errorf("violated-policies %v", doc["violated-policies"])
	}
	// Another key is independent.
	if v := m.Handle(context.Background(), req("GET", "/", "other"), sink.NewRecorder(), nil); !v {
		t.Error("other key denied")
	}
	clk.Advance(6500 * time.Millisecond)
	if v := m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), nil); !v {
		t.Error("not admitted after Retry-After")
	}
}

func TestMultiPolicyIsAtomic(t *testing.T) {
	t.Parallel()
	lim, clk := newLimiter(t)
	perSec := core.MustParsePolicy("2/1s;algorithm=fixed_window;name=second")
	perMin := core.MustParsePolicy("3/1m;algorithm=fixed_window;name=minute")
	m := keyed(t, lim, ratelimit.WithPolicy(perSec, perMin))
	ctx := context.Background()
	for i := range 2 {
		if !m.Handle(ctx, req("GET", "/", "k"), sink.NewRecorder(), nil) {
			t.Fatalf("request %d denied", i)
		}
	}
	rec := sink.NewRecorder()
	if m.Handle(ctx, req("GET", "/", "k"), rec, nil) {
		t.Fatal("third request in one second admitted")
	}
	// The per-second denial consumed nothing from the per-minute quota.
	if got := rec.H.Get("Ratelimit"); got != `"second";r=0;t=1, "minute";r=1;t=60` {
		t.Errorf("RateLimit %q", got)
	}
	if !strings.Contains(string(rec.Body), `"violated-policies":["second"]`) {
		t.Errorf("body %s", rec.Body)
	}
	clk.Advance(time.Second)
	rec = sink.NewRecorder()
	if !m.Handle(ctx, req("GET", "/", "k"), rec, nil) {
		t.Fatal("denied after the second passed")
	}
	if got := rec.H.Get("Ratelimit"); got != `"second";r=1;t=1, "minute";r=0;t=59` {
		t.Errorf("RateLimit %q", got)
	}
}

// checkedPolicies returns the policies m checks a request with this method
// and route pattern against, as its observers see them. The probe request
// has a key of its own.
func checkedPolicies(t *testing.T, m *ratelimit.Middleware, method, route string) []core.Policy {
	t.Helper()
	var got []core.Policy
	probe, err := m.With(ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { got = e.Policies }))
	if err != nil {
		t.Fatal(err)
	}
	probe.Handle(context.Background(), req(method, route, "probe "+method+" "+route), sink.NewRecorder(), nil)
	return got
}

func TestRouteTable(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	global := core.MustParsePolicy("100/1m;name=global")
	login := core.MustParsePolicy("1/1m;name=login")
	anyAdmin := core.MustParsePolicy("5/1m;name=admin")
	m := keyed(t, lim, ratelimit.WithPolicy(global),
		ratelimit.WithRoute("POST", "/login", login, global),
		ratelimit.WithRoute("", "/admin", anyAdmin))
	for _, c := range []struct {
		method, route string
		want          []core.Policy
	}{
		{"POST", "/login", []core.Policy{login, global}},
		{"GET", "/login", []core.Policy{global}},
		{"DELETE", "/admin", []core.Policy{anyAdmin}},
		{"GET", "", []core.Policy{global}},
	} {
		got := checkedPolicies(t, m, c.method, c.route)
		if len(got) != len(c.want) {
			t.Errorf("%s %s: %v", c.method, c.route, got)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s %s: %v", c.method, c.route, got)
			}
		}
	}
	ctx := context.Background()
	if !m.Handle(ctx, req("POST", "/login", "k"), sink.NewRecorder(), nil) {
		t.Fatal("first login denied")
	}
	if m.Handle(ctx, req("POST", "/login", "k"), sink.NewRecorder(), nil) {
		t.Fatal("second login admitted")
	}
	rec := sink.NewRecorder()
	if !m.Handle(ctx, req("GET", "/home", "k"), rec, nil) {
		t.Fatal("home denied")
	}
	// The admitted login counted against the shared global quota, the denied one did not.
	if got := rec.H.Get("Ratelimit"); got != `"global";r=98;t=2` {
		t.Errorf("RateLimit %q", got)
	}
}

func TestRouteOnlyLimitsListedRoutes(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	var seen []ratelimit.Outcome
	m := keyed(t, lim,
		ratelimit.WithRoute("POST", "/login", core.MustParsePolicy("1/1m")),
		ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { seen = append(seen, e.Outcome) }))
	rec := sink.NewRecorder()
	for range 3 {
		if !m.Handle(context.Background(), req("GET", "/", "k"), rec, nil) {
			t.Fatal("unlisted route limited")
		}
	}
	if len(rec.H) != 0 || len(seen) != 3 || seen[0] != ratelimit.OutcomeSkipped {
		t.Errorf("headers %v, outcomes %v", rec.H, seen)
	}
	m.Handle(context.Background(), req("POST", "/login", "k"), rec, nil)
	if got := rec.H.Get("Ratelimit"); got != `"1/1m";r=0;t=60` {
		t.Errorf("generated name: RateLimit %q", got)
	}
}

func TestDerivedRouteMiddleware(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	m := keyed(t, lim, ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=g")),
		ratelimit.WithRoute("GET", "/x", core.MustParsePolicy("50/1m;name=x")))
	rm, err := m.Route(core.MustParsePolicy("1/1m;name=strict"))
	if err != nil {
		t.Fatal(err)
	}
	if rm.CheckPatterns(func(string, string) string { return "a route table" }) != nil {
		t.Error("route middleware keeps the route table")
	}
	if !rm.Handle(context.Background(), req("GET", "/x", "k"), sink.NewRecorder(), nil) ||
		rm.Handle(context.Background(), req("GET", "/x", "k"), sink.NewRecorder(), nil) {
		t.Error("route middleware does not apply its own policy")
	}
	if d, err := lim.Peek(context.Background(), "k", core.MustParsePolicy("1/1m;name=strict")); err != nil || d.Remaining != 0 {
		t.Errorf("the route's check is not in m's limiter: %+v %v", d, err)
	}
	if _, err := m.Route(core.Policy{}); !errors.Is(err, core.ErrInvalidPolicy) {
		t.Errorf("invalid route policy: %v", err)
	}
}

func TestSkipRules(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	p := core.MustParsePolicy("1/1m")
	skipHealth := func(r keyfuncs.Request) bool { return r.Path() == "/healthz" }
	kf := func(r keyfuncs.Request) (string, error) {
		if r.Header("X-Key") == "internal" {
			return "", keyfuncs.ErrSkip
		}
		return byHeader(r)
	}
	m := mustNew(t, ratelimit.WithLimiter(lim), ratelimit.WithKeyFunc(kf), ratelimit.WithPolicy(p), ratelimit.WithSkip(skipHealth),
		ratelimit.WithCost(func(r keyfuncs.Request) int {
			if r.Method() == "OPTIONS" {
				return 0
			}
			return 1
		}))
	for _, r := range []*keyfuncstest.Request{req("GET", "/healthz", "k"), req("GET", "/", "internal"), req("OPTIONS", "/", "k")} {
		for range 3 {
			rec := sink.NewRecorder()
			if !m.Handle(context.Background(), r, rec, nil) || len(rec.H) != 0 {
				t.Fatalf("%s %s %s: limited or headers %v", r.Verb, r.URLPath, r.Header("X-Key"), rec.H)
			}
		}
	}
}

func TestMissingKeyRefused(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	var got ratelimit.Event
	m := keyed(t, lim, ratelimit.WithPolicy(core.MustParsePolicy("1/1m")),
		ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { got = e }))
	rec := sink.NewRecorder()
	if m.Handle(context.Background(), req("GET", "/", ""), rec, nil) {
		t.Fatal("missing key admitted")
	}
	if rec.Status != 401 || !strings.Contains(string(rec.Body), "header X-Key") {
		t.Errorf("status %d body %s", rec.Status, rec.Body)
	}
	if got.Outcome != ratelimit.OutcomeRefused {
		t.Errorf("outcome %v", got.Outcome)
	}
}

func TestUnusableKeyAndCost(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	long := strings.Repeat("k", core.MaxKeyLen+1)
	m := keyed(t, lim, ratelimit.WithPolicy(core.MustParsePolicy("5/1m")),
		ratelimit.WithCost(func(r keyfuncs.Request) int { return len(r.Path()) }))
	rec := sink.NewRecorder()
	if m.Handle(context.Background(), req("GET", "/", long), rec, nil) || rec.Status != 400 {
		t.Errorf("over-long key: status %d", rec.Status)
	}
	rec = sink.NewRecorder()
	if m.Handle(context.Background(), req("GET", "/123456", "k"), rec, nil) || rec.Status != 413 {
		t.Errorf("cost above capacity: status %d", rec.Status)
	}
}

func TestFailureModes(t *testing.T) {
	t.Parallel()
	lim := core.NewLimiter(failing{})
	for _, c := range []struct {
		mode    ratelimit.FailureMode
		verdict bool
		status  int
		outcome ratelimit.Outcome
	}{
		{ratelimit.FailOpen, true, 0, ratelimit.OutcomeFailedOpen},
		{ratelimit.FailClosed, false, 503, ratelimit.OutcomeFailedClosed},
	} {
		t.Run(c.outcome.String(), func(t *testing.T) {
			var ev ratelimit.Event
			m := keyed(t, lim, ratelimit.WithPolicy(core.MustParsePolicy("1/1m")),
				ratelimit.WithFailureMode(c.mode), ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { ev = e }))
			rec := sink.NewRecorder()
			if v := m.Handle(context.Background(), req("GET", "/", "k"), rec, nil); v != c.verdict {
				t.Fatalf("verdict %v", v)
			}
			if rec.Status != c.status || len(rec.H) != 0 {
				t.Errorf("status %d headers %v", rec.Status, rec.H)
			}
			if strings.Contains(string(rec.Body), "secret") || strings.Contains(string(rec.Body), "10.1.2.3") {
				t.Errorf("internal error text in body: %s", rec.Body)
			}
			if ev.Outcome != c.outcome || !errors.Is(ev.Err, errSecret) {
				t.Errorf("event %v %v", ev.Outcome, ev.Err)
			}
		})
	}
}

// TestCallerFunctionErrorIs500: a failing key function or a negative cost
// is a bug of the caller's code, answered 500 under either failure mode:
// fail-open is for a store that is down, not an unlimited pass.
func TestCallerFunctionErrorIs500(t *testing.T) {
	t.Parallel()
	broken := func(keyfuncs.Request) (string, error) { return "", errSecret }
	negative := func(keyfuncs.Request) int { return -1 }
	for _, mode := range []ratelimit.FailureMode{ratelimit.FailOpen, ratelimit.FailClosed} {
		for name, opts := range map[string][]ratelimit.Option{
			"key function":  {ratelimit.WithKeyFunc(broken)},
			"negative cost": {ratelimit.WithKeyFunc(byHeader), ratelimit.WithCost(negative)},
		} {
			lim, _ := newLimiter(t)
			var ev ratelimit.Event
			m := mustNew(t, append(opts, ratelimit.WithLimiter(lim), ratelimit.WithPolicy(core.MustParsePolicy("1/1m")), ratelimit.WithFailureMode(mode),
				ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { ev = e }))...)
			rec := sink.NewRecorder()
			if m.Handle(context.Background(), req("GET", "/", "k"), rec, nil) || rec.Status != 500 || strings.Contains(string(rec.Body), "secret") {
				t.Errorf("%s, fail %v: status %d body %s", name, mode, rec.Status, rec.Body)
			}
			if ev.Outcome != ratelimit.OutcomeRefused || ev.Err == nil {
				t.Errorf("%s, fail %v: event %v %v", name, mode, ev.Outcome, ev.Err)
			}
		}
	}
}

func TestCustomHandlers(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	m := keyed(t, lim, ratelimit.WithPolicy(core.MustParsePolicy("1/1m;name=p")),
		ratelimit.WithHeaders(ratelimit.HeadersXRateLimit),
		ratelimit.WithDeniedHandler(func(_ keyfuncs.Request, res adapter.Response, r core.Result) error {
			return res.Write(http.StatusServiceUnavailable, "text/plain", []byte("slow down: "+r.Policies[r.Binding].Name))
		}))
	m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), nil)
	rec := sink.NewRecorder()
	m.Handle(context.Background(), req("GET", "/", "k"), rec, nil)
	if rec.Status != 503 || string(rec.Body) != "slow down: p" || rec.H.Get("Retry-After") != "60" || rec.H.Get("X-Ratelimit-Remaining") != "0" {
		t.Errorf("status %d body %q headers %v", rec.Status, rec.Body, rec.H)
	}
}

func TestShapingHoldsLeakyBucketRequests(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	var waited []time.Duration
	m := keyed(t, lim,
		ratelimit.WithPolicy(core.MustParsePolicy("10/1s;burst=5;algorithm=leaky_bucket")),
		ratelimit.WithShaping(func(_ context.Context, d time.Duration) error { waited = append(waited, d); return nil }))
	for range 3 {
		if !m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), nil) {
			t.Fatal("denied")
		}
	}
	if len(waited) == 0 || waited[len(waited)-1] <= 0 {
		t.Errorf("no shaping delay: %v", waited)
	}
	m2, _ := m.With(ratelimit.WithShaping(func(ctx context.Context, d time.Duration) error { return context.Canceled }))
	if m2.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), nil) {
		t.Error("a cancelled wait must end the request")
	}
}

func TestDefaultLimiterWorks(t *testing.T) {
	t.Parallel()
	m := mustNew(t, ratelimit.WithKeyFunc(byHeader), ratelimit.WithPolicy(core.MustParsePolicy("1/1h")))
	if !m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), nil) ||
		m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), nil) {
		t.Error("default memory limiter does not limit")
	}
}

func TestConcurrentHandleCountsExactly(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	m := keyed(t, lim, ratelimit.WithPolicy(core.MustParsePolicy("50/1m"), core.MustParsePolicy("80/1h")))
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), nil) {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if allowed != 50 {
		t.Errorf("%d admitted, want 50", allowed)
	}
}

func TestHandlersThatWriteNothingStillRefuse(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	m := keyed(t, lim, ratelimit.WithPolicy(core.MustParsePolicy("1/1m")),
		ratelimit.WithDeniedHandler(func(keyfuncs.Request, adapter.Response, core.Result) error { return nil }),
		ratelimit.WithErrorHandler(func(keyfuncs.Request, adapter.Response, int, error) error { return nil }))
	m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), nil)
	rec := sink.NewRecorder()
	if m.Handle(context.Background(), req("GET", "/", "k"), rec, nil) || rec.Status != 429 {
		t.Errorf("denied: status %d", rec.Status)
	}
	rec = sink.NewRecorder()
	if m.Handle(context.Background(), req("GET", "/", ""), rec, nil) || rec.Status != 401 {
		t.Errorf("missing key: status %d", rec.Status)
	}
}

func TestWithAlgorithm(t *testing.T) {
	t.Parallel()
	lim, clk := newLimiter(t)
	m := keyed(t, lim, ratelimit.WithAlgorithm(core.FixedWindow),
		ratelimit.WithPolicy(core.MustParsePolicy("2/10s;name=fw"), core.MustParsePolicy("100/1h;algorithm=gcra;name=g")))
	ps := checkedPolicies(t, m, "GET", "/")
	if ps[0].Algorithm != core.FixedWindow || ps[1].Algorithm != core.GCRA {
		t.Fatalf("policies %v", ps)
	}
	clk.Advance(4 * time.Second) // a fixed window has 6 s left; GCRA would say 5 s
	rec := sink.NewRecorder()
	m.Handle(context.Background(), req("GET", "/", "k"), rec, nil)
	if got := rec.H.Get("Ratelimit"); !strings.HasPrefix(got, `"fw";r=1;t=6`) {
		t.Errorf("RateLimit %q", got)
	}
	if _, err := ratelimit.New(ratelimit.WithKeyFunc(byHeader), ratelimit.WithAlgorithm("bogus")); !errors.Is(err, ratelimit.ErrInvalidConfig) {
		t.Errorf("unknown algorithm: %v", err)
	}
}

// TestDefaultStoreIsBounded: the store a Middleware makes for itself holds
// at most a million states, so that a flood of new keys cannot exhaust
// memory. A new key past them meets the failure mode; a key it holds is
// still limited. (Not parallel: it holds a million states.)
func TestDefaultStoreIsBounded(t *testing.T) {
	p := core.MustParsePolicy("1/1h;name=p")
	m := mustNew(t, ratelimit.WithKeyFunc(byHeader), ratelimit.WithPolicy(p), ratelimit.WithFailureMode(ratelimit.FailClosed))
	ctx := context.Background()
	for i := range 1_000_000 {
		if _, err := m.Limiter().Allow(ctx, "k"+strconv.Itoa(i), p); err != nil {
			t.Fatalf("state %d: %v", i+1, err)
		}
	}
	for key, want := range map[string]int{"new": http.StatusServiceUnavailable, "k7": http.StatusTooManyRequests} {
		rec := sink.NewRecorder()
		if m.Handle(ctx, req("GET", "/", key), rec, nil) || rec.Status != want {
			t.Errorf("key %q with a million states held: status %d, want %d", key, rec.Status, want)
		}
	}
}

// FuzzMiddleware drives Handle with any key, route and cost: it never
// panics, a request is admitted, denied (429 with Retry-After), refused
// with a 4xx, or, for a negative cost (a bug of the cost function),
// answered 500, and every field written parses back and carries no
// control character.
func FuzzMiddleware(f *testing.F) {
	f.Add("client", "/login", 1, int64(0))
	f.Add("a\r\nSet-Cookie: x", "/", 3, int64(1500))
	f.Add("", "", 0, int64(-1))
	f.Add("\x00\xff", "/login", 99, int64(60_000_000))
	f.Fuzz(func(t *testing.T, key, route string, cost int, advanceMicros int64) {
		clk := core.NewManualClock(time.Date(2026, 5, 5, 5, 5, 5, 0, time.UTC))
		lim := core.NewLimiter(must.Do(memstore.New()), core.WithClock(clk))
		m, err := ratelimit.New(ratelimit.WithLimiter(lim),
			ratelimit.WithKeyFunc(func(keyfuncs.Request) (string, error) { return key, nil }),
			ratelimit.WithCost(func(keyfuncs.Request) int { return cost }),
			ratelimit.WithPolicy(core.MustParsePolicy("3/1s;name=s"), core.MustParsePolicy("10/1m;algorithm=sliding_window;name=m")),
			ratelimit.WithRoute("POST", "/login", core.MustParsePolicy("2/1m;algorithm=token_bucket")),
			ratelimit.WithShaping(nil))
		if err != nil {
			t.Fatal(err)
		}
		r := keyfuncstest.New("192.0.2.1:1")
		r.Verb, r.Pattern = "POST", route
		for range 4 {
			rec := sink.NewRecorder()
			v := m.Handle(context.Background(), r, rec, nil)
			switch {
			case v && rec.Status == 0:
			case !v && rec.Status == 429:
				if rec.H.Get("Retry-After") == "" || rec.H.Get("Retry-After") == "0" {
					t.Fatalf("429 without a positive Retry-After: %v", rec.H)
				}
			case !v && rec.Status >= 400 && rec.Status < 500:
			case !v && rec.Status == 500 && cost < 0:
			default:
				t.Fatalf("verdict %v status %d", v, rec.Status)
			}
			for k, vs := range rec.H {
				for _, s := range vs {
					if strings.ContainsAny(s, "\r\n\x00") {
						t.Fatalf("%s carries a control character: %q", k, s)
					}
				}
				if k == "Ratelimit" || k == "Ratelimit-Policy" {
					if _, err := httpsfv.UnmarshalList(vs); err != nil {
						t.Fatalf("%s %q: %v", k, vs, err)
					}
				}
			}
			if advanceMicros > 0 {
				clk.Advance(time.Duration(advanceMicros%(120_000_000)) * time.Microsecond)
			}
		}
	})
}

// TestConstructorsStartNoGoroutine builds every form the README shows 100
// times, never closing anything, and requires that no goroutine is left: a
// default Middleware's memory store reclaims on the request path instead of
// in a sweeper nobody could stop. The adapters' modules repeat this for
// ginrl.New, echorl.New and fiberrl.New.
func TestConstructorsStartNoGoroutine(t *testing.T) {
	existing := goleak.IgnoreCurrent()
	opts := []ratelimit.Option{
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
	}
	ctx := context.Background()
	var keep []any
	for range 100 {
		m, err := ratelimit.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		mw, err := stdhttp.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		h := mw(http.NewServeMux())
		fallback := must.Do(resilient.New(must.Do(memstore.New()), resilient.WithFallback(must.Do(memstore.New()))))
		if _, err := core.NewLimiter(fallback).Allow(ctx, "k", core.MustParsePolicy("1/s")); err != nil {
			t.Fatal(err)
		}
		keep = append(keep, m, h, fallback)
	}
	// goleak, not a count of runtime.NumGoroutine: the count includes the
	// runtime's finalizer and cleanup goroutines while they run user code,
	// which a collection during the loop may start for objects of earlier
	// tests. goleak names each goroutine it finds and waits for those that
	// are on their way out.
	goleak.VerifyNone(t, existing)
	runtime.KeepAlive(keep)
}

// TestShapingHasACeiling: under 100/1m a leaky bucket would hold the 99th
// queued request for almost a minute; the middleware holds none longer than
// its MaxDelay (1s by default) and denies the rest with the exact
// Retry-After, consuming nothing.
func TestShapingHasACeiling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  []ratelimit.Option
		limit time.Duration
	}{
		{"default", nil, time.Second},
		{"WithMaxDelay", []ratelimit.Option{ratelimit.WithMaxDelay(3 * time.Second)}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			var held []time.Duration
			lim := core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock))
			m, err := ratelimit.New(append([]ratelimit.Option{
				ratelimit.WithLimiter(lim),
				ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
				ratelimit.WithPolicy(core.MustParsePolicy("100/1m;algorithm=leaky_bucket;name=shaped")),
				ratelimit.WithShaping(func(_ context.Context, d time.Duration) error { held = append(held, d); return nil }),
			}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			var denied *sink.Recorder
			admitted := 0
			for range 100 {
				res := sink.NewRecorder()
				if !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), res, nil) {
					denied = res
					break
				}
				admitted++
			}
			for _, d := range held {
				if d > tc.limit {
					t.Fatalf("held a request %v, more than the ceiling %v", d, tc.limit)
				}
			}
			// 600 ms apart: the ceiling admits floor(limit/600ms)+1 at once.
			if want := int(tc.limit/(600*time.Millisecond)) + 1; admitted != want {
				t.Fatalf("admitted %d at once, want %d", admitted, want)
			}
			if denied == nil || denied.Status != 429 {
				t.Fatal("no 429 once the hold would exceed the ceiling")
			}
			ra := denied.H.Get("Retry-After")
			if ra == "" || ra == "0" {
				t.Fatalf("Retry-After %q", ra)
			}
			// At RetryAfter the same request is admitted, within the ceiling.
			d, err := lim.Peek(context.Background(), "k", shaped(tc.limit))
			if err != nil || d.Allowed {
				t.Fatalf("peek before: %+v %v", d, err)
			}
			clock.Advance(d.RetryAfter)
			if !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), sink.NewRecorder(), nil) {
				t.Fatal("denied at its exact RetryAfter")
			}
			if last := held[len(held)-1]; last > tc.limit {
				t.Fatalf("held %v at RetryAfter", last)
			}
		})
	}
	if _, err := ratelimit.New(ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithPolicy(core.MustParsePolicy("1/s")), ratelimit.WithMaxDelay(-time.Second)); !errors.Is(err, ratelimit.ErrInvalidConfig) {
		t.Fatalf("WithMaxDelay(-1s): %v", err)
	}
}

// shaped is the policy of TestShapingHasACeiling as the middleware checks
// it: with the ceiling limit as its MaxDelay.
func shaped(limit time.Duration) core.Policy {
	p := core.MustParsePolicy("100/1m;algorithm=leaky_bucket;name=shaped")
	p.MaxDelay = limit
	return p
}

// TestNoShapingMeters: with WithShaping(nil) nothing is held, so no ceiling
// applies: a leaky bucket 3/1m admits its capacity at once, as the stores
// do, and then denies with the exact Retry-After.
func TestNoShapingMeters(t *testing.T) {
	t.Parallel()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := must.Do(ratelimit.New(
		ratelimit.WithLimiter(core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock))),
		ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
		ratelimit.WithPolicy(core.MustParsePolicy("3/1m;algorithm=leaky_bucket")),
		ratelimit.WithShaping(nil)))
	for i := range 3 {
		if v := m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), sink.NewRecorder(), nil); !v {
			t.Fatalf("request %d denied without shaping", i+1)
		}
	}
	res := sink.NewRecorder()
	if m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), res, nil) || res.Status != 429 || res.H.Get("Retry-After") != "20" {
		t.Fatalf("fourth request: %d, Retry-After %q; want 429 after 20 s", res.Status, res.H.Get("Retry-After"))
	}
	clock.Advance(20 * time.Second)
	if !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), sink.NewRecorder(), nil) {
		t.Fatal("denied at its Retry-After")
	}
}

// TestDefaultShaping: without WithShaping, an admitted request is held on a
// timer for its delay, then goes on; one whose context ends during its hold
// ends there, without calling the next handler or writing a response.
func TestDefaultShaping(t *testing.T) {
	lim, _ := newLimiter(t) // a manual clock: each request queues behind the last
	shaped := func(policy string) *ratelimit.Middleware {
		return must.Do(ratelimit.New(ratelimit.WithLimiter(lim), ratelimit.WithKeyFunc(keyfuncs.Constant(policy)),
			ratelimit.WithPolicy(core.MustParsePolicy(policy))))
	}
	calls := 0
	next := func(context.Context) int { calls++; return 200 }
	m := shaped("1000/1s;algorithm=leaky_bucket;name=fast")
	for i := range 2 { // the second is held 1 ms on the timer
		if res := sink.NewRecorder(); !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), res, next) || res.Status != 0 {
			t.Fatalf("request %d not passed on (status %d)", i, res.Status)
		}
	}
	if calls != 2 {
		t.Fatalf("next called %d times, want 2", calls)
	}

	slow := "2/1m;algorithm=leaky_bucket;max_delay=1m;name=slow" // the second is held 30 s
	m = shaped(slow)
	if !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), sink.NewRecorder(), next) {
		t.Fatal("the first request was held")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan bool)
	res := sink.NewRecorder()
	go func() { done <- m.Handle(ctx, keyfuncstest.New("192.0.2.1:1"), res, next) }()
	deadline := time.Now().Add(10 * time.Second)
	for remaining(t, lim, slow, core.MustParsePolicy(slow)) != 0 { // cancel once it is charged, that is, held
		if time.Now().After(deadline) {
			t.Fatal("the second request was not charged within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if passed := <-done; passed || calls != 3 || res.Status != 0 {
		t.Fatalf("a request whose context ended during its hold: passed %v, next called %d times (want 3), status %d", passed, calls, res.Status)
	}
}
