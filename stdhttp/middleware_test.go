package stdhttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/nethttp"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

func TestStripMethodFromPattern(t *testing.T) {
	t.Parallel()
	var route string
	mw, err := stdhttp.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithPolicy(core.MustParsePolicy("10/1m")),
		ratelimit.WithKeyFunc(func(r keyfuncs.Request) (string, error) { route = r.Route(); return "k", nil }))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /login", mw(http.HandlerFunc(ok)))
	mux.Handle("/users/{id}", mw(http.HandlerFunc(ok)))
	mux.Handle("example.com/host", mw(http.HandlerFunc(ok)))
	for _, c := range []struct{ method, target, want string }{
		{"POST", "/login", "/login"},
		{"GET", "/users/7", "/users/{id}"},
		{"GET", "http://example.com/host", "example.com/host"},
	} {
		route = "?"
		if rec := httpsuite.Do(mux, c.method, c.target); rec.Code != http.StatusNoContent {
			t.Fatalf("%s %s: %d", c.method, c.target, rec.Code)
		}
		if route != c.want {
			t.Errorf("%s %s: Route() = %q, want %q", c.method, c.target, route, c.want)
		}
	}
}

func TestWrappingTheMuxResolvesRoutes(t *testing.T) {
	t.Parallel()
	m, err := ratelimit.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=global")),
		ratelimit.WithRoute("POST", "/login", core.MustParsePolicy("1/1m;name=login")))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", ok)
	mux.HandleFunc("/", ok)
	h := stdhttp.Middleware(m)(mux)
	if rec := httpsuite.Do(h, "POST", "/login"); rec.Code != http.StatusNoContent || rec.Header().Get("RateLimit-Policy") != `"login";q=1;w=60` {
		t.Fatalf("first login: %d %v", rec.Code, rec.Header())
	}
	rec := httpsuite.Do(h, "POST", "/login")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" {
		t.Fatalf("second login: %d %v", rec.Code, rec.Header())
	}
	if ct := rec.Header().Get("Content-Type"); ct != fields.ContentTypeProblem {
		t.Errorf("Content-Type %q", ct)
	}
	if rec := httpsuite.Do(h, "GET", "/other"); rec.Code != http.StatusNoContent || rec.Header().Get("RateLimit") != `"global";r=99;t=1` {
		t.Errorf("other route: %d %v", rec.Code, rec.Header())
	}
}

func TestRouteMiddlewarePanicsOnInvalidPolicy(t *testing.T) {
	t.Parallel()
	m, err := ratelimit.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithPolicy(core.MustParsePolicy("100/1m")))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("no panic")
		}
	}()
	stdhttp.Route(m, core.Policy{Limit: 0})
}

func TestCheckWithAFrameworkPattern(t *testing.T) {
	t.Parallel()
	var route string
	m, err := ratelimit.New(ratelimit.WithLimiter(httpsuite.Limiter()),
		ratelimit.WithKeyFunc(func(r keyfuncs.Request) (string, error) { route = r.Route(); return "k", nil }),
		ratelimit.WithRoute("GET", "/users/:id", core.MustParsePolicy("1/1m;name=users")))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		rec := httptest.NewRecorder()
		if v := nethttp.Check(m, rec, httptest.NewRequest("GET", "/users/7", nil), "/users/:id", nil, nil, func(context.Context) int { return 0 }); v != want {
			t.Fatalf("request %d: %v, want %v", i+1, v, want)
		}
		if route != "/users/:id" {
			t.Fatalf("route %q", route)
		}
		if i == 1 && rec.Code != http.StatusTooManyRequests {
			t.Fatalf("status %d", rec.Code)
		}
	}
}

