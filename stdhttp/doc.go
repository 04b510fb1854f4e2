// Package stdhttp adapts the rate-limiting middleware of package ratelimit
// to net/http: a func(http.Handler) http.Handler that works with any
// handler, router or http.ServeMux.
//
// # Where the middleware runs relative to the ServeMux
//
// Go 1.22's ServeMux sets http.Request.Pattern when it routes a request,
// which happens inside ServeMux.ServeHTTP. A middleware that wraps the mux
// runs before that, when r.Pattern is still empty. So that per-route
// policies (ratelimit.WithRoute) still apply there, Middleware recognises a
// *http.ServeMux as the next handler and, when the route table is not
// empty, asks the mux which pattern the request will match
// (ServeMux.Handler) before checking; the mux then routes the request as
// usual. In front of anything else (a logging or recovery handler that
// calls the mux), name the mux with WithMux; registered on the mux's own
// routes, where r.Pattern is set when it runs, declare InsideMux. A route
// table with neither, in front of a handler that is not a ServeMux, would
// limit nothing on its routes, so Middleware refuses it (it panics with
// an error matching ratelimit.ErrInvalidConfig; Wrap returns it). Middleware built by Route
// has no route table and runs anywhere:
//
//	mux.Handle("POST /login", stdhttp.Route(mw, loginPolicy)(loginHandler))
//
// Route patterns are reported without their method: the mux pattern
// "POST /login" is the route "/login" with method POST, so that
// ratelimit.WithRoute("POST", "/login", ...) matches it exactly as it
// matches the same route on Gin, Echo or Fiber.
//
// Frameworks built on net/http that know their own route pattern (Gin,
// Echo) can call Check with their writer, request and pattern instead of
// implementing the middleware's request and response views again, or
// CheckNative to also hand key functions their own request value.
//
// Key functions reach the *http.Request through Request, and values that
// earlier middleware put in its context through the request view's Context
// (keyfuncs.ContextValue).
package stdhttp
