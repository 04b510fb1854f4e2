package httpsuite

import (
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// Run runs the conformance suite against a. Every check uses a manual
// clock; nothing sleeps.
func Run(t *testing.T, a Adapter) {
	tests := []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"AllowDenyRetry", testAllowDenyRetry},
		{"HeaderModes", testHeaderModes},
		{"MultiPolicyAtomic", testMultiPolicy},
		{"RouteTable", testRouteTable},
		{"PerRouteMiddleware", testPerRoute},
		{"RouteAfterGlobal", testRouteAfterGlobal},
		{"CountIf", testCountIf},
		{"Settle", testSettle},
		{"UsageReset", testUsageReset},
		{"Concurrency", testConcurrency},
		{"Skip", testSkip},
		{"FailOpen", testFailOpen},
		{"FailClosed", testFailClosed},
		{"MissingKey", testMissingKey},
		{"CostAboveCapacity", testCostAboveCapacity},
		{"SameKeys", testSameKeys},
		{"SpoofedForwardedFor", testSpoofedForwardedFor},
		{"UnsafeKeyBytes", testUnsafeKeyBytes},
		{"HeadFollowsGetRoute", testHeadFollowsGet},
		{"KeyFromIdentity", testKeyFromIdentity},
		{"PlansPerCaller", testPlans},
		{"NativeRequest", testNative},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newEnv(t, a)) })
	}
}

func testAllowDenyRetry(t *testing.T, e *env) {
	api := core.MustParsePolicy("2/10s;algorithm=fixed_window;name=api")
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(api))})
	for i, r := range []int64{1, 0} {
		res := e.do(h, request{method: "GET", path: "/", key: "alice"})
		res.wantStatus(t, "request "+strconv.Itoa(i+1), http.StatusOK)
		res.wantList(t, "RateLimit-Policy", member{"api", map[string]int64{"q": 2, "w": 10}})
		res.wantList(t, "RateLimit", member{"api", map[string]int64{"r": r, "t": 7}})
		if v := res.header.Values("Retry-After"); len(v) > 0 {
			t.Fatalf("Retry-After %q on an admitted request", v)
		}
	}
	e.clock.Advance(500 * time.Millisecond) // 6.5 s left: rounded up to 7
	res := e.do(h, request{method: "GET", path: "/", key: "alice"})
	res.wantStatus(t, "third request", http.StatusTooManyRequests)
	res.wantList(t, "RateLimit", member{"api", map[string]int64{"r": 0, "t": 7}})
	if ra := parseInt(t, res.header, "Retry-After"); ra != 7 {
		t.Fatalf("Retry-After %d, want 7, the t of the binding policy", ra)
	}
	p := parseProblem(t, res)
	if p.Type != fields.ProblemTypeQuotaExceeded || len(p.Violated) != 1 || p.Violated[0] != "api" {
		t.Fatalf("problem %+v", p)
	}
	// Another key has its own quota.
	e.do(h, request{method: "GET", path: "/", key: "bob"}).wantStatus(t, "other key", http.StatusOK)
	// After Retry-After seconds the same request succeeds.
	e.clock.Advance(7 * time.Second)
	res = e.do(h, request{method: "GET", path: "/", key: "alice"})
	res.wantStatus(t, "after Retry-After", http.StatusOK)
	res.wantList(t, "RateLimit", member{"api", map[string]int64{"r": 1, "t": 10}})
}

func testHeaderModes(t *testing.T, e *env) {
	sec := core.MustParsePolicy("2/1s;algorithm=fixed_window;name=second")
	hour := core.MustParsePolicy("1000/1h;algorithm=fixed_window;name=hour")
	for _, mode := range []ratelimit.HeaderMode{ratelimit.HeadersDraft07, ratelimit.HeadersDraft06, ratelimit.HeadersXRateLimit, ratelimit.HeadersNone} {
		t.Run(mode.String(), func(t *testing.T) {
			h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(sec, hour), ratelimit.WithHeaders(mode))})
			key := "mode-" + mode.String()
			res := e.do(h, request{method: "GET", path: "/", key: key})
			res.wantStatus(t, "first", http.StatusOK)
			// The binding policy is the one with the fewest units left:
			// "second", 1 left, resetting in 1 s.
			checkSingleValue(t, mode, res.header, 2, 1, 1)
			e.do(h, request{method: "GET", path: "/", key: key}).wantStatus(t, "second", http.StatusOK)
			res = e.do(h, request{method: "GET", path: "/", key: key})
			res.wantStatus(t, "third", http.StatusTooManyRequests)
			checkSingleValue(t, mode, res.header, 2, 0, 1)
			if ra := parseInt(t, res.header, "Retry-After"); ra != 1 {
				t.Fatalf("Retry-After %d, want 1", ra)
			}
			e.clock.Advance(time.Second)
		})
	}
}

