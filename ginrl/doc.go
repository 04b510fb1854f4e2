// Package ginrl adapts the middleware of package ratelimit to Gin, for the
// whole engine, a group or a route:
//
//	r := gin.New()
//	r.Use(ginrl.Middleware(m)) // m: a *ratelimit.Middleware
//	r.POST("/login", ginrl.Route(m, core.MustParsePolicy("5/5m;name=login")), login)
//
// The route pattern is Context.FullPath ("/users/:id"); Gin routes before
// any handler runs, so route tables apply to Engine.Use. A request the
// middleware answers itself (429, a refused key, 503) is aborted.
package ginrl
