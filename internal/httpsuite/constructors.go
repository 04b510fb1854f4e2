package httpsuite

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// Constructors are an adapter's New, Route and Middleware, which build its
// handler type H.
type Constructors[H any] struct {
	New        func(opts ...ratelimit.Option) (H, error)
	Route      func(m *ratelimit.Middleware, policies ...core.Policy) H
	Middleware func(m *ratelimit.Middleware) H
	// CheckServed is the adapter's CheckPatterns given the route list of a
	// router serving POST /login alone.
	CheckServed func(m *ratelimit.Middleware) error
}

// RunConstructors checks c.New as the README shows it: 100 calls, never
// closed, leave no goroutine behind (the default memory store has no
// sweeper); a route pattern in net/http's syntax, which the adapter's
// framework never reports, is refused with a *ratelimit.RouteError, and a
// Middleware without a key function with ratelimit.ErrInvalidConfig. It
// checks that c.Route and c.Middleware panic with the typed error on an
// invalid policy, a route without a policy and a nil Middleware, as routes
// are wired at start-up, and that c.CheckServed refuses a route table entry
// no route serves. It counts the process's goroutines, so the test calling
// it must not be parallel.
func RunConstructors[H any](t *testing.T, c Constructors[H]) {
	t.Run("NoGoroutine", func(t *testing.T) {
		existing := goleak.IgnoreCurrent()
		var keep []H
		for range 100 {
			h, err := c.New(ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")))
			if err != nil {
				t.Fatal(err)
			}
			keep = append(keep, h)
		}
		// goleak rather than runtime.NumGoroutine, which also counts the
		// runtime's finalizer goroutine while it runs a finalizer.
		goleak.VerifyNone(t, existing)
		runtime.KeepAlive(keep)
	})
	t.Run("NoKeyFunc", func(t *testing.T) {
		if _, err := c.New(ratelimit.WithPolicy(core.MustParsePolicy("1/1s"))); !errors.Is(err, ratelimit.ErrInvalidConfig) {
			t.Fatalf("New without a key function: %v, want ErrInvalidConfig", err)
		}
	})
	t.Run("ForeignPatterns", func(t *testing.T) {
		_, err := c.New(ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithRoute("GET", "/users/{id}", core.MustParsePolicy("1/1m")))
		var re *ratelimit.RouteError
		if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrInvalidConfig) || re.Pattern != "/users/{id}" {
			t.Fatalf("New = %v, want a *ratelimit.RouteError for /users/{id}", err)
		}
	})
	m, err := ratelimit.New(ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithPolicy(core.MustParsePolicy("100/1m")))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		build func()
		want  error
	}{
		"RouteInvalidPolicy": {func() { c.Route(m, core.Policy{Limit: 0}) }, core.ErrInvalidPolicy},
		"RouteNoPolicy":      {func() { c.Route(m) }, ratelimit.ErrInvalidConfig},
		"RouteNilMiddleware": {func() { c.Route(nil, core.MustParsePolicy("1/1s")) }, ratelimit.ErrInvalidConfig},
		"NilMiddleware":      {func() { c.Middleware(nil) }, ratelimit.ErrInvalidConfig},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if err, _ := recover().(error); !errors.Is(err, tc.want) {
					t.Fatalf("panic value %v, want %v", err, tc.want)
				}
			}()
			tc.build()
		})
	}
	t.Run("CheckPatternsAgainstTheRoutes", func(t *testing.T) {
		for pattern, ok := range map[string]bool{"/login": true, "/logni": false} {
			m, err := ratelimit.New(ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithRoute("POST", pattern, core.MustParsePolicy("5/1m")))
			if err != nil {
				t.Fatal(err)
			}
			var re *ratelimit.RouteError
			if err := c.CheckServed(m); (err == nil) != ok || !ok && !errors.As(err, &re) {
				t.Errorf("POST %s: %v", pattern, err)
			}
		}
	})
}

// RoutePatterns checks that the request view reports the router's pattern,
// parameters and all, and no pattern for a request no route matched.
// serve returns the app: m in front of GET /users/:id and GET files (the
// router's wildcard), both answering 204, and 404 elsewhere.
func RoutePatterns(t *testing.T, files string, serve func(m *ratelimit.Middleware) http.Handler) {
	t.Parallel()
	var routes []string
	m, err := ratelimit.New(ratelimit.WithLimiter(Limiter()), ratelimit.WithPolicy(core.MustParsePolicy("100/1m")),
		ratelimit.WithKeyFunc(keyfuncs.Compose(keyfuncs.RemoteIP, keyfuncs.Route)),
		ratelimit.WithRoute("GET", "/users/:id", core.MustParsePolicy("1/1m;name=user")),
		ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { routes = append(routes, e.Request.Route()) }))
	if err != nil {
		t.Fatal(err)
	}
	h := serve(m)
	if rec := Do(h, "GET", "/users/7"); rec.Code != http.StatusNoContent || rec.Header().Get("RateLimit-Policy") != `"user";q=1;w=60` {
		t.Fatalf("/users/7: %d %v", rec.Code, rec.Header())
	}
	if rec := Do(h, "GET", "/users/8"); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("/users/8 shares the route's quota: %d", rec.Code)
	}
	Do(h, "GET", "/files/a/b")
	if rec := Do(h, "GET", "/nowhere"); rec.Code != http.StatusNotFound {
		t.Fatalf("/nowhere: %d", rec.Code)
	}
	if want := []string{"/users/:id", "/users/:id", files, ""}; !slices.Equal(routes, want) {
		t.Fatalf("routes %q, want %q", routes, want)
	}
}

// Chain counts what a request reached past the rate limiter: later
// middleware, the handler, and the framework's error handler.
type Chain struct{ Later, Handled, Errors int }

// DenialStopsTheChain checks that a denied request reaches neither later
// middleware, nor the handler, nor the framework's error handler: its 429
// is complete. serve returns the app: mw, then a middleware counting
// c.Later, then GET / counting c.Handled and answering 204, with an error
// handler counting c.Errors where the framework has one.
func DenialStopsTheChain[H any](t *testing.T, newMW func(opts ...ratelimit.Option) (H, error), serve func(mw H, c *Chain) http.Handler) {
	t.Parallel()
	mw, err := newMW(ratelimit.WithLimiter(Limiter()), ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("1/1m;name=p")))
	if err != nil {
		t.Fatal(err)
	}
	var c Chain
	h := serve(mw, &c)
	if rec := Do(h, "GET", "/"); rec.Code != http.StatusNoContent {
		t.Fatalf("first: %d", rec.Code)
	}
	rec := Do(h, "GET", "/")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" ||
		rec.Header().Get("Content-Type") != fields.ContentTypeProblem || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("second: %d %v", rec.Code, rec.Header())
	}
	if c != (Chain{Later: 1, Handled: 1}) {
		t.Fatalf("later middleware ran %d times, handler %d, error handler %d; want 1, 1, 0", c.Later, c.Handled, c.Errors)
	}
}
