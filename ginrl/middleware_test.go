package ginrl_test

import (
	"net/http"
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
// pattern for a request that matched no route (httpsuite.RoutePatterns).
func TestRoutePatterns(t *testing.T) {
	httpsuite.RoutePatterns(t, "/files/*path", func(m *ratelimit.Middleware) http.Handler {
		r := gin.New()
		r.Use(ginrl.Middleware(m))
		r.GET("/users/:id", func(c *gin.Context) { c.Status(http.StatusNoContent) })
		r.GET("/files/*path", func(c *gin.Context) { c.Status(http.StatusNoContent) })
		return r
	})
}

// TestConstructors: New leaks no goroutine and refuses patterns in
// net/http's syntax.
func TestConstructors(t *testing.T) {
	httpsuite.RunConstructors(t, httpsuite.Constructors[gin.HandlerFunc]{
		New: ginrl.New, Route: ginrl.Route, Middleware: ginrl.Middleware,
		CheckServed: func(m *ratelimit.Middleware) error {
			r := gin.New()
			r.POST("/login", func(*gin.Context) {})
			return ginrl.CheckPatterns(m, r.Routes()...)
		},
	})
}