func checkSingleValue(t *testing.T, mode ratelimit.HeaderMode, h http.Header, limit, remaining, reset int64) {
	t.Helper()
	switch mode {
	case ratelimit.HeadersDraft07:
		d := parseDict(t, h, "RateLimit")
		if d["limit"] != limit || d["remaining"] != remaining || d["reset"] != reset {
			t.Fatalf("RateLimit %q, want limit=%d remaining=%d reset=%d", h.Values("RateLimit"), limit, remaining, reset)
		}
		checkNumericPolicies(t, h)
	case ratelimit.HeadersDraft06:
		for f, want := range map[string]int64{"RateLimit-Limit": limit, "RateLimit-Remaining": remaining, "RateLimit-Reset": reset} {
			if got := parseInt(t, h, f); got != want {
				t.Fatalf("%s %d, want %d", f, got, want)
			}
		}
		checkNumericPolicies(t, h)
	case ratelimit.HeadersXRateLimit:
		for f, want := range map[string]int64{"X-RateLimit-Limit": limit, "X-RateLimit-Remaining": remaining, "X-RateLimit-Reset": reset} {
			if got := parseInt(t, h, f); got != want {
				t.Fatalf("%s %d, want %d", f, got, want)
			}
		}
	case ratelimit.HeadersNone:
		for _, f := range rateLimitFields[:len(rateLimitFields)-1] {
			if v := h.Values(f); len(v) > 0 {
				t.Fatalf("HeadersNone wrote %s: %q", f, v)
			}
		}
	}
}

func testMultiPolicy(t *testing.T, e *env) {
	sec := core.MustParsePolicy("2/1s;algorithm=fixed_window;name=second")
	min := core.MustParsePolicy("3/1m;algorithm=fixed_window;name=minute")
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(sec, min))})
	for range 2 {
		e.do(h, request{method: "GET", path: "/", key: "k"}).wantStatus(t, "within quota", http.StatusOK)
	}
	res := e.do(h, request{method: "GET", path: "/", key: "k"})
	res.wantStatus(t, "third in one second", http.StatusTooManyRequests)
	res.wantList(t, "RateLimit-Policy",
		member{"second", map[string]int64{"q": 2, "w": 1}}, member{"minute", map[string]int64{"q": 3, "w": 60}})
	// The denial consumed nothing from "minute": 1 unit is still left.
	res.wantList(t, "RateLimit",
		member{"second", map[string]int64{"r": 0, "t": 1}}, member{"minute", map[string]int64{"r": 1, "t": 57}})
	if p := parseProblem(t, res); len(p.Violated) != 1 || p.Violated[0] != "second" {
		t.Fatalf("violated-policies %v, want [second]", p.Violated)
	}
	e.clock.Advance(time.Second)
	e.do(h, request{method: "GET", path: "/", key: "k"}).wantStatus(t, "next second", http.StatusOK)
	e.clock.Advance(time.Second)
	res = e.do(h, request{method: "GET", path: "/", key: "k"})
	res.wantStatus(t, "minute used up", http.StatusTooManyRequests)
	if ra := parseInt(t, res.header, "Retry-After"); ra != 55 {
		t.Fatalf("Retry-After %d, want 55 (the minute's window)", ra)
	}
	if p := parseProblem(t, res); len(p.Violated) != 1 || p.Violated[0] != "minute" {
		t.Fatalf("violated-policies %v, want [minute]", p.Violated)
	}
}

func testRouteTable(t *testing.T, e *env) {
	global := core.MustParsePolicy("100/1m;algorithm=fixed_window;name=global")
	login := core.MustParsePolicy("1/1m;algorithm=fixed_window;name=login")
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(global), ratelimit.WithRoute("POST", "/login", login))})
	res := e.do(h, request{method: "POST", path: "/login", key: "k"})
	res.wantStatus(t, "first login", http.StatusOK)
	res.wantList(t, "RateLimit", member{"login", map[string]int64{"r": 0, "t": 57}})
	e.do(h, request{method: "POST", path: "/login", key: "k"}).wantStatus(t, "second login", http.StatusTooManyRequests)
	// Same path, other method: the global policy.
	res = e.do(h, request{method: "GET", path: "/login", key: "k"})
	res.wantStatus(t, "GET /login", http.StatusOK)
	res.wantList(t, "RateLimit", member{"global", map[string]int64{"r": 99, "t": 57}})
	if ev := e.lastEvent(); ev.Outcome != ratelimit.OutcomeAllowed {
		t.Fatalf("outcome %v", ev.Outcome)
	}
}

