// Package ratelimit is the HTTP face of the rate limiter: a
// framework-neutral middleware core that the adapters for net/http
// (package stdhttp), Gin, Echo and Fiber share, so that a client sees the
// same status codes, the same headers and the same keys whatever framework
// serves it.
//
// A Middleware is built once from functional options:
//
//	mw, err := ratelimit.New(
//		ratelimit.WithKeyFunc(keyfuncs.RemoteIP), // required: the key is always explicit
//		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
//		ratelimit.WithRoute("POST", "/login", core.MustParsePolicy("5/5m;name=login")),
//		ratelimit.WithAlgorithm(core.SlidingWindow), // for policies that name none
//	)
//
// or, usually, through an adapter, such as stdhttp.New for net/http. A
// configuration that could limit nothing (no policy at all, a route that
// can never match, a route table the adapter cannot resolve, plans without
// global policies) is refused with a typed error (ErrInvalidConfig,
// *RouteError) rather than built.
//
// An adapter calls Middleware.Handle for every request, handing it a
// keyfuncs.Request (a read-only view of the request) and an
// adapter.Response (a way to set headers and write a body); package adapter
// holds what adapter writers implement, and the rest of its handler chain
// as a function of the request's context returning the response's status.
// Handle calls it when the request may proceed, with a context carrying the
// request's Usage when one is published (WithUsage, Route, a concurrency
// limit), and settles that Usage once it returns. It reports false when it
// has written a complete response itself (a 429, or an error).
//
// # What a request goes through
//
//  1. Skip rules (WithSkip): a request that matches one is let through
//     untouched, with no headers.
//  2. The key function (WithKeyFunc). keyfuncs.ErrSkip lets the request
//     through; a *keyfuncs.MissingKeyError refuses it with its status and a
//     problem document; any other error is a bug of the key function,
//     answered 500.
//  3. The policies: those of the route table entry for the request's method
//     and route pattern (WithRoute; a HEAD request falls back to the GET
//     entry, as routers serve HEAD with the GET handler), else those of the
//     caller's plan (WithPlans), else the global ones (WithPolicy), which
//     also apply to an empty or unknown plan.
//     Several policies are checked together in one atomic call: either all
//     admit the request, or it is denied and nothing is consumed.
//  4. The headers of the chosen HeaderMode, on every checked response,
//     admitted or denied.
//  5. When denied: Retry-After and the denied handler, by default a
//     429 application/problem+json document of the quota-exceeded problem
//     type naming the violated policies. When admitted by a leaky bucket
//     that asks for a delay: the request is held, in its own goroutine, for
//     at most the policy's MaxDelay (WithMaxDelay, default 1s).
//  6. When the limiter fails: the error handler, which by default fails open
//     (the request proceeds, without rate-limit headers) or, with
//     WithFailureMode(FailClosed), answers 503. Internal error text never
//     reaches a response.
//  7. When the handler has returned: the slots of concurrency limits
//     (core.Concurrency) go back, and with WithUsage the request's cost is
//     settled: refunded when the predicate does not count the response,
//     or changed to what the handler set (Usage.SetCost).
//
// Observers registered with WithObserver see every outcome.
//
// # Headers
//
// The default HeaderMode writes the structured fields of the IETF
// RateLimit header draft (revisions 08 to 11), one list member per policy:
//
//	RateLimit-Policy: "api";q=100;w=60
//	RateLimit: "api";r=42;t=17
//
// Other modes write draft 07, draft 06, the legacy X-RateLimit-* fields, or
// nothing. Seconds are whole and rounded up; a 429 carries Retry-After equal
// to the t of the binding policy, at least 1.
package ratelimit
