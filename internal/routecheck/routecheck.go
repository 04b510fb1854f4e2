// Package routecheck holds what the framework adapters share around a
// Middleware: building one, per-route middleware, and telling whether a
// framework's route list serves a route table entry.
package routecheck

import (
	"strings"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
)

// Route is one route of a framework's list: its method and its pattern as
// the framework spells it.
type Route struct{ Method, Path string }

// unserved returns why routes do not serve the entry (method, pattern), ""
// when one of them does or when routes is empty (nothing to check against).
// An entry for every method ("") needs a route of any method; a HEAD entry
// is served by a GET route, as the routers serve HEAD.
func unserved(method, pattern string, routes []Route) string {
	if len(routes) == 0 {
		return ""
	}
	for _, r := range routes {
		if r.Path == pattern && (method == "" || r.Method == method || method == "HEAD" && r.Method == "GET") {
			return ""
		}
	}
	return "the router serves no such route, so the entry would never apply"
}

// Colon checks m's route table for a framework that writes parameters as
// :name (syntax says how), against its route list, of which route gives
// each one's method and pattern, when it is given.
func Colon[R any](m *ratelimit.Middleware, syntax string, routes []R, route func(R) Route) error {
	list := make([]Route, len(routes))
	for i, r := range routes {
		list[i] = route(r)
	}
	return m.CheckPatterns(func(method, p string) string {
		if strings.ContainsAny(p, "{}") {
			return syntax
		}
		return unserved(method, p, list)
	})
}

// New builds a Middleware from opts and returns it wrapped by wrap once
// check accepts its route table.
func New[H any](opts []ratelimit.Option, check func(*ratelimit.Middleware) error, wrap func(*ratelimit.Middleware) H) (H, error) {
	m, err := ratelimit.New(opts...)
	if err == nil {
		err = check(m)
	}
	if err != nil {
		var none H
		return none, err
	}
	return wrap(m), nil
}

// PerRoute returns m.Route(policies...) wrapped by wrap, and panics with the
// typed error when a policy is invalid.
func PerRoute[H any](m *ratelimit.Middleware, policies []core.Policy, wrap func(*ratelimit.Middleware) H) H {
	rm, err := m.Route(policies...)
	if err != nil {
		panic(err)
	}
	return wrap(rm)
}