func testPerRoute(t *testing.T, e *env) {
	// The base's own policy applies only where it is installed: nowhere here.
	base := e.middleware(ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=base")))
	h := e.a.Handler(t, Setup{RouteBase: base, RoutePolicies: []core.Policy{core.MustParsePolicy("2/1m;algorithm=fixed_window;name=login")}})
	for i, want := range []int{200, 200, 429} {
		res := e.do(h, request{method: "POST", path: "/login", key: "k"})
		res.wantStatus(t, "login "+strconv.Itoa(i+1), want)
		if len(res.header.Values("RateLimit")) == 0 {
			t.Fatalf("login %d: no RateLimit field", i+1)
		}
	}
	for range 3 {
		res := e.do(h, request{method: "GET", path: "/login", key: "k"})
		res.wantStatus(t, "GET /login, no per-route middleware", http.StatusOK)
		wantNoRateLimitFields(t, "GET /login", res.header)
	}
}

// testRouteAfterGlobal: a route's own middleware runs inside the
// router-wide one it was made from: the client sees both checks' policies,
// and a request the route denies gets the router-wide charge back.
func testRouteAfterGlobal(t *testing.T, e *env) {
	m := e.middleware(ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=global")))
	h := e.a.Handler(t, Setup{Global: m, RouteBase: m, RoutePolicies: []core.Policy{core.MustParsePolicy("1/1m;algorithm=gcra;name=login")}})
	res := e.do(h, request{method: "POST", path: "/login", key: "k"})
	res.wantStatus(t, "first login", http.StatusOK)
	res.wantList(t, "RateLimit-Policy",
		member{"global", map[string]int64{"q": 100, "w": 60}}, member{"login", map[string]int64{"q": 1, "w": 60}})
	res.wantList(t, "RateLimit",
		member{"global", map[string]int64{"r": 99, "t": 1}}, member{"login", map[string]int64{"r": 0, "t": 60}})
	res = e.do(h, request{method: "POST", path: "/login", key: "k"})
	res.wantStatus(t, "second login", http.StatusTooManyRequests)
	// The global unit of the refused login is back: still 99.
	res.wantList(t, "RateLimit",
		member{"global", map[string]int64{"r": 99, "t": 1}}, member{"login", map[string]int64{"r": 0, "t": 60}})
	if ra := parseInt(t, res.header, "Retry-After"); ra != 60 {
		t.Fatalf("Retry-After %d, want the login's 60", ra)
	}
	if p := parseProblem(t, res); len(p.Violated) != 1 || p.Violated[0] != "login" {
		t.Fatalf("problem %+v", p)
	}
	res = e.do(h, request{method: "GET", path: "/", key: "k"})
	res.wantStatus(t, "another route", http.StatusOK)
	res.wantList(t, "RateLimit", member{"global", map[string]int64{"r": 98, "t": 2}})
}

// work is a request to WorkPath with the given test headers.
func work(key string, kv ...string) request {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = []string{kv[i+1]}
	}
	return request{method: "POST", path: WorkPath, key: key, header: h}
}

// testCountIf: WithUsage's predicate counts only failures, answered by
// the handler itself or as the framework's error; successes are refunded.
func testCountIf(t *testing.T, e *env) {
	p := core.MustParsePolicy("3/1m;algorithm=gcra;name=logins")
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(p),
		ratelimit.WithUsage(func(status int) bool { return status >= 400 }))})
	for i := range 5 {
		e.do(h, work("k")).wantStatus(t, "success "+strconv.Itoa(i+1), http.StatusOK)
	}
	for i, kv := range [][]string{{"X-Test-Status", "401"}, {"X-Test-Status", "401", "X-Test-Error", "1"}, {"X-Test-Status", "403", "X-Test-Error", "1"}} {
		res := e.do(h, work("k", kv...))
		res.wantStatus(t, "failure "+strconv.Itoa(i+1), parseIntOr(kv[1]))
		res.wantList(t, "RateLimit", member{"logins", map[string]int64{"r": int64(2 - i), "t": int64(20 * (i + 1))}})
	}
	e.do(h, work("k")).wantStatus(t, "after three failures", http.StatusTooManyRequests)
}

