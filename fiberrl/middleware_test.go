package fiberrl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/fiberrl"
	"github.com/ratelimit-go/ratelimit/internal/fibertest"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

func newFiber(cfg ...fiber.Config) *fiber.App {
	c := fiber.Config{DisableStartupMessage: true}
	if len(cfg) > 0 {
		c = cfg[0]
		c.DisableStartupMessage = true
	}
	return fiber.New(c)
}

func noContent(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) }

// do sends one request through app.Test (fasthttp over an in-memory
// connection).
func do(t *testing.T, app *fiber.App, method, target string) *http.Response {
	t.Helper()
	res, err := app.Test(httptest.NewRequest(method, target, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// A denied request reaches neither later middleware nor the handler, and
// Fiber's error handler is not involved: the 429 is complete.
func TestDenialStopsTheChain(t *testing.T) {
	httpsuite.DenialStopsTheChain(t, fiberrl.New, func(mw fiber.Handler, c *httpsuite.Chain) http.Handler {
		app := newFiber(fiber.Config{ErrorHandler: func(*fiber.Ctx, error) error { c.Errors++; return nil }})
		app.Use(mw, func(ctx *fiber.Ctx) error { c.Later++; return ctx.Next() })
		app.Get("/", func(ctx *fiber.Ctx) error { c.Handled++; return noContent(ctx) })
		return fibertest.Handler(app)
	})
}

// patternRecorder is a Middleware with a route table (so that Use
// middleware resolves patterns) recording the pattern of every request.
type patternRecorder struct {
	mu     sync.Mutex
	routes []string
}

func (p *patternRecorder) middleware(t *testing.T, opts ...ratelimit.Option) *ratelimit.Middleware {
	m, err := ratelimit.New(append([]ratelimit.Option{ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("1000/1m")),
		ratelimit.WithRoute("", "/never", core.MustParsePolicy("1/1m")),
		ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) {
			p.mu.Lock()
			p.routes = append(p.routes, e.Request.Route())
			p.mu.Unlock()
		})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (p *patternRecorder) last(t *testing.T) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.routes) == 0 {
		t.Fatal("no request seen")
	}
	return p.routes[len(p.routes)-1]
}

// Use middleware reports the pattern of the route Fiber then chooses,
// under the app's routing settings.
func TestUseMiddlewareResolvesPatterns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		cfg    fiber.Config
		method string
		target string
		want   string
	}{
		{"static", fiber.Config{}, "GET", "/login", "/login"},
		{"root", fiber.Config{}, "GET", "/", "/"},
		{"parameter", fiber.Config{}, "GET", "/users/42", "/users/:id"},
		{"optional parameter absent", fiber.Config{}, "GET", "/posts", "/posts/:slug?"},
		{"wildcard", fiber.Config{}, "GET", "/files/a/b.txt", "/files/*"},
		{"group", fiber.Config{}, "GET", "/api/v1/items/9", "/api/v1/items/:id"},
		{"first registered wins", fiber.Config{}, "GET", "/users/me", "/users/:id"},
		{"HEAD uses GET routes", fiber.Config{}, "HEAD", "/login", "/login"},
		{"method without that route", fiber.Config{}, "DELETE", "/login", ""},
		{"no route", fiber.Config{}, "GET", "/nowhere", ""},
		{"case-insensitive by default", fiber.Config{}, "GET", "/LOGIN", "/login"},
		{"case-sensitive", fiber.Config{CaseSensitive: true}, "GET", "/LOGIN", ""},
		{"parameter, case-insensitive", fiber.Config{}, "GET", "/USERS/42", "/users/:id"},
		{"parameter, case-sensitive", fiber.Config{CaseSensitive: true}, "GET", "/USERS/42", ""},
		// Fiber folds ASCII letters only: the long s is not an s.
		{"static, non-ASCII", fiber.Config{UnescapePath: true}, "GET", "/u\u017fers/me", ""},
		{"parameter, non-ASCII", fiber.Config{UnescapePath: true}, "GET", "/u\u017fers/42", ""},
		{"parameter first", fiber.Config{}, "GET", "/de/about", "/:lang/about"},
		{"wildcard without its slash", fiber.Config{}, "GET", "/files", "/files/*"},
		{"trailing slash by default", fiber.Config{}, "GET", "/login/", "/login"},
		{"strict routing", fiber.Config{StrictRouting: true}, "GET", "/login/", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rec patternRecorder
			app := newFiber(c.cfg)
			app.Use(fiberrl.Middleware(rec.middleware(t)))
			app.Get("/", noContent)
			app.Get("/login", noContent)
			app.Get("/users/:id", noContent)
			app.Get("/users/me", noContent)
			app.Get("/posts/:slug?", noContent)
			app.Get("/files/*", noContent)
			app.Group("/api").Group("/v1").Get("/items/:id", noContent)
			app.Get("/:lang/about", noContent)
			do(t, app, c.method, c.target)
			if got := rec.last(t); got != c.want {
				t.Fatalf("%s %s: pattern %q, want %q", c.method, c.target, got, c.want)
			}
		})
	}
}

