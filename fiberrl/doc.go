// Package fiberrl adapts the rate-limiting middleware of package ratelimit
// to Fiber (github.com/gofiber/fiber/v2): a fiber.Handler for the whole
// app, a group, or a single route.
//
//	m, err := ratelimit.New(
//		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
//		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
//	)
//	...
//	app := fiber.New()
//	app.Use(fiberrl.Middleware(m))
//	app.Post("/login", fiberrl.Route(m, core.MustParsePolicy("5/5m;name=login")), login)
//
// New builds the Middleware and the handler in one step.
//
// The adapter only translates: the request view (keyfuncs.Request) reads
// the fasthttp request behind the *fiber.Ctx, and the response is the
// context's fasthttp response. Fiber has no *http.Request and reuses its
// buffers once a handler returns, so every string the view hands out that
// could outlive the request (a header value, the path, the peer address)
// is a copy; absent headers cost nothing.
//
// # Route patterns
//
// Route, the per-route form, runs in the handler list of a route and
// reports that route's pattern, Ctx.Route().Path ("/users/:id").
//
// Middleware is for App.Use and Group.Use. Fiber makes such middleware a
// route of its own, matched by prefix, and chooses the request's route
// only after it has run, so Ctx.Route() there is the middleware's. So that
// route tables (ratelimit.WithRoute) still apply, Middleware, when its
// route table is not empty, finds the route Fiber will choose itself: the
// first route registered for the request's method whose pattern matches
// the path, under the app's CaseSensitive and StrictRouting settings.
// Static patterns cost a string comparison each; patterns with parameters
// or wildcards are matched with fiber.RoutePatternMatch. The route list is
// read from the app on first use and again whenever routes are added.
// Without a route table no route is resolved and the request view reports
// no pattern, as package stdhttp does outside its ServeMux.
//
// A request the middleware answers itself (429, a refused key, 503 when
// failing closed) does not reach the next handler, and the middleware
// returns nil: the response is complete.
package fiberrl
