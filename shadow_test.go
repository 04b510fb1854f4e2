package ratelimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
	"github.com/ratelimit-go/ratelimit/internal/sink"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// shadowBackends are the stores the shadow semantics are pinned on.
func shadowBackends(t *testing.T) map[string]func(t *testing.T) core.Backend {
	return map[string]func(t *testing.T) core.Backend{
		"memory": func(*testing.T) core.Backend { return must.Do(memstore.New()) },
		"miniredis": func(t *testing.T) core.Backend {
			mr := miniredis.RunT(t)
			c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { c.Close() })
			s, err := redisstore.New(c)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"redis": func(t *testing.T) core.Backend {
			s, err := redisstore.New(redistest.Client(t), redisstore.WithPrefix(redistest.Prefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"cluster": func(t *testing.T) core.Backend {
			s, err := redisstore.New(redistest.Cluster(t), redisstore.WithPrefix(redistest.Prefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

// TestShadowPolicies: a shadow policy is checked and counted, its would-be
// denials reach observers, and it never changes the enforced decision, the
// header fields, Retry-After, or what the enforced policies consume.
func TestShadowPolicies(t *testing.T) {
	t.Parallel()
	for name, newBackend := range shadowBackends(t) {
		t.Run(name, func(t *testing.T) {
			clock := core.NewManualClock(time.Date(2026, 4, 1, 12, 0, 10, 0, time.UTC))
			limiter := core.NewLimiter(newBackend(t), core.WithClock(clock))
			enforced := core.MustParsePolicy("5/1m;algorithm=fixed_window;name=api")
			next := core.MustParsePolicy("2/1m;algorithm=fixed_window;name=api-next;shadow=true")
			var events []ratelimit.Event
			m, err := ratelimit.New(ratelimit.WithLimiter(limiter), ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
				ratelimit.WithPolicy(enforced, next),
				ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) {
					e.Shadow.Decisions = append([]core.Decision(nil), e.Shadow.Decisions...)
					events = append(events, e)
				}))
			if err != nil {
				t.Fatal(err)
			}
			// The same check without the shadow policy, on a limiter of its
			// own, is what the client must see.
			plainClock := core.NewManualClock(clock.Now())
			plain, err := ratelimit.New(ratelimit.WithLimiter(core.NewLimiter(must.Do(memstore.New()), core.WithClock(plainClock))),
				ratelimit.WithKeyFunc(keyfuncs.Constant("k")), ratelimit.WithPolicy(enforced))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 7 {
				got, want := sink.NewRecorder(), sink.NewRecorder()
				gv := m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), got, nil)
				wv := plain.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), want, nil)
				if gv != wv || got.Status != want.Status || got.H.Get("RateLimit") != want.H.Get("RateLimit") ||
					got.H.Get("RateLimit-Policy") != want.H.Get("RateLimit-Policy") || got.H.Get("Retry-After") != want.H.Get("Retry-After") {
					t.Fatalf("request %d: the shadow policy changed the response: %v %d %v, want %v %d %v", i+1, gv, got.Status, got.H, wv, want.Status, want.H)
				}
				ev := events[len(events)-1]
				switch {
				case i < 2: // both admit
					if ev.Outcome != ratelimit.OutcomeAllowed || !ev.Shadow.Allowed || len(ev.Shadow.Decisions) != 1 {
						t.Fatalf("request %d: %+v", i+1, ev)
					}
				case i < 5: // the enforced policy admits, the shadow one would deny
					if ev.Outcome != ratelimit.OutcomeAllowed || ev.Shadow.Allowed || ev.Shadow.Policies[0].Name != "api-next" {
						t.Fatalf("request %d: want a shadow denial, got %+v", i+1, ev)
					}
				default: // denied by the enforced policy: the shadow one is not checked
					if ev.Outcome != ratelimit.OutcomeDenied || len(ev.Shadow.Decisions) != 0 {
						t.Fatalf("request %d: %+v", i+1, ev)
					}
				}
			}
			// The enforced policy consumed exactly as without the shadow one,
			// and the shadow one consumed only what it admitted.
			if d, _ := limiter.Peek(context.Background(), "k", enforced); d.Remaining != 0 {
				t.Fatalf("enforced remaining %d", d.Remaining)
			}
			if d, _ := limiter.Peek(context.Background(), "k", next); d.Remaining != 0 || d.Allowed {
				t.Fatalf("shadow state: %+v", d)
			}
			clock.Advance(time.Minute)
			plainClock.Advance(time.Minute)
			if v := m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), sink.NewRecorder(), nil); !v {
				t.Fatal("a new window must admit again")
			}
		})
	}
	// A policy set of shadow policies only enforces nothing and writes no
	// header field, yet counts.
	var ev ratelimit.Event
	m, err := ratelimit.New(ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
		ratelimit.WithPolicy(core.MustParsePolicy("1/1h;name=trial;shadow=true")),
		ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { ev = e }))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rec := sink.NewRecorder()
		if !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), rec, nil) || len(rec.H) != 0 {
			t.Fatalf("request %d: %v", i+1, rec.H)
		}
	}
	if ev.Outcome != ratelimit.OutcomeAllowed || ev.Shadow.Allowed {
		t.Fatalf("third request: %+v, want a shadow denial", ev)
	}
}