// TestRouteTableNeedsTheMux: a route table in front of anything but a
// ServeMux is refused unless the mux is named or the middleware runs inside
// it; patterns ServeMux never reports are refused too.
func TestRouteTableNeedsTheMux(t *testing.T) {
	t.Parallel()
	m, err := ratelimit.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
		ratelimit.WithRoute("GET", "/search", core.MustParsePolicy("1/1m;name=search")))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", ok)
	logging := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mux.ServeHTTP(w, r) })
	if _, err := stdhttp.Wrap(m, logging); !errors.Is(err, ratelimit.ErrInvalidConfig) {
		t.Fatalf("Wrap(non-mux) = %v, want ErrInvalidConfig", err)
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !errors.Is(r.(error), ratelimit.ErrInvalidConfig) {
				t.Errorf("Middleware(non-mux): recovered %v", r)
			}
		}()
		stdhttp.Middleware(m)(logging)
	}()
	h, err := stdhttp.Wrap(m, logging, stdhttp.WithMux(mux))
	if err != nil {
		t.Fatal(err)
	}
	if c := httpsuite.Do(h, "GET", "/search").Code; c != 204 {
		t.Fatalf("first: %d", c)
	}
	if c := httpsuite.Do(h, "GET", "/search").Code; c != 429 {
		t.Fatalf("WithMux: the route table did not apply: %d", c)
	}
	inner := http.NewServeMux()
	inner.Handle("GET /search", stdhttp.Middleware(m, stdhttp.InsideMux())(http.HandlerFunc(ok)))
	if c := httpsuite.Do(inner, "GET", "/search").Code; c != 429 {
		t.Fatalf("InsideMux: %d, want 429 (the same quota)", c)
	}
	for pattern, mention := range map[string]string{"/users/:id": "{name}", "/a/{b": "ServeMux rejects"} {
		bad, err := ratelimit.New(ratelimit.WithKeyFunc(keyfuncs.Constant("k")), ratelimit.WithRoute("GET", pattern, core.MustParsePolicy("1/1m")))
		if err != nil {
			t.Fatal(err)
		}
		var re *ratelimit.RouteError
		if _, err := stdhttp.Wrap(bad, http.NewServeMux()); !errors.As(err, &re) || !strings.Contains(err.Error(), mention) {
			t.Errorf("pattern %q: %v", pattern, err)
		}
	}
}

// TestRouteTheMuxDoesNotServe: with the mux known, a route table entry the
// mux routes elsewhere or nowhere is refused when wrapping; entries it
// serves, wildcards and "" for every method included, are accepted.
func TestRouteTheMuxDoesNotServe(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", ok)
	mux.HandleFunc("GET /users/{id}", ok)
	mux.HandleFunc("/files/{path...}", ok)
	for _, c := range []struct {
		method, pattern, mention string
	}{
		{"POST", "/login", ""},
		{"", "/login", ""},
		{"GET", "/users/{id}", ""},
		{"HEAD", "/users/{id}", ""},
		{"DELETE", "/files/{path...}", ""},
		{"POST", "/logni", "serves no route"},
		{"GET", "/login", "serves no route"},
		{"GET", "/users/{name}", `routes it to "GET /users/{id}"`},
	} {
		m := must.Do(ratelimit.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
			ratelimit.WithRoute(c.method, c.pattern, core.MustParsePolicy("1/1m"))))
		for name, wrap := range map[string]func() error{
			"the mux": func() error { _, err := stdhttp.Wrap(m, mux); return err },
			"WithMux": func() error { _, err := stdhttp.Wrap(m, http.NotFoundHandler(), stdhttp.WithMux(mux)); return err },
		} {
			err := wrap()
			var re *ratelimit.RouteError
			switch {
			case c.mention == "" && err != nil:
				t.Errorf("%s %q around %s: %v", c.method, c.pattern, name, err)
			case c.mention != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), c.mention)):
				t.Errorf("%s %q around %s: %v, want a RouteError mentioning %q", c.method, c.pattern, name, err, c.mention)
			}
		}
	}
}

// TestNilMiddlewareIsAClearError: a nil *ratelimit.Middleware is a
// configuration error, not a nil dereference.
func TestNilMiddlewareIsAClearError(t *testing.T) {
	t.Parallel()
	if _, err := stdhttp.Wrap(nil, http.NewServeMux()); !errors.Is(err, ratelimit.ErrInvalidConfig) {
		t.Fatalf("Wrap(nil) = %v", err)
	}
	defer func() {
		if err, _ := recover().(error); !errors.Is(err, ratelimit.ErrInvalidConfig) || !strings.Contains(err.Error(), "nil *Middleware") {
			t.Fatalf("Middleware(nil) panicked with %v", err)
		}
	}()
	stdhttp.Middleware(nil)
}
