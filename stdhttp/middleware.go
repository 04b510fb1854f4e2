package stdhttp

import (
	"net/http"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
)

// New builds a ratelimit.Middleware from opts (ratelimit.WithKeyFunc is
// required) and returns it as net/http middleware. See Middleware.
func New(opts ...ratelimit.Option) (func(http.Handler) http.Handler, error) {
	m, err := ratelimit.New(opts...)
	if err != nil {
		return nil, err
	}
	return Middleware(m), nil
}

// Middleware returns net/http middleware running m: for every request it
// checks the rate limit, sets the header fields, and either calls next or
// answers itself (429, 4xx, or 503 when failing closed). When next is a
// *http.ServeMux and m has a route table, the route pattern is resolved
// from the mux before the check (see the package documentation). The
// returned handler is safe for concurrent use.
func Middleware(m *ratelimit.Middleware) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		h := &handler{m: m, next: next}
		if mux, ok := next.(*http.ServeMux); ok && m.HasRoutes() {
			h.mux = mux
		}
		return h
	}
}

// Route returns middleware for a single route, checking policies instead
// of m's own (ratelimit.Middleware.Route), for use where the route is
// registered:
//
//	mux.Handle("POST /login", stdhttp.Route(mw, login)(loginHandler))
//
// It runs in addition to any middleware wrapping the mux. Like
// ServeMux.Handle given a malformed pattern, it panics when a policy is
// invalid: routes are registered by the program at start-up, and the
// panic's value is the typed error (matching core.ErrInvalidPolicy or
// ratelimit.ErrInvalidConfig). Use m.Route and Middleware to handle the
// error instead.
func Route(m *ratelimit.Middleware, policies ...core.Policy) func(http.Handler) http.Handler {
	rm, err := m.Route(policies...)
	if err != nil {
		panic(err)
	}
	return Middleware(rm)
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
	if Check(h.m, w, r, pattern) == ratelimit.Handled {
		return
	}
	h.next.ServeHTTP(w, r)
}