// TestObserverPanicIsRecovered: a panicking observer never crashes the
// request path; the panic is counted and the other observers still run.
func TestObserverPanicIsRecovered(t *testing.T) {
	t.Parallel()
	seen := 0
	m, err := ratelimit.New(ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
		ratelimit.WithPolicy(core.MustParsePolicy("1/1h;name=p")),
		ratelimit.WithObserver(func(context.Context, ratelimit.Event) { panic("broken observer") }),
		ratelimit.WithObserver(func(context.Context, ratelimit.Event) { seen++ }))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{true, false} {
		if v := m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), sink.NewRecorder(), nil); v != want {
			t.Fatalf("verdict %v, want %v", v, want)
		}
	}
	if m.ObserverPanics() != 2 || seen != 2 {
		t.Fatalf("panics %d, later observer ran %d times; want 2 and 2", m.ObserverPanics(), seen)
	}
}

// TestShadowPerRouteAndPlan: a shadow policy in a route table entry or a
// plan is a dry run there too.
func TestShadowPerRouteAndPlan(t *testing.T) {
	t.Parallel()
	var last ratelimit.Event
	m, err := ratelimit.New(ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
		ratelimit.WithRoute("GET", "/search", core.MustParsePolicy("5/1m;name=search"), core.MustParsePolicy("1/1m;name=search-next;shadow=true")),
		ratelimit.WithPlans(func(keyfuncs.Request) (string, error) { return "pro", nil },
			map[string][]core.Policy{"pro": {core.MustParsePolicy("5/1m;name=pro"), core.MustParsePolicy("1/1m;name=pro-next;shadow=true")}}),
		ratelimit.WithDenyUnknownPlans(),
		ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { last = e }))
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"/search", "/other"} {
		req := keyfuncstest.New("192.0.2.1:1")
		req.Pattern = pattern
		for i := range 2 {
			rec := sink.NewRecorder()
			if !m.Handle(context.Background(), req, rec, nil) {
				t.Fatalf("%s request %d: denied", pattern, i+1)
			}
			if strings.Contains(rec.H.Get("RateLimit-Policy"), "next") {
				t.Fatalf("%s: a shadow policy in the header fields: %v", pattern, rec.H)
			}
		}
		if last.Shadow.Allowed || len(last.Shadow.Decisions) != 1 {
			t.Fatalf("%s: second request: %+v, want a shadow denial", pattern, last.Shadow)
		}
	}
}

// TestRouteDropsPlans: a per-route middleware derived from one with plans
// checks the route's policies, not the caller's plan.
func TestRouteDropsPlans(t *testing.T) {
	t.Parallel()
	base, err := ratelimit.New(ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
		ratelimit.WithPlans(func(keyfuncs.Request) (string, error) { return "pro", nil },
			map[string][]core.Policy{"pro": {core.MustParsePolicy("100/1m;name=pro")}}),
		ratelimit.WithDenyUnknownPlans())
	if err != nil {
		t.Fatal(err)
	}
	login, err := base.Route(core.MustParsePolicy("1/1m;name=login"))
	if err != nil {
		t.Fatal(err)
	}
	rec := sink.NewRecorder()
	login.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), rec, nil)
	if got := rec.H.Get("RateLimit-Policy"); got != `"login";q=1;w=60` {
		t.Fatalf("per-route middleware checked %q, want the route's policy", got)
	}
}
