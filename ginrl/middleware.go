package ginrl

import (
	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// New builds a ratelimit.Middleware from opts (ratelimit.WithKeyFunc is
// required; a ratelimit.Config converts with its Options method) and
// returns it as Gin middleware. See Middleware.
func New(opts ...ratelimit.Option) (gin.HandlerFunc, error) {
	m, err := ratelimit.New(opts...)
	if err != nil {
		return nil, err
	}
	return Middleware(m), nil
}

// Middleware returns Gin middleware running m: for every request it checks
// the rate limit and sets the header fields, then either lets the chain
// continue or answers itself (429, 4xx, or 503 when failing closed) and
// aborts the chain. The returned handler is safe for concurrent use.
func Middleware(m *ratelimit.Middleware) gin.HandlerFunc {
	return func(c *gin.Context) {
		if stdhttp.Check(m, c.Writer, c.Request, c.FullPath()) == ratelimit.Handled {
			c.Abort()
		}
	}
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
	rm, err := m.Route(policies...)
	if err != nil {
		panic(err)
	}
	return Middleware(rm)
}
