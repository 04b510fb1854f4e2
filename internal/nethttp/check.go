package nethttp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/ratelimit-go/ratelimit"
)

// Check runs m for one request of a framework built on net/http that knows
// the matched route pattern itself, such as Gin (c.FullPath()) or Echo
// (c.Path()): pattern is reported as the route, and r.Pattern when pattern
// is "". It sets the header fields on w and calls next when the request
// may proceed (ratelimit.Middleware.Handle); when it returns false it has
// written the whole response, and the caller stops its handler chain.
// native is the framework's own request value (Native) and lookup(native,
// key), when not nil, is consulted by the view's Context().Value before
// the request context (Gin's and Echo's Context.Get for string keys).
// lookup must not capture per-request state, so that the call allocates
// nothing: pass a plain function. Safe for concurrent use.
func Check(m *ratelimit.Middleware, w http.ResponseWriter, r *http.Request, pattern string, native any, lookup func(native, key any) any, next func(ctx context.Context) int) bool {
	e := exchanges.Get().(*exchange)
	e.r, e.w, e.pattern, e.native, e.lookup = r, w, pattern, native, lookup
	v := m.Handle(r.Context(), e, e, func(ctx context.Context) int {
		// The exchange goes back before the handler runs: the handler
		// may take long, and the view is not its to use.
		*e = exchange{}
		exchanges.Put(e)
		e = nil
		return next(ctx)
	})
	if e != nil {
		*e = exchange{}
		exchanges.Put(e)
	}
	return v
}

// Serve runs next for the request r of a net/http adapter with ctx as its
// context, returning the response's status code. When ctx is r's own, no
// one asks for the status (no Usage is published) and r goes on as it is.
func Serve(next http.Handler, w http.ResponseWriter, r *http.Request, ctx context.Context) int {
	if ctx == r.Context() {
		next.ServeHTTP(w, r)
		return 0
	}
	// A ResponseWriter is not used once ServeHTTP has returned: its
	// wrapper can serve the next request.
	sw := statusWriters.Get().(*statusWriter)
	sw.ResponseWriter, sw.status = w, 0
	next.ServeHTTP(sw, r.WithContext(ctx))
	status := sw.status
	*sw = statusWriter{}
	statusWriters.Put(sw)
	if status == 0 {
		return http.StatusOK
	}
	return status
}

var statusWriters = sync.Pool{New: func() any { return new(statusWriter) }}

// statusWriter records the status code a handler sends. It keeps the
// optional interfaces of the writer it wraps within reach: Flush and
// Hijack directly, everything else through Unwrap
// (http.ResponseController).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, r)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
