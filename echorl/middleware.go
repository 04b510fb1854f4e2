package echorl

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/nethttp"
	"github.com/ratelimit-go/ratelimit/internal/routecheck"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// New builds a ratelimit.Middleware from opts and returns it as Echo
// middleware (see Middleware); it also returns CheckPatterns' errors.
func New(opts ...ratelimit.Option) (echo.MiddlewareFunc, error) {
	return routecheck.New(opts, func(m *ratelimit.Middleware) error { return CheckPatterns(m) }, Middleware)
}

// CheckPatterns returns a *ratelimit.RouteError for the first route table
// entry of m that Echo never reports: one written "{id}" instead of ":id",
// or, given the router's routes (e.Routes()), one no route serves. Call it
// once the routes are registered.
func CheckPatterns(m *ratelimit.Middleware, routes ...*echo.Route) error {
	return routecheck.Colon(m, "Echo writes route parameters as :name and *, not {name}", routes,
		func(r *echo.Route) routecheck.Route { return routecheck.Route{Method: r.Method, Path: r.Path} })
}

// Middleware returns Echo middleware running m, for Echo.Use, Group.Use or
// a route (not Echo.Pre): it checks the rate limit, sets the header fields,
// then calls the next handler or answers itself and returns nil. Key
// functions reach the echo.Context through Context. It panics with the
// error of CheckPatterns.
func Middleware(m *ratelimit.Middleware) echo.MiddlewareFunc {
	if err := CheckPatterns(m); err != nil {
		panic(err)
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			var err error
			nethttp.Check(m, c.Response(), c.Request(), c.Path(), c, lookup, func(ctx context.Context) int {
				if ctx != c.Request().Context() {
					c.SetRequest(c.Request().WithContext(ctx))
				}
				err = next(c)
				return status(c, err)
			})
			return err
		}
	}
}

// lookup finds a value stored with echo.Context.Set.
func lookup(native, key any) any {
	if k, ok := key.(string); ok {
		return native.(echo.Context).Get(k)
	}
	return nil
}

// Context returns the echo.Context behind r when this adapter handed r to a
// key, skip, cost or plan function; nil otherwise.
func Context(r keyfuncs.Request) echo.Context {
	c, _ := nethttp.Native(r).(echo.Context)
	return c
}

// Route returns middleware for a single route, checking policies instead
// of m's own (ratelimit.Middleware.Route), where the route is registered:
//
//	e.POST("/login", loginHandler, echorl.Route(m, login))
//
// It panics with the typed error when a policy is invalid; use m.Route and
// Middleware to handle it.
func Route(m *ratelimit.Middleware, policies ...core.Policy) echo.MiddlewareFunc {
	return routecheck.PerRoute(m, policies, Middleware)
}

// status is the status code of c's response once its handler returned
// err: Echo's error handler answers an error that nothing has answered
// yet, with an *echo.HTTPError's code or 500.
func status(c echo.Context, err error) int {
	if err == nil || c.Response().Committed {
		return c.Response().Status
	}
	if he := (*echo.HTTPError)(nil); errors.As(err, &he) {
		return he.Code
	}
	return http.StatusInternalServerError
}
