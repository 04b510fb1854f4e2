package echorl

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/nethttp"
	"github.com/ratelimit-go/ratelimit/internal/routecheck"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// New builds a ratelimit.Middleware from opts (ratelimit.WithKeyFunc is
// required) and returns it as Echo middleware. See Middleware. Besides the errors of
// ratelimit.New, it returns a *ratelimit.RouteError for a route pattern Echo
// never reports (a wildcard written "{id}" instead of ":id").
func New(opts ...ratelimit.Option) (echo.MiddlewareFunc, error) {
	return routecheck.New(opts, func(m *ratelimit.Middleware) error { return CheckPatterns(m) }, Middleware)
}

// CheckPatterns returns a *ratelimit.RouteError for the first route table
// entry of m that Echo can never report as Context.Path: one with a net/http-style
// wildcard ("/users/{id}", which Echo writes "/users/:id"), or, when routes
// (the router's list, e.Routes()) are given, one that no route serves
// ("/logni" beside "/login"). Call it once the routes are registered.
func CheckPatterns(m *ratelimit.Middleware, routes ...*echo.Route) error {
	list := make([]routecheck.Route, len(routes))
	for i, r := range routes {
		list[i] = routecheck.Route{Method: r.Method, Path: r.Path}
	}
	return m.CheckPatterns(func(method, p string) string {
		if strings.ContainsAny(p, "{}") {
			return "Echo writes route parameters as :name and *, not {name}"
		}
		return routecheck.Unserved(method, p, list)
	})
}

// Middleware returns Echo middleware running m: for every request it
// checks the rate limit and sets the header fields, then either calls the
// next handler or answers itself (429, 4xx, or 503 when failing closed)
// and returns nil. Install it with Echo.Use, Group.Use or on a route, not
// with Echo.Pre (see the package documentation). Key functions reach the
// echo.Context through Context, and values stored with Context.Set through
// the request view's Context. It panics with the error of CheckPatterns
// when a route pattern can never match on Echo. The returned middleware is
// safe for concurrent use.
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

// Context returns the echo.Context of a request the Echo adapter handed to
// a key function, skip rule, cost function or plan function, or nil for a
// request from another adapter. Like r it is valid only during that call.
func Context(r keyfuncs.Request) echo.Context {
	c, _ := nethttp.Native(r).(echo.Context)
	return c
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
