// Package ginrl adapts the rate-limiting middleware of package ratelimit to
// Gin: a gin.HandlerFunc for the whole engine or a group, and a per-route
// form for the place where a route is registered.
//
//	m, err := ratelimit.New(
//		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
//		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
//	)
//	...
//	r := gin.New()
//	r.Use(ginrl.Middleware(m))
//	r.POST("/login", ginrl.Route(m, core.MustParsePolicy("5/5m;name=login")), login)
//
// New builds the Middleware and the handler in one step.
//
// The adapter only translates: Gin runs on net/http, so it hands the
// context's *http.Request and writer to the net/http adapter's check, the request view and
// response of package stdhttp, with Context.FullPath as the route pattern
// ("/users/:id", "" when no route matched). Gin routes a request before it
// runs any handler, so middleware installed with Engine.Use already sees the
// pattern and route tables (ratelimit.WithRoute) apply there.
//
// A request the middleware answers itself (429, a refused key, 503 when
// failing closed) is aborted: no later handler runs.
package ginrl
