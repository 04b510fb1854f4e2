// Package ratelimit is the HTTP middleware of the rate limiter: one
// framework-neutral core that the adapters for net/http (stdhttp), Gin,
// Echo and Fiber share, so that a client sees the same statuses, headers and
// keys whatever framework serves it.
//
//	mw, err := ratelimit.New(
//		ratelimit.WithKeyFunc(keyfuncs.RemoteIP), // required: the key is always explicit
//		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
//		ratelimit.WithRoute("POST", "/login", core.MustParsePolicy("5/5m;name=login")),
//	)
//
// A configuration that could limit nothing (no policy, a route that can
// never match, plans without global policies) is refused with
// ErrInvalidConfig or a *RouteError.
//
// An adapter calls Middleware.Handle for every request with a
// keyfuncs.Request, an adapter.Response and the rest of its chain. Handle
// runs the chain when the request may proceed, with the request's Usage in
// its context when one is published, settles that Usage once the chain
// returns, and reports false when it has answered the request itself (a
// 429, or an error). All policies of a request are one atomic check: either
// all admit it or nothing is consumed.
//
// The default HeaderMode writes the IETF RateLimit fields (drafts 08 to 11),
// one list member per policy, seconds rounded up:
//
//	RateLimit-Policy: "api";q=100;w=60
//	RateLimit: "api";r=42;t=17
//
// docs/middleware.md walks through what a request goes through.
package ratelimit
