package nethttp

import (
	"net/http"

	"github.com/ratelimit-go/ratelimit"
)

// Check runs m for one request of a framework built on net/http that knows
// the matched route pattern itself, such as Gin (c.FullPath()) or Echo
// (c.Path()): pattern is reported as the route, and r.Pattern when pattern
// is "". It sets the header fields on w and, when it returns false, has
// written the whole response; the caller then stops its handler chain. Safe for concurrent use.
func Check(m *ratelimit.Middleware, w http.ResponseWriter, r *http.Request, pattern string) bool {
	return CheckNative(m, w, r, pattern, nil, nil)
}

// CheckNative is Check for an adapter that also hands key functions its
// framework's own request value: native is what Native returns for the
// request view, and lookup(native, key), when not nil, is consulted by the
// view's Context().Value before the request context (Gin's and Echo's
// Context.Get for string keys). lookup must not capture per-request state,
// so that the call allocates nothing: pass a plain function.
func CheckNative(m *ratelimit.Middleware, w http.ResponseWriter, r *http.Request, pattern string, native any, lookup func(native, key any) any) bool {
	e := exchanges.Get().(*exchange)
	e.r, e.w, e.pattern, e.native, e.lookup = r, w, pattern, native, lookup
	v := m.Handle(r.Context(), e, e)
	*e = exchange{}
	exchanges.Put(e)
	return v
}