// Without a route table Use middleware reports no pattern, as the package
// documentation says, so keyfuncs.Route keys every request alike; Route on
// each route keys them apart.
func TestUseMiddlewareWithoutRouteTable(t *testing.T) {
	t.Parallel()
	byRoute := func() *ratelimit.Middleware {
		m, err := ratelimit.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithKeyFunc(keyfuncs.Route),
			ratelimit.WithPolicy(core.MustParsePolicy("1/1m")))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	app := newFiber()
	app.Use(fiberrl.Middleware(byRoute()))
	app.Get("/a", noContent)
	app.Get("/b", noContent)
	if a, b := do(t, app, "GET", "/a").StatusCode, do(t, app, "GET", "/b").StatusCode; a != http.StatusNoContent || b != http.StatusTooManyRequests {
		t.Fatalf("GET /a %d, GET /b %d: want 204 and 429, one key for both", a, b)
	}
	m := byRoute()
	app = newFiber()
	app.Get("/a", fiberrl.Route(m, core.MustParsePolicy("1/1m")), noContent)
	app.Get("/b", fiberrl.Route(m, core.MustParsePolicy("1/1m")), noContent)
	if a, b := do(t, app, "GET", "/a").StatusCode, do(t, app, "GET", "/b").StatusCode; a != http.StatusNoContent || b != http.StatusNoContent {
		t.Fatalf("GET /a %d, GET /b %d: want 204 twice, a key per route", a, b)
	}
}

// Routes added after the first request are seen.
func TestUseMiddlewareSeesRoutesAddedLater(t *testing.T) {
	t.Parallel()
	var rec patternRecorder
	app := newFiber()
	app.Use(fiberrl.Middleware(rec.middleware(t)))
	app.Get("/a", noContent)
	do(t, app, "GET", "/b")
	if got := rec.last(t); got != "" {
		t.Fatalf("before: %q", got)
	}
	app.Get("/b", noContent)
	do(t, app, "GET", "/b")
	if got := rec.last(t); got != "/b" {
		t.Fatalf("after: %q, want /b", got)
	}
}

// The per-route form reports its route's pattern, and the client sees the
// fields of both checks.
func TestRouteMiddleware(t *testing.T) {
	t.Parallel()
	var rec patternRecorder
	m := rec.middleware(t)
	app := newFiber()
	app.Use(fiberrl.Middleware(m))
	app.Post("/users/:id/login", fiberrl.Route(m, core.MustParsePolicy("1/1m;name=login")), noContent)
	res := do(t, app, "POST", "/users/7/login")
	if res.StatusCode != http.StatusNoContent || res.Header.Get("RateLimit") != `"1000/1m";r=999;t=1, "login";r=0;t=60` {
		t.Fatalf("first login: %d %v", res.StatusCode, res.Header)
	}
	if got := rec.last(t); got != "/users/:id/login" {
		t.Fatalf("pattern %q", got)
	}
	if res := do(t, app, "POST", "/users/8/login"); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second login: %d", res.StatusCode)
	}
}