func parseIntOr(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// testSettle: a handler sets its request's final cost: more than the
// charge puts the key into debt (the next request waits it out, exactly),
// 0 refunds the charge.
func testSettle(t *testing.T, e *env) {
	p := core.MustParsePolicy("10/1m;algorithm=gcra;name=tokens")
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(p), ratelimit.WithUsage(nil))})
	for i := range 15 {
		e.do(h, work("refunded", "X-Test-Cost", "0")).wantStatus(t, "refunded "+strconv.Itoa(i+1), http.StatusOK)
	}
	e.do(h, work("llm", "X-Test-Cost", "25")).wantStatus(t, "the costly request", http.StatusOK)
	// 25 units at 6 s each: free again 150 s after the charge; a request
	// of 1 passes once 10 units are back in the burst: at 90 s + 6 s = 96 s.
	res := e.do(h, work("llm"))
	res.wantStatus(t, "in debt", http.StatusTooManyRequests)
	if ra := parseInt(t, res.header, "Retry-After"); ra != 96 {
		t.Fatalf("Retry-After %d, want 96", ra)
	}
	e.clock.Advance(96*time.Second - time.Microsecond)
	e.do(h, work("llm")).wantStatus(t, "a microsecond early", http.StatusTooManyRequests)
	e.clock.Advance(time.Microsecond)
	e.do(h, work("llm")).wantStatus(t, "debt paid", http.StatusOK)
	res = e.do(h, work("neg", "X-Test-Cost", "-1"))
	res.wantStatus(t, "a negative final cost", http.StatusInternalServerError)
}

// testConcurrency: a concurrency limit beside a rate policy holds each
// request's slot until its handler returns; the fields speak of the rate
// policy alone.
func testConcurrency(t *testing.T, e *env) {
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(
		core.MustParsePolicy("100/1m;name=api"), core.MustParsePolicy("2;algorithm=concurrency;name=inflight")))})
	answers := make(chan response, 2)
	for range 2 {
		go func() { answers <- e.do(h, work("k", "X-Test-Hold", "1")) }()
	}
	for range 2 {
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("a slow request never reached its handler")
		}
	}
	res := e.do(h, work("k"))
	res.wantStatus(t, "a third while two run", http.StatusTooManyRequests)
	if ra := parseInt(t, res.header, "Retry-After"); ra != 60 {
		t.Fatalf("Retry-After %d, want 60, the end of the oldest slot's lifetime", ra)
	}
	res.wantList(t, "RateLimit-Policy", member{"api", map[string]int64{"q": 100, "w": 60}})
	if p := parseProblem(t, res); len(p.Violated) != 1 || p.Violated[0] != "inflight" {
		t.Fatalf("problem %+v", p)
	}
	release <- struct{}{}
	(<-answers).wantStatus(t, "the first slow request", http.StatusOK)
	res = e.do(h, work("k"))
	res.wantStatus(t, "once a slot is back", http.StatusOK)
	res.wantList(t, "RateLimit", member{"api", map[string]int64{"r": 97, "t": 2}})
	release <- struct{}{}
	(<-answers).wantStatus(t, "the second slow request", http.StatusOK)
}

// testUsageReset: a handler that resets its request's key starts it over.
func testUsageReset(t *testing.T, e *env) {
	p := core.MustParsePolicy("2/1m;algorithm=gcra;name=p")
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(p), ratelimit.WithUsage(nil))})
	e.do(h, work("k")).wantStatus(t, "first", http.StatusOK)
	e.do(h, work("k", "X-Test-Reset", "1")).wantStatus(t, "the resetting one", http.StatusOK)
	res := e.do(h, work("k"))
	res.wantStatus(t, "after the reset", http.StatusOK)
	res.wantList(t, "RateLimit", member{"p", map[string]int64{"r": 1, "t": 30}})
	// Without WithUsage, nothing is published.
	h = e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(p))})
	if res := e.do(h, work("other")); res.status != http.StatusOK || string(res.body) != "no usage" {
		t.Fatalf("without WithUsage: %d %q", res.status, res.body)
	}
}

