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
	pretty string // static only: trailing slash trimmed unless strict
}

// lookup returns the pattern of the first route for method matching path,
// or "" when none does.
func (r *resolver) lookup(app *fiber.App, method, path string) string {
	t := r.table.Load()
	if t == nil || t.app != app || t.handlers != app.HandlersCount() {
		t = newRouteTable(app)
		r.table.Store(t)
	}
	if !t.cfg.StrictRouting && len(path) > 1 {
		path = strings.TrimRight(path, "/")
		if path == "" {
			path = "/"
		}
	}
	for _, p := range t.byMethod[method] {
		if p.static {
			if p.pretty == path || (!t.cfg.CaseSensitive && strings.EqualFold(p.pretty, path)) {
				return p.path
			}
			continue
		}
		if fiber.RoutePatternMatch(path, p.path, t.cfg) {
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
		p := pattern{path: rt.Path, static: !strings.ContainsAny(rt.Path, ":*+\\")}
		if p.static {
			p.pretty = rt.Path
			if !cfg.StrictRouting && len(p.pretty) > 1 {
				p.pretty = strings.TrimRight(p.pretty, "/")
				if p.pretty == "" {
					p.pretty = "/"
				}
			}
		}
		t.byMethod[rt.Method] = append(t.byMethod[rt.Method], p)
	}
	return t
}
