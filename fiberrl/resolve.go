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
	// bucket is the first three bytes of the pattern's constant prefix, or
	// "" when that is shorter: Fiber tries the route only for paths that
	// start with them.
	bucket string
	// segs are the segments of a pattern made of constant segments and
	// whole-segment parameters ("/users/:id/posts"), "" for a parameter;
	// nil for any other, matched by fiber.RoutePatternMatch.
	segs []string
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
	tree := path[:min(len(path), 3)] // Fiber's bucket of path, if as long as one
	for _, p := range t.byMethod[method] {
		switch {
		case p.static: // equal to path, it has path's bucket
			if t.equal(p.pretty, path) {
				return p.path
			}
		case p.bucket != "" && !t.equal(p.bucket, tree):
		case p.segs != nil:
			if t.matchSegments(p.segs, path) {
				return p.path
			}
		case len(path) >= len(p.pretty) && t.equal(path[:len(p.pretty)], p.pretty) && fiber.RoutePatternMatch(path, p.path, t.cfg):
			return p.path
		}
	}
	return ""
}

// equal reports whether a and b are equal under the app's case setting.
func (t *routeTable) equal(a, b string) bool {
	return a == b || (!t.cfg.CaseSensitive && equalASCIIFold(a, b))
}

// matchSegments reports whether path matches a pattern of segments segs,
// as Fiber matches it: each constant segment equal, each parameter a
// non-empty segment.
func (t *routeTable) matchSegments(segs []string, path string) bool {
	if path == "" || path[0] != '/' {
		return false
	}
	rest := path[1:]
	for i, s := range segs {
		part := rest
		if j := strings.IndexByte(rest, '/'); i < len(segs)-1 {
			if j < 0 {
				return false
			}
			part, rest = rest[:j], rest[j+1:]
		} else if j >= 0 {
			return false
		}
		if s == "" && part == "" || s != "" && !t.equal(s, part) {
			return false
		}
	}
	return true
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
		pretty := trimSlash(rt.Path, cfg.StrictRouting)
		if i := strings.IndexAny(rt.Path, ":*+\\"); i >= 0 {
			p.pretty, p.segs = strings.TrimRight(rt.Path[:i], "/"), segments(pretty)
		} else {
			p.static, p.pretty = true, pretty
		}
		if c := constPrefix(pretty); len(c) >= 3 {
			p.bucket = c[:3]
		}
		t.byMethod[rt.Method] = append(t.byMethod[rt.Method], p)
	}
	return t
}

// constPrefix returns what Fiber takes for the constant part of pattern
// before its first parameter or wildcard, its escapes removed.
func constPrefix(pattern string) string {
	const starts = ":+*"
	for i := 0; i < len(pattern); i++ {
		if strings.IndexByte(starts, pattern[i]) < 0 || i > 0 && pattern[i-1] == '\\' {
			continue
		}
		// A parameter start followed by another belongs to the constant.
		if pattern[i] != '*' && i+1 < len(pattern) && strings.IndexByte(starts, pattern[i+1]) >= 0 {
			i++
		}
		return fiber.RemoveEscapeChar(pattern[:i])
	}
	return fiber.RemoveEscapeChar(pattern)
}

// segments returns the segments of a pattern of constant segments and
// whole-segment parameters named by letters, digits and underscores, ""
// for each parameter; nil for any other pattern.
func segments(pattern string) []string {
	if !strings.HasPrefix(pattern, "/") || strings.ContainsAny(pattern, "*+?\\<>") {
		return nil
	}
	segs := strings.Split(pattern[1:], "/")
	for i, s := range segs {
		switch {
		case s == "":
			return nil
		case s[0] == ':':
			if len(s) == 1 || strings.IndexFunc(s[1:], func(r rune) bool {
				return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_')
			}) >= 0 {
				return nil
			}
			segs[i] = ""
		case strings.IndexByte(s, ':') >= 0:
			return nil
		}
	}
	return segs
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

// equalASCIIFold reports whether a and b are equal but for the case of
// ASCII letters: Fiber lowercases paths and patterns byte by byte, so that
// no other letter matches another (strings.EqualFold would match the
// Kelvin sign with k, the long s with s).
func equalASCIIFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if x, y := a[i]|0x20, b[i]|0x20; a[i] != b[i] && (x != y || x < 'a' || x > 'z') {
			return false
		}
	}
	return true
}
