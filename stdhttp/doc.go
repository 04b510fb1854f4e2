// Package stdhttp adapts the middleware of package ratelimit to net/http: a
// func(http.Handler) http.Handler for any handler, router or ServeMux.
//
// A middleware that wraps a ServeMux runs before the mux sets
// http.Request.Pattern, so when it has a route table (ratelimit.WithRoute)
// it asks the mux which pattern the request will match. In front of another
// handler that calls the mux, name the mux with WithMux; registered on the
// mux's own routes, declare InsideMux. A route table with neither, in front
// of a handler that is not a ServeMux, would limit nothing on its routes and
// is refused (ratelimit.ErrInvalidConfig). Route has no route table and runs
// anywhere:
//
//	mux.Handle("POST /login", stdhttp.Route(mw, loginPolicy)(loginHandler))
//
// Patterns are reported without their method: "POST /login" is the route
// "/login" with method POST, as on Gin, Echo and Fiber. Key functions reach
// the *http.Request through Request.
package stdhttp
