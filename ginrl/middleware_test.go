package ginrl_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/ginrl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// A denied request aborts the chain: neither later middleware nor the
// handler runs.
func TestDenialAbortsTheChain(t *testing.T) {
	t.Parallel()
	mw, err := ginrl.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("1/1m;name=p")))
	if err != nil {
		t.Fatal(err)
	}
	var later, handled int
	r := gin.New()
	r.Use(mw, func(*gin.Context) { later++ })
	r.GET("/", func(c *gin.Context) { handled++; c.Status(http.StatusNoContent) })
	if rec := httpsuite.Do(r, "GET", "/"); rec.Code != http.StatusNoContent {
		t.Fatalf("first: %d", rec.Code)
	}
	rec := httpsuite.Do(r, "GET", "/")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" {
		t.Fatalf("second: %d %v", rec.Code, rec.Header())
	}
	if later != 1 || handled != 1 {
		t.Fatalf("later middleware ran %d times, handler %d times; want 1 and 1", later, handled)
	}
}

// The request view reports Gin's pattern, parameters and all, and no
// pattern for a request that matched no route.
func TestRoutePatterns(t *testing.T) {
	t.Parallel()
	var routes []string
	mw, err := ginrl.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithPolicy(core.MustParsePolicy("100/1m")),
		ratelimit.WithKeyFunc(keyfuncs.Compose(keyfuncs.RemoteIP, keyfuncs.Route)),
		ratelimit.WithRoute("GET", "/users/:id", core.MustParsePolicy("1/1m;name=user")),
		ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { routes = append(routes, e.Request.Route()) }))
	if err != nil {
		t.Fatal(err)
	}
	r := gin.New()
	r.Use(mw)
	r.GET("/users/:id", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	r.GET("/files/*path", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	if rec := httpsuite.Do(r, "GET", "/users/7"); rec.Code != http.StatusNoContent || rec.Header().Get("RateLimit-Policy") != `"user";q=1;w=60` {
		t.Fatalf("/users/7: %d %v", rec.Code, rec.Header())
	}
	if rec := httpsuite.Do(r, "GET", "/users/8"); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("/users/8 shares the route's quota: %d", rec.Code)
	}
	httpsuite.Do(r, "GET", "/files/a/b")
	if rec := httpsuite.Do(r, "GET", "/nowhere"); rec.Code != http.StatusNotFound {
		t.Fatalf("/nowhere: %d", rec.Code)
	}
	if want := []string{"/users/:id", "/users/:id", "/files/*path", ""}; !slices.Equal(routes, want) {
		t.Fatalf("routes %q, want %q", routes, want)
	}
}

// TestConstructors: New leaks no goroutine and refuses patterns in
// net/http's syntax.
func TestConstructors(t *testing.T) {
	httpsuite.RunConstructors(t, func(opts ...ratelimit.Option) (any, error) { return ginrl.New(opts...) }, httpsuite.Constructors{
		Route:      func(m *ratelimit.Middleware, ps ...core.Policy) any { return ginrl.Route(m, ps...) },
		Middleware: func(m *ratelimit.Middleware) any { return ginrl.Middleware(m) },
		CheckServed: func(m *ratelimit.Middleware) error {
			r := gin.New()
			r.POST("/login", func(*gin.Context) {})
			return ginrl.CheckPatterns(m, r.Routes()...)
		},
	})
}