// Fiber reuses a connection's buffers for its next request. Strings the
// request view returned (a key made of a header value, the path, the peer
// address) must still read the same after many requests on one
// keep-alive connection.
func TestStringsOutliveTheRequest(t *testing.T) {
	t.Parallel()
	type seen struct{ key, path, remote string }
	var mu sync.Mutex
	var kept []seen
	mw, err := fiberrl.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithPolicy(core.MustParsePolicy("1000/1m")),
		ratelimit.WithKeyFunc(func(r keyfuncs.Request) (string, error) {
			s := seen{r.Header("X-Key"), r.Path(), r.RemoteAddr()}
			mu.Lock()
			kept = append(kept, s)
			mu.Unlock()
			return s.key, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	app := newFiber()
	app.Use(mw)
	app.Get("/*", noContent)
	base := serveFiber(t, app)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	const n = 20
	for i := range n {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/path-%02d", base, i), nil)
		req.Header.Set("X-Key", fmt.Sprintf("key-%02d-%s", i, "abcdefghijklmnopqrstuvwxyz"[i:]))
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("request %d: %d", i, res.StatusCode)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(kept) != n {
		t.Fatalf("%d requests seen", len(kept))
	}
	for i, s := range kept {
		if s.key != fmt.Sprintf("key-%02d-%s", i, "abcdefghijklmnopqrstuvwxyz"[i:]) || s.path != fmt.Sprintf("/path-%02d", i) {
			t.Fatalf("request %d reads %+v after the connection moved on", i, s)
		}
		if s.remote != kept[0].remote || s.remote == "" {
			t.Fatalf("request %d: remote %q, first %q", i, s.remote, kept[0].remote)
		}
	}
}

// The peer address reads as net/http spells RemoteAddr, an IPv4-mapped
// address as IPv4 (as net.TCPAddr.String gives it).
func TestRemoteAddrFormat(t *testing.T) {
	t.Parallel()
	var got string
	mw, err := fiberrl.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithPolicy(core.MustParsePolicy("1000/1m")),
		ratelimit.WithKeyFunc(func(r keyfuncs.Request) (string, error) { got = r.RemoteAddr(); return "k", nil }))
	if err != nil {
		t.Fatal(err)
	}
	app := newFiber()
	app.Use(mw)
	app.Get("/", noContent)
	h := fibertest.Handler(app)
	for _, c := range []struct{ remote, want string }{
		{"192.0.2.1:1234", "192.0.2.1:1234"},
		{"[2001:db8:1:2::7]:443", "[2001:db8:1:2::7]:443"},
		{"[fe80::1%eth0]:80", "[fe80::1%eth0]:80"},
		{"[::ffff:192.0.2.9]:8080", "192.0.2.9:8080"},
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = c.remote
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent || got != c.want {
			t.Errorf("peer %s: status %d, RemoteAddr %q, want %q", c.remote, rec.Code, got, c.want)
		}
	}
}

// Concurrent requests resolve their own patterns: the route snapshot is
// built once and shared.
func TestConcurrentResolution(t *testing.T) {
	t.Parallel()
	var rec patternRecorder
	var mu sync.Mutex
	wrong := 0
	check := rec.middleware(t, ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) {
		want := "/a/:id"
		if e.Request.Path() == "/b" {
			want = "/b"
		}
		if e.Request.Route() != want {
			mu.Lock()
			wrong++
			mu.Unlock()
		}
	}))
	app := newFiber()
	app.Use(fiberrl.Middleware(check))
	app.Get("/a/:id", noContent)
	app.Get("/b", noContent)
	h := fibertest.Handler(app)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				target := "/b"
				if (g+i)%2 == 0 {
					target = fmt.Sprintf("/a/%d", i)
				}
				rr := httptest.NewRecorder()
				h.ServeHTTP(rr, httptest.NewRequest("GET", target, nil))
				if rr.Code != http.StatusNoContent {
					t.Errorf("%s: %d", target, rr.Code)
					return
				}
			}
		})
	}
	wg.Wait()
	if wrong != 0 {
		t.Fatalf("%d of 400 requests saw the wrong pattern", wrong)
	}
}

// The request's context, as key functions see it, is Ctx.UserContext with
// Ctx.Locals in front: its deadline, its end and its values.
func TestRequestContext(t *testing.T) {
	t.Parallel()
	type ctxKey string
	deadline := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var got struct {
		deadline      time.Time
		ok, done      bool
		err           error
		local, parent any
	}
	mw, err := fiberrl.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithPolicy(core.MustParsePolicy("1000/1m")),
		ratelimit.WithKeyFunc(func(r keyfuncs.Request) (string, error) {
			ctx := r.Context()
			got.deadline, got.ok = ctx.Deadline()
			select {
			case <-ctx.Done():
				got.done = true
			default:
			}
			got.err, got.local, got.parent = ctx.Err(), ctx.Value(ctxKey("local")), ctx.Value(ctxKey("parent"))
			return "k", nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	app := newFiber()
	app.Use(func(c *fiber.Ctx) error {
		ctx, cancel := context.WithDeadline(context.WithValue(context.Background(), ctxKey("parent"), "p"), deadline)
		cancel()
		c.SetUserContext(ctx)
		c.Locals(ctxKey("local"), "l")
		return c.Next()
	}, mw)
	app.Get("/", noContent)
	do(t, app, "GET", "/")
	if !got.ok || !got.deadline.Equal(deadline) || !got.done || !errors.Is(got.err, context.Canceled) || got.local != "l" || got.parent != "p" {
		t.Fatalf("the key function's context: %+v", got)
	}
}

// TestConstructors: New leaks no goroutine and refuses patterns in
// net/http's syntax.
func TestConstructors(t *testing.T) {
	httpsuite.RunConstructors(t, httpsuite.Constructors[fiber.Handler]{
		New: fiberrl.New, Route: fiberrl.Route, Middleware: fiberrl.Middleware,
		CheckServed: func(m *ratelimit.Middleware) error {
			app := fiber.New()
			app.Post("/login", func(*fiber.Ctx) error { return nil })
			return fiberrl.CheckPatterns(m, app.GetRoutes()...)
		},
	})
}