func testSkip(t *testing.T, e *env) {
	p := core.MustParsePolicy("1/1m;algorithm=fixed_window;name=p")
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(p),
		ratelimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/healthz" }))})
	for range 3 {
		res := e.do(h, request{method: "GET", path: "/healthz", key: "k"})
		res.wantStatus(t, "health check", http.StatusOK)
		wantNoRateLimitFields(t, "health check", res.header)
		if ev := e.lastEvent(); ev.Outcome != ratelimit.OutcomeSkipped {
			t.Fatalf("outcome %v, want skipped", ev.Outcome)
		}
	}
	e.do(h, request{method: "GET", path: "/", key: "k"}).wantStatus(t, "first", http.StatusOK)
	e.do(h, request{method: "GET", path: "/", key: "k"}).wantStatus(t, "second", http.StatusTooManyRequests)
}

func failing(e *env, mode ratelimit.FailureMode) *ratelimit.Middleware {
	m, err := ratelimit.New(ratelimit.WithLimiter(core.NewLimiter(failingBackend{}, core.WithClock(e.clock))),
		ratelimit.WithKeyFunc(headerKey), ratelimit.WithObserver(e.observe),
		ratelimit.WithPolicy(core.MustParsePolicy("1/1m;name=p")), ratelimit.WithFailureMode(mode))
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func wantNoInternalText(t *testing.T, r response) {
	t.Helper()
	all := string(r.body)
	for k, vs := range r.header {
		all += k + strings.Join(vs, "")
	}
	for _, leak := range []string{"INTERNAL-SECRET", "10.9.8.7", "i/o timeout", "redis"} {
		if strings.Contains(all, leak) {
			t.Fatalf("internal error text %q reached the response: headers %v body %q", leak, r.header, r.body)
		}
	}
}

func testFailOpen(t *testing.T, e *env) {
	h := e.a.Handler(t, Setup{Global: failing(e, ratelimit.FailOpen)})
	for range 3 {
		res := e.do(h, request{method: "GET", path: "/", key: "k"})
		res.wantStatus(t, "fail open", http.StatusOK)
		wantNoRateLimitFields(t, "fail open", res.header)
		wantNoInternalText(t, res)
	}
	if ev := e.lastEvent(); ev.Outcome != ratelimit.OutcomeFailedOpen || ev.Err == nil {
		t.Fatalf("event %v %v", ev.Outcome, ev.Err)
	}
}

func testFailClosed(t *testing.T, e *env) {
	h := e.a.Handler(t, Setup{Global: failing(e, ratelimit.FailClosed)})
	res := e.do(h, request{method: "GET", path: "/", key: "k"})
	res.wantStatus(t, "fail closed", http.StatusServiceUnavailable)
	parseProblem(t, res)
	wantNoInternalText(t, res)
	wantNoRateLimitFields(t, "fail closed", res.header)
	if ev := e.lastEvent(); ev.Outcome != ratelimit.OutcomeFailedClosed {
		t.Fatalf("outcome %v", ev.Outcome)
	}
}

func testMissingKey(t *testing.T, e *env) {
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(core.MustParsePolicy("1/1m")))})
	res := e.do(h, request{method: "GET", path: "/"})
	res.wantStatus(t, "no X-Key", http.StatusUnauthorized)
	if p := parseProblem(t, res); !strings.Contains(p.Detail, "header X-Key") {
		t.Fatalf("detail %q does not name the missing key", p.Detail)
	}
	wantNoRateLimitFields(t, "missing key", res.header)
}

func testCostAboveCapacity(t *testing.T, e *env) {
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(core.MustParsePolicy("5/1m")),
		ratelimit.WithCost(func(r keyfuncs.Request) int {
			if n, err := strconv.Atoi(r.Header("X-Cost")); err == nil {
				return n
			}
			return 1
		}))})
	res := e.do(h, request{method: "GET", path: "/", key: "k", header: http.Header{"X-Cost": {"6"}}})
	res.wantStatus(t, "cost 6 of 5", http.StatusRequestEntityTooLarge)
	parseProblem(t, res)
	res = e.do(h, request{method: "GET", path: "/", key: "k", header: http.Header{"X-Cost": {"5"}}})
	res.wantStatus(t, "cost 5 of 5", http.StatusOK)
	res.wantList(t, "RateLimit", member{"5/1m", map[string]int64{"r": 0, "t": 60}})
}

