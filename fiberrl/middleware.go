package fiberrl

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/routecheck"
)

// New builds a ratelimit.Middleware from opts and returns it as a Fiber
// handler (see Middleware); it also returns CheckPatterns' errors.
func New(opts ...ratelimit.Option) (fiber.Handler, error) {
	return routecheck.New(opts, func(m *ratelimit.Middleware) error { return CheckPatterns(m) }, Middleware)
}

// CheckPatterns returns a *ratelimit.RouteError for the first route table
// entry of m that Fiber never reports: one written "{id}" instead of ":id",
// or, given the app's routes (app.GetRoutes()), one no route serves. Call
// it once the routes are registered.
func CheckPatterns(m *ratelimit.Middleware, routes ...fiber.Route) error {
	return routecheck.Colon(m, "Fiber writes route parameters as :name, * and +, not {name}", routes,
		func(r fiber.Route) routecheck.Route { return routecheck.Route{Method: r.Method, Path: r.Path} })
}

// Middleware returns a Fiber handler running m, for App.Use or Group.Use:
// it checks the rate limit, sets the header fields, then calls Ctx.Next or
// answers itself and returns nil. With a route table it finds the route
// Fiber will choose (see the package documentation). Key functions reach
// the *fiber.Ctx through Ctx. It panics with the error of CheckPatterns.
func Middleware(m *ratelimit.Middleware) fiber.Handler {
	if err := CheckPatterns(m); err != nil {
		panic(err)
	}
	var routes *resolver
	m.CheckPatterns(func(string, string) string {
		routes = new(resolver)
		return ""
	})
	return handler(m, false, routes)
}

// handler runs m; the request view reports Ctx.Route().Path as the
// pattern when perRoute, else the pattern routes resolves, if any.
func handler(m *ratelimit.Middleware, perRoute bool, routes *resolver) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var err error
		next := func(ctx context.Context) int {
			if ctx != c.UserContext() {
				c.SetUserContext(ctx)
			}
			err = c.Next()
			return status(c, err)
		}
		switch e := (exchange{c}); {
		case perRoute:
			m.Handle(c.UserContext(), routeExchange{e}, routeExchange{e}, next)
		case routes != nil:
			t := tableExchanges.Get().(*tableExchange)
			*t = tableExchange{exchange: e, routes: routes}
			m.Handle(c.UserContext(), t, t, next)
			*t = tableExchange{}
			tableExchanges.Put(t)
		default:
			m.Handle(c.UserContext(), e, e, next)
		}
		return err
	}
}

// Route returns a handler for a single route, checking policies instead of
// m's own (ratelimit.Middleware.Route), in the route's handler list:
//
//	app.Post("/login", fiberrl.Route(m, login), loginHandler)
//
// It panics with the typed error when a policy is invalid; use m.Route and
// Middleware to handle it.
func Route(m *ratelimit.Middleware, policies ...core.Policy) fiber.Handler {
	return routecheck.PerRoute(m, policies, func(rm *ratelimit.Middleware) fiber.Handler { return handler(rm, true, nil) })
}

// status is the status code of c's response once its handler returned
// err: Fiber's error handler answers an error with a *fiber.Error's code or
// 500.
func status(c *fiber.Ctx, err error) int {
	if err == nil {
		return c.Response().StatusCode()
	}
	if fe := (*fiber.Error)(nil); errors.As(err, &fe) {
		return fe.Code
	}
	return fiber.StatusInternalServerError
}
