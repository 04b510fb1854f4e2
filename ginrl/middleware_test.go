package ginrl_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/ginrl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

// A denied request aborts the chain: neither later middleware nor the
// handler runs.
func TestDenialStopsTheChain(t *testing.T) {
	httpsuite.DenialStopsTheChain(t, ginrl.New, func(mw gin.HandlerFunc, c *httpsuite.Chain) http.Handler {
		r := gin.New()
		r.Use(mw, func(*gin.Context) { c.Later++ })
		r.GET("/", func(ctx *gin.Context) { c.Handled++; ctx.Status(http.StatusNoContent) })
		return r
	})
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
