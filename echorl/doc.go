// Package echorl adapts the rate-limiting middleware of package ratelimit
// to Echo (github.com/labstack/echo/v4): an echo.MiddlewareFunc for the
// whole server, a group, or a single route.
//
//	m, err := ratelimit.New(
//		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
//		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
//	)
//	...
//	e := echo.New()
//	e.Use(echorl.Middleware(m))
//	e.POST("/login", login, echorl.Route(m, core.MustParsePolicy("5/5m;name=login")))
//
// New builds the Middleware and the middleware function in one step.
//
// The adapter only translates: Echo runs on net/http, so it hands the
// context's *http.Request and response writer to the net/http adapter's check, the request
// view and response of package stdhttp, with Context.Path as the route
// pattern ("/users/:id", "" when no route matched). Echo routes a request
// before it runs the middleware installed with Echo.Use, so that middleware
// already sees the pattern and route tables (ratelimit.WithRoute) apply
// there. Middleware installed with Echo.Pre runs before routing and sees no
// pattern: install the rate limiter with Use.
//
// A request the middleware answers itself (429, a refused key, 503 when
// failing closed) does not reach the next handler, and the middleware
// returns nil: the response is complete.
package echorl