// testSameKeys checks that the adapter's Request view gives a composite
// key function exactly what a plain request with the same fields gives it.
func testSameKeys(t *testing.T, e *env) {
	kf := keyfuncs.Compose(keyfuncs.RemoteIP, keyfuncs.Method, keyfuncs.Route, keyfuncs.Header("X-Tenant"))
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithKeyFunc(kf),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m")),
		ratelimit.WithRoute("GET", "/healthz", core.MustParsePolicy("1/1m")))}) // a route table makes patterns reach global middleware
	for _, c := range []struct {
		method, path, remote, tenant string
	}{
		{"GET", "/", "192.0.2.1:1234", "acme"},
		{"POST", "/login", "[2001:db8:1:2::7]:443", "globex"},
		{"GET", "/login", "198.51.100.4:9", "initech"},
	} {
		res := e.do(h, request{method: c.method, path: c.path, remote: c.remote, header: http.Header{"X-Tenant": {c.tenant}}})
		res.wantStatus(t, c.method+" "+c.path, http.StatusOK)
		plain := keyfuncstest.New(c.remote, "X-Tenant", c.tenant)
		plain.Verb, plain.URLPath, plain.Pattern = c.method, c.path, c.path
		want, err := kf(plain)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.lastEvent().Key; got != want {
			t.Fatalf("%s %s: key %q, want %q", c.method, c.path, got, want)
		}
	}
}

func testSpoofedForwardedFor(t *testing.T, e *env) {
	res, err := keyfuncs.NewIPResolver(keyfuncs.WithTrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))
	if err != nil {
		t.Fatal(err)
	}
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithKeyFunc(res.Key), ratelimit.WithPolicy(core.MustParsePolicy("100/1m")))})
	for _, c := range []struct {
		remote string
		xff    []string
		want   string
	}{
		{"192.0.2.1:1234", []string{"203.0.113.66"}, "192.0.2.1"},                           // untrusted peer: header ignored
		{"10.1.2.3:80", []string{"203.0.113.66, 198.51.100.7"}, "198.51.100.7"},             // trusted proxy: rightmost untrusted
		{"10.1.2.3:80", []string{"198.51.100.7, 10.4.4.4"}, "198.51.100.7"},                 // trusted hops skipped
		{"10.1.2.3:80", []string{"203.0.113.66", "198.51.100.9"}, "198.51.100.9"},           // several lines read as one list
		{"192.0.2.1:1234", []string{"10.1.1.1", "203.0.113.66, 198.51.100.9"}, "192.0.2.1"}, // forged lines from an untrusted peer
	} {
		r := e.do(h, request{method: "GET", path: "/", remote: c.remote, header: http.Header{"X-Forwarded-For": c.xff}})
		r.wantStatus(t, "XFF "+strings.Join(c.xff, " | "), http.StatusOK)
		if got := e.lastEvent().Key; got != c.want {
			t.Fatalf("peer %s, X-Forwarded-For %q: key %q, want %q", c.remote, c.xff, got, c.want)
		}
	}
}

// testUnsafeKeyBytes sends keys with CR, LF, NUL and bytes above 0x7f (set
// verbatim, bypassing request validation): they are keys like any other
// and never reach a response field or a header name.
func testUnsafeKeyBytes(t *testing.T, e *env) {
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(core.MustParsePolicy("1/1m;name=p")))})
	for _, key := range []string{"a\r\nSet-Cookie: evil=1", "b\x00\x7f\xff\xfe", "c\nX-Injected: 1", "\"d\\"} {
		for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
			res := e.do(h, request{method: "GET", path: "/", key: key})
			res.wantStatus(t, strconv.Quote(key)+" request "+strconv.Itoa(i+1), want)
			for name, vs := range res.header {
				if strings.EqualFold(name, "Set-Cookie") || strings.EqualFold(name, "X-Injected") {
					t.Fatalf("key %q injected header %s", key, name)
				}
				for _, v := range vs {
					if strings.ContainsAny(v, "\r\n\x00") || strings.Contains(v, key) {
						t.Fatalf("key %q reached header %s: %q", key, name, v)
					}
				}
			}
			if strings.Contains(string(res.body), key) {
				t.Fatalf("key %q reached the body %q", key, res.body)
			}
			if got := e.lastEvent().Key; got != key {
				t.Fatalf("key %q arrived as %q", key, got)
			}
		}
	}
}

