package ginrl

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/nethttp"
	"github.com/ratelimit-go/ratelimit/internal/routecheck"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// New builds a ratelimit.Middleware from opts and returns it as Gin
// middleware (see Middleware); it also returns CheckPatterns' errors.
func New(opts ...ratelimit.Option) (gin.HandlerFunc, error) {
	return routecheck.New(opts, func(m *ratelimit.Middleware) error { return CheckPatterns(m) }, Middleware)
}

// CheckPatterns returns a *ratelimit.RouteError for the first route table
// entry of m that Gin never reports: one written "{id}" instead of ":id",
// or, given the router's routes (r.Routes()), one no route serves. Call it
// once the routes are registered.
func CheckPatterns(m *ratelimit.Middleware, routes ...gin.RouteInfo) error {
	return routecheck.Colon(m, "Gin writes route parameters as :name and *name, not {name}", routes,
		func(r gin.RouteInfo) routecheck.Route { return routecheck.Route{Method: r.Method, Path: r.Path} })
}

// Middleware returns Gin middleware running m: it checks the rate limit,
// sets the header fields, then lets the chain continue or answers itself
// and aborts it. Key functions reach the *gin.Context through Context. It
// panics with the error of CheckPatterns.
func Middleware(m *ratelimit.Middleware) gin.HandlerFunc {
	if err := CheckPatterns(m); err != nil {
		panic(err)
	}
	return func(c *gin.Context) {
		if !nethttp.Check(m, c.Writer, c.Request, c.FullPath(), c, lookup, func(ctx context.Context) int {
			if ctx != c.Request.Context() {
				c.Request = c.Request.WithContext(ctx)
			}
			c.Next()
			return c.Writer.Status()
		}) {
			c.Abort()
		}
	}
}

// lookup finds a value stored with gin.Context.Set.
func lookup(native, key any) any {
	v, _ := native.(*gin.Context).Get(key)
	return v
}

// Context returns the *gin.Context behind r when this adapter handed r to a
// key, skip, cost or plan function; nil otherwise.
func Context(r keyfuncs.Request) *gin.Context {
	c, _ := nethttp.Native(r).(*gin.Context)
	return c
}

// Route returns middleware for a single route, checking policies instead
// of m's own (ratelimit.Middleware.Route), where the route is registered:
//
//	r.POST("/login", ginrl.Route(m, login), loginHandler)
//
// It panics with the typed error when a policy is invalid; use m.Route and
// Middleware to handle it.
func Route(m *ratelimit.Middleware, policies ...core.Policy) gin.HandlerFunc {
	return routecheck.PerRoute(m, policies, Middleware)
}
