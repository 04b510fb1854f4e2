// Package fiberrl adapts the middleware of package ratelimit to Fiber
// (github.com/gofiber/fiber/v2), for the whole app, a group or a route:
//
//	app := fiber.New()
//	app.Use(fiberrl.Middleware(m)) // m: a *ratelimit.Middleware
//	app.Post("/login", fiberrl.Route(m, core.MustParsePolicy("5/5m;name=login")), login)
//
// Fiber reuses its buffers once a handler returns, so every string the
// request view hands out (a header value, the path, the peer address) is a
// copy.
//
// Route reports its route's pattern, Ctx.Route().Path. Fiber chooses a
// request's route only after the middleware of App.Use has run, so
// Middleware, when it has a route table, finds the route Fiber will choose:
// of the routes of the method that Fiber tries for the path's first three
// bytes, the first registered whose pattern matches the path, under the
// app's CaseSensitive and StrictRouting settings, re-reading the route list
// when routes are added. Without a route table it reports no pattern, so
// keyfuncs.Route keys every request as unmatched there: key by route with
// Route on each route instead. A request the middleware answers itself does
// not reach the next handler, and the middleware returns nil.
package fiberrl
