package echorl

import (
	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// New builds a ratelimit.Middleware from opts (ratelimit.WithKeyFunc is
// required; a ratelimit.Config converts with its Options method) and
// returns it as Echo middleware. See Middleware.
func New(opts ...ratelimit.Option) (echo.MiddlewareFunc, error) {
	m, err := ratelimit.New(opts...)
	if err != nil {
		return nil, err
	}
	return Middleware(m), nil
}

// Middleware returns Echo middleware running m: for every request it
// checks the rate limit and sets the header fields, then either calls the
// next handler or answers itself (429, 4xx, or 503 when failing closed)
// and returns nil. Install it with Echo.Use, Group.Use or on a route, not
// with Echo.Pre (see the package documentation). The returned middleware
// is safe for concurrent use.
func Middleware(m *ratelimit.Middleware) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if stdhttp.Check(m, c.Response(), c.Request(), c.Path()) == ratelimit.Handled {
				return nil
			}
			return next(c)
		}
	}
}

// Route returns middleware for a single route, checking policies instead
// of m's own (ratelimit.Middleware.Route), for use where the route is
// registered:
//
//	e.POST("/login", loginHandler, echorl.Route(m, login))
//
// It runs in addition to any middleware installed with Echo.Use. It
// panics when a policy is invalid: routes are registered by the program
// at start-up, and the panic's value is the typed error (matching
// core.ErrInvalidPolicy or ratelimit.ErrInvalidConfig). Use m.Route and
// Middleware to handle the error instead.
func Route(m *ratelimit.Middleware, policies ...core.Policy) echo.MiddlewareFunc {
	rm, err := m.Route(policies...)
	if err != nil {
		panic(err)
	}
	return Middleware(rm)
}