// testHeadFollowsGet: routers serve HEAD with the GET handler (or, on Gin and
// Echo, where the app registers it), so a GET route's policies govern HEAD
// too; HEAD must not be a way around them.
func testHeadFollowsGet(t *testing.T, e *env) {
	login := core.MustParsePolicy("2/1m;algorithm=fixed_window;name=get-login")
	global := core.MustParsePolicy("100/1m;algorithm=fixed_window;name=global")
	h := e.a.Handler(t, Setup{Global: e.middleware(ratelimit.WithPolicy(global), ratelimit.WithRoute("GET", "/login", login))})
	res := e.do(h, request{method: "HEAD", path: "/login", key: "k"})
	if res.status != http.StatusOK {
		t.Fatalf("first HEAD: status %d", res.status)
	}
	res.wantList(t, "RateLimit", member{"get-login", map[string]int64{"r": 1, "t": 57}})
	e.do(h, request{method: "GET", path: "/login", key: "k"}).wantStatus(t, "GET after HEAD", http.StatusOK)
	e.do(h, request{method: "GET", path: "/login", key: "k"}).wantStatus(t, "third request", http.StatusTooManyRequests)
	res = e.do(h, request{method: "HEAD", path: "/login", key: "k"})
	if res.status != http.StatusTooManyRequests {
		t.Fatalf("HEAD after the GET route's quota is used up: status %d, want 429", res.status)
	}
	res.wantList(t, "RateLimit", member{"get-login", map[string]int64{"r": 0, "t": 57}})
}

// testKeyFromIdentity: a key function reads the caller's identity that
// authentication middleware stored in the framework's own per-request store.
func testKeyFromIdentity(t *testing.T, e *env) {
	p := core.MustParsePolicy("1/1m;algorithm=fixed_window;name=per-user")
	h := e.a.Handler(t, Setup{Identify: true, Global: e.middleware(ratelimit.WithPolicy(p),
		ratelimit.WithKeyFunc(keyfuncs.ContextValue(UserKey)))})
	as := func(user string) request {
		return request{method: "GET", path: "/", header: http.Header{UserHeader: {user}}}
	}
	e.do(h, as("alice")).wantStatus(t, "alice's first", http.StatusOK)
	if ev := e.lastEvent(); ev.Key != "alice" {
		t.Fatalf("key %q, want alice", ev.Key)
	}
	e.do(h, as("alice")).wantStatus(t, "alice's second", http.StatusTooManyRequests)
	e.do(h, as("bob")).wantStatus(t, "bob has his own quota", http.StatusOK)
	e.do(h, request{method: "GET", path: "/"}).wantStatus(t, "no identity", http.StatusUnauthorized)
}

