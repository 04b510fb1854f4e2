package fiberrl

import (
	"strings"
	"sync/atomic"

	"github.com/gofiber/fiber/v2"
)

// resolver finds the pattern of the route Fiber will choose for a request,
// for middleware that runs before the choice (see the package
// documentation). It is safe for concurrent use.
type resolver struct {
	table atomic.Pointer[routeTable]
}

// routeTable is a snapshot of an app's routes, by method, in the order
// Fiber tries them.
type routeTable struct {
	app      *fiber.App
	handlers uint32 // the app's HandlersCount when the snapshot was taken
	cfg      fiber.Config
	byMethod map[string][]pattern
}

// pattern is one route's pattern, prepared for matching.
type pattern struct {
	path   string // as registered: what Route reports
	static bool   // no parameters, wildcards or escapes
	// pretty is a static pattern as matched (see trimSlash); for any other,
	// the constant part before its first parameter, wildcard or escape,
	// without a trailing slash: a prefix of every path it matches.
	pretty string
}

// lookup returns the pattern of the first route for method matching path,
// or "" when none does.
func (r *resolver) lookup(app *fiber.App, method, path string) string {
	t := r.table.Load()
	if t == nil || t.app != app || t.handlers != app.HandlersCount() {
		t = newRouteTable(app)
		r.table.Store(t)
	}
	path = trimSlash(path, t.cfg.StrictRouting)
	for _, p := range t.byMethod[method] {
		if p.static {
			if p.pretty == path || (!t.cfg.CaseSensitive && equalASCIIFold(p.pretty, path)) {
				return p.path
			}
			continue
		}
		if hasPrefix(path, p.pretty, t.cfg.CaseSensitive) && fiber.RoutePatternMatch(path, p.path, t.cfg) {
			return p.path
		}
	}
	return ""
}

func newRouteTable(app *fiber.App) *routeTable {
	cfg := app.Config()
	t := &routeTable{
		app:      app,
		handlers: app.HandlersCount(),
		cfg:      fiber.Config{CaseSensitive: cfg.CaseSensitive, StrictRouting: cfg.StrictRouting},
		byMethod: make(map[string][]pattern),
	}
	for _, rt := range app.GetRoutes(true) {
		p := pattern{path: rt.Path}
		if i := strings.IndexAny(rt.Path, ":*+\\"); i >= 0 {
			p.pretty = strings.TrimRight(rt.Path[:i], "/")
		} else {
			p.static, p.pretty = true, trimSlash(rt.Path, cfg.StrictRouting)
		}
		t.byMethod[rt.Method] = append(t.byMethod[rt.Method], p)
	}
	return t
}

// trimSlash returns path without its trailing slashes unless routing is
// strict, as Fiber matches it.
func trimSlash(path string, strict bool) string {
	if strict || len(path) <= 1 {
		return path
	}
	if path = strings.TrimRight(path, "/"); path == "" {
		return "/"
	}
	return path
}

// hasPrefix reports whether path starts with prefix, ignoring the case of
// ASCII letters unless caseSensitive.
func hasPrefix(path, prefix string, caseSensitive bool) bool {
	if len(path) < len(prefix) {
		return false
	}
	if caseSensitive {
		return path[:len(prefix)] == prefix
	}
	return equalASCIIFold(path[:len(prefix)], prefix)
}

// equalASCIIFold reports whether a and b are equal but for the case of
// ASCII letters: Fiber lowercases paths and patterns byte by byte, so that
// no other letter matches another (strings.EqualFold would match the
// Kelvin sign with k, the long s with s).
func equalASCIIFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// lower returns the ASCII letter c in lower case, any other byte as it is.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
