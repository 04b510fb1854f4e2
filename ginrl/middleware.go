package ginrl

import (
	"context"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/nethttp"
	"github.com/ratelimit-go/ratelimit/internal/routecheck"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// New builds a ratelimit.Middleware from opts (ratelimit.WithKeyFunc is
// required) and returns it as Gin middleware. See Middleware. Besides the errors of
// ratelimit.New, it returns a *ratelimit.RouteError for a route pattern Gin
// never reports (a wildcard written "{id}" instead of ":id").
func New(opts ...ratelimit.Option) (gin.HandlerFunc, error) {
	return routecheck.New(opts, func(m *ratelimit.Middleware) error { return CheckPatterns(m) }, Middleware)
}

// CheckPatterns returns a *ratelimit.RouteError for the first route table
// entry of m that Gin can never report as Context.FullPath: one with a net/http-style
// wildcard ("/users/{id}", which Gin writes "/users/:id"), or, when routes
// (the router's list, r.Routes()) are given, one that no route serves
// ("/logni" beside "/login"). Call it once the routes are registered.
func CheckPatterns(m *ratelimit.Middleware, routes ...gin.RouteInfo) error {
	list := make([]routecheck.Route, len(routes))
	for i, r := range routes {
		list[i] = routecheck.Route{Method: r.Method, Path: r.Path}
	}
	return m.CheckPatterns(func(method, p string) string {
		if strings.ContainsAny(p, "{}") {
			return "Gin writes route parameters as :name and *name, not {name}"
		}
		return routecheck.Unserved(method, p, list)
	})
}

// Middleware returns Gin middleware running m: for every request it checks
// the rate limit and sets the header fields, then either lets the chain
// continue or answers itself (429, 4xx, or 503 when failing closed) and
// aborts the chain. Key functions reach the *gin.Context through Context,
// and values stored with Context.Set through the request view's Context.
// It panics with the error of CheckPatterns when a route pattern can never
// match on Gin: routes are set up at start-up, and a limit that silently
// limits nothing is worse than a failed start. The returned handler is safe
// for concurrent use.
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

// Context returns the *gin.Context of a request the Gin adapter handed to a
// key function, skip rule, cost function or plan function, or nil for a
// request from another adapter. Like r it is valid only during that call.
func Context(r keyfuncs.Request) *gin.Context {
	c, _ := nethttp.Native(r).(*gin.Context)
	return c
}

// Route returns middleware for a single route, checking policies instead
// of m's own (ratelimit.Middleware.Route), for use where the route is
// registered:
//
//	r.POST("/login", ginrl.Route(m, login), loginHandler)
//
// It runs in addition to any middleware installed with Engine.Use. Like
// Gin given a malformed route, it panics when a policy is invalid: routes
// are registered by the program at start-up, and the panic's value is the
// typed error (matching core.ErrInvalidPolicy or
// ratelimit.ErrInvalidConfig). Use m.Route and Middleware to handle the
// error instead.
func Route(m *ratelimit.Middleware, policies ...core.Policy) gin.HandlerFunc {
	return routecheck.PerRoute(m, policies, Middleware)
}
