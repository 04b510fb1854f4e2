package stdhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/nethttp"
	"github.com/ratelimit-go/ratelimit/internal/opt"
	"github.com/ratelimit-go/ratelimit/internal/routecheck"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

var (
	errNilMiddleware      = fmt.Errorf("%w: stdhttp: a nil *ratelimit.Middleware or handler; build the Middleware with ratelimit.New or use stdhttp.New", ratelimit.ErrInvalidConfig)
	errRoutesUnresolvable = fmt.Errorf("%w: stdhttp: the route table needs the ServeMux: wrap the mux, or use WithMux(mux) or InsideMux()", ratelimit.ErrInvalidConfig)
)

// WrapOption tells Wrap and Middleware where route patterns come from.
type WrapOption func(*wrapConfig)

type wrapConfig struct {
	mux    *http.ServeMux
	inside bool
}

// WithMux names the ServeMux that routes the requests, for a middleware
// wrapped around another handler in front of it.
func WithMux(mux *http.ServeMux) WrapOption {
	return func(c *wrapConfig) { c.mux, c.inside = mux, false }
}

// InsideMux says the middleware runs inside the ServeMux, registered on its
// routes (mux.Handle(pattern, stdhttp.Middleware(m, stdhttp.InsideMux())(h))),
// where http.Request.Pattern is already set when it runs.
func InsideMux() WrapOption {
	return func(c *wrapConfig) { c.mux, c.inside = nil, true }
}

// New builds a ratelimit.Middleware from opts and returns it as net/http
// middleware (see Middleware); it also returns Wrap's errors of its route
// table.
func New(opts ...ratelimit.Option) (func(http.Handler) http.Handler, error) {
	return routecheck.New(opts, checkPatterns, func(m *ratelimit.Middleware) func(http.Handler) http.Handler { return Middleware(m) })
}

// checkPatterns returns a *ratelimit.RouteError for the first route table
// entry of m that a ServeMux can never report as the pattern of a request:
// a pattern ServeMux rejects, or one with a Gin-style parameter ("/users/:id",
// which ServeMux writes "/users/{id}").
func checkPatterns(m *ratelimit.Middleware) error {
	return m.CheckPatterns(func(_, p string) string {
		for seg := range strings.SplitSeq(p, "/") {
			if strings.HasPrefix(seg, ":") || strings.HasPrefix(seg, "*") {
				return "net/http's ServeMux writes wildcards as {name} and {name...}, not :name or *name"
			}
		}
		return serveMuxRejects(p)
	})
}

// serveMuxRejects returns why http.ServeMux refuses the pattern, "" if it
// accepts it.
func serveMuxRejects(pattern string) (reason string) {
	defer func() {
		if r := recover(); r != nil {
			reason = fmt.Sprintf("http.ServeMux rejects it: %v", r)
		}
	}()
	http.NewServeMux().Handle(pattern, http.NotFoundHandler())
	return ""
}

// Middleware returns net/http middleware running m: for every request it
// checks the rate limit, sets the header fields, and either calls next or
// answers itself (429, 4xx, or 503 when failing closed).
//
// With a route table, wrap the *http.ServeMux itself, name the mux with
// WithMux, or declare InsideMux (see the package documentation); wrapping
// anything else panics with an error matching ratelimit.ErrInvalidConfig,
// as ServeMux.Handle does for a bad pattern (Wrap returns it). It also
// panics for a pattern a ServeMux never reports ("/users/:id").
func Middleware(m *ratelimit.Middleware, opts ...WrapOption) func(http.Handler) http.Handler {
	if err := checkPatterns(m); err != nil {
		panic(err)
	}
	return func(next http.Handler) http.Handler {
		h, err := Wrap(m, next, opts...)
		if err != nil {
			panic(err)
		}
		return h
	}
}

// Wrap is Middleware(m, opts...)(next), returning that error or
// the error of a pattern a ServeMux never reports, instead of panicking.
func Wrap(m *ratelimit.Middleware, next http.Handler, opts ...WrapOption) (http.Handler, error) {
	if m == nil || next == nil {
		return nil, errNilMiddleware
	}
	if err := checkPatterns(m); err != nil {
		return nil, err
	}
	var c wrapConfig
	opt.Apply(&c, opts)
	h := &handler{m: m, next: next, mux: c.mux}
	hasRoutes := false
	m.CheckPatterns(func(string, string) string { hasRoutes = true; return "" })
	if hasRoutes && h.mux == nil && !c.inside {
		mux, ok := next.(*http.ServeMux)
		if !ok {
			return nil, errors.Join(errRoutesUnresolvable, fmt.Errorf("stdhttp: wrapping a %T", next))
		}
		h.mux = mux
	}
	if !hasRoutes {
		h.mux = nil
	}
	if h.mux != nil {
		if err := checkServed(m, h.mux); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// checkServed returns a *ratelimit.RouteError for the first route table
// entry that mux routes elsewhere ("/logni" beside "/login"); the mux's
// routes must be registered when the middleware is wired.
func checkServed(m *ratelimit.Middleware, mux *http.ServeMux) error {
	return m.CheckPatterns(func(method, pattern string) string {
		try := []string{method}
		if method == "" {
			try = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}
		}
		routed := ""
		for _, verb := range try {
			_, got := mux.Handler(&http.Request{Method: verb, URL: &url.URL{Path: samplePath(pattern)}})
			if nethttp.StripMethod(got) == pattern {
				return ""
			}
			if routed == "" {
				routed = got
			}
		}
		if routed == "" {
			return "the ServeMux serves no route for it (register the mux's routes before wrapping it)"
		}
		return fmt.Sprintf("the ServeMux routes it to %q: the entry would never apply", routed)
	})
}

// samplePath is a request path that pattern matches: each wildcard
// segment replaced by "x", "{$}" by nothing.
func samplePath(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, seg := range segs {
		switch {
		case seg == "{$}":
			segs[i] = ""
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
			segs[i] = "x"
		}
	}
	return strings.Join(segs, "/")
}

// Route returns middleware for a single route, checking policies instead
// of m's own (ratelimit.Middleware.Route), where the route is registered:
//
//	mux.Handle("POST /login", stdhttp.Route(mw, login)(loginHandler))
//
// Like ServeMux.Handle given a bad pattern, it panics with the typed error
// when a policy is invalid; use m.Route and Middleware to handle it.
func Route(m *ratelimit.Middleware, policies ...core.Policy) func(http.Handler) http.Handler {
	return routecheck.PerRoute(m, policies, func(rm *ratelimit.Middleware) func(http.Handler) http.Handler { return Middleware(rm) })
}

type handler struct {
	m    *ratelimit.Middleware
	next http.Handler
	mux  *http.ServeMux // non-nil: resolve patterns before the mux routes
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pattern := ""
	if h.mux != nil && r.Pattern == "" {
		_, pattern = h.mux.Handler(r)
	}
	nethttp.Check(h.m, w, r, pattern, nil, nil, func(ctx context.Context) int {
		return nethttp.Serve(h.next, w, r, ctx)
	})
}

// Request returns the *http.Request behind r when this adapter (or Gin's or
// Echo's) handed r to a key, skip, cost or plan function; nil otherwise.
func Request(r keyfuncs.Request) *http.Request { return nethttp.Request(r) }
