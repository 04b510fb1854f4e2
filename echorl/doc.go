// Package echorl adapts the middleware of package ratelimit to Echo
// (github.com/labstack/echo/v4), for the whole server, a group or a route:
//
//	e := echo.New()
//	e.Use(echorl.Middleware(m)) // m: a *ratelimit.Middleware
//	e.POST("/login", login, echorl.Route(m, core.MustParsePolicy("5/5m;name=login")))
//
// The route pattern is Context.Path ("/users/:id"). Echo routes before the
// middleware of Echo.Use runs, so route tables apply there; middleware of
// Echo.Pre sees no pattern. A request the middleware answers itself (429, a
// refused key, 503) does not reach the next handler, and the middleware
// returns nil.
package echorl