// testPlans: the caller's plan selects its policies; the headers name them;
// an unknown or empty plan gets the global policies, or, with
// WithDenyUnknownPlans and none, a 403; a failing plan function is a 500
// whatever the failure mode; never an unlimited pass.
func testPlans(t *testing.T, e *env) {
	free := core.MustParsePolicy("1/1h;algorithm=fixed_window;name=free")
	pro := core.MustParsePolicy("3/1h;algorithm=fixed_window;name=pro")
	global := core.MustParsePolicy("2/1h;algorithm=fixed_window;name=global")
	plan := func(r keyfuncs.Request) (string, error) {
		switch u, _ := r.Context().Value(UserKey).(string); u {
		case "alice":
			return "pro", nil
		case "mallory":
			return "gold", nil // no such plan
		case "eve":
			return "", errors.New("INTERNAL-SECRET plan lookup failed")
		case "":
			return "", nil
		}
		return "free", nil
	}
	plans := map[string][]core.Policy{"free": {free}, "pro": {pro}}
	key := ratelimit.WithKeyFunc(keyfuncs.ContextValue(UserKey, keyfuncs.FallbackIfMissing(keyfuncs.RemoteIP)))
	if _, err := ratelimit.New(ratelimit.WithLimiter(e.limiter), key, ratelimit.WithPlans(plan, plans)); !errors.Is(err, ratelimit.ErrInvalidConfig) {
		t.Fatalf("WithPlans without global policies or WithDenyUnknownPlans: err %v, want ErrInvalidConfig", err)
	}
	m := e.middleware(key, ratelimit.WithPlans(plan, plans), ratelimit.WithPolicy(global))
	h := e.a.Handler(t, Setup{Identify: true, Global: m})
	as := func(user string) request {
		return request{method: "GET", path: "/", header: http.Header{UserHeader: {user}}}
	}
	for i, want := range []int{200, 200, 200, 429} {
		res := e.do(h, as("alice"))
		res.wantStatus(t, "alice (pro) "+strconv.Itoa(i+1), want)
		res.wantList(t, "RateLimit-Policy", member{"pro", map[string]int64{"q": 3, "w": 3600}})
	}
	if ev := e.lastEvent(); ev.Plan != "pro" || ev.Outcome != ratelimit.OutcomeDenied {
		t.Fatalf("event plan %q outcome %v", ev.Plan, ev.Outcome)
	}
	e.do(h, as("bob")).wantStatus(t, "bob (free)", http.StatusOK)
	e.do(h, as("bob")).wantStatus(t, "bob (free) again", http.StatusTooManyRequests)
	// An unknown plan is limited by the global policies, with their headers.
	for i, want := range []int{200, 200, 429} {
		res := e.do(h, as("mallory"))
		res.wantStatus(t, "unknown plan, global policies "+strconv.Itoa(i+1), want)
		res.wantList(t, "RateLimit-Policy", member{"global", map[string]int64{"q": 2, "w": 3600}})
	}
	if ev := e.lastEvent(); ev.Outcome != ratelimit.OutcomeDenied || ev.Plan != "" {
		t.Fatalf("unknown plan: event %+v", ev)
	}
	res := e.do(h, as("eve"))
	res.wantStatus(t, "plan function error", http.StatusInternalServerError)
	wantNoInternalText(t, res)
	if ev := e.lastEvent(); ev.Outcome != ratelimit.OutcomeRefused || ev.Err == nil {
		t.Fatalf("plan function error: event %+v", ev)
	}

	// Without global policies, WithDenyUnknownPlans answers 403.
	m = e.middleware(key, ratelimit.WithPlans(plan, plans), ratelimit.WithDenyUnknownPlans())
	h = e.a.Handler(t, Setup{Identify: true, Global: m})
	res = e.do(h, as("mallory"))
	res.wantStatus(t, "unknown plan, denied", http.StatusForbidden)
	wantNoInternalText(t, res)
	if ev := e.lastEvent(); ev.Outcome != ratelimit.OutcomeRefused || !errors.Is(ev.Err, ratelimit.ErrUnknownPlan) || ev.Plan != "gold" {
		t.Fatalf("unknown plan, denied: event %+v", ev)
	}
	e.do(h, request{method: "GET", path: "/"}).wantStatus(t, "no plan, no global policy, denied", http.StatusForbidden)
}

// testNative: a key function reaches the framework's own request through
// the adapter's accessor, which finds none behind a request of another kind.
func testNative(t *testing.T, e *env) {
	if _, ok := e.a.Native(keyfuncstest.New("192.0.2.1:1")); ok {
		t.Fatal("the accessor found a framework request behind a request of another kind")
	}
	native := func(r keyfuncs.Request) (string, error) {
		if v, ok := e.a.Native(r); ok && v != "" {
			return v, nil
		}
		return "", &keyfuncs.MissingKeyError{Source: "header " + NativeHeader, Status: http.StatusBadRequest}
	}
	one := core.MustParsePolicy("1/1m;name=one")
	global := e.middleware(ratelimit.WithKeyFunc(native), ratelimit.WithPolicy(one))
	// Wherever the middleware runs: globally, globally with a route
	// table (which resolves patterns), and on the route.
	for _, s := range []struct {
		name  string
		setup Setup
	}{
		{"global", Setup{Global: global}},
		{"route table", Setup{Global: e.middleware(ratelimit.WithKeyFunc(native), ratelimit.WithPolicy(one), ratelimit.WithRoute("POST", "/login", one))}},
		{"route", Setup{RouteBase: global, RoutePolicies: []core.Policy{one}}},
	} {
		h := e.a.Handler(t, s.setup)
		for i, c := range []struct {
			value string
			want  int
		}{{"alice", http.StatusOK}, {"alice", http.StatusTooManyRequests}, {"bob", http.StatusOK}, {"", http.StatusBadRequest}} {
			res := e.do(h, request{method: "POST", path: "/login", header: http.Header{NativeHeader: {s.name + c.value}}})
			if c.value == "" {
				res = e.do(h, request{method: "POST", path: "/login"})
			}
			res.wantStatus(t, s.name+": request "+strconv.Itoa(i+1)+" as "+strconv.Quote(c.value), c.want)
		}
	}
}
