package stdhttp

import (
	"net/http"
	"strings"
	"sync"
)

// exchange is one request and its response as the middleware core sees
// them: it implements keyfuncs.Request, keyfuncs.HeaderValuesRequest and
// ratelimit.Response. Exchanges are pooled: neither the middleware core
// nor key functions keep a Request after the call. The header values it
// sets share one small array allocated per response (the header map keeps
// referring to it after the exchange is recycled), so the allow path
// allocates one array instead of one slice per header field.
type exchange struct {
	r       *http.Request
	w       http.ResponseWriter
	pattern string // the route pattern resolved before the mux ran, if any
	vals    *[4]string
	n       int
}

var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// Method returns the request method.
func (e *exchange) Method() string { return e.r.Method }

// Path returns the URL path.
func (e *exchange) Path() string { return e.r.URL.Path }

// Route returns the matched ServeMux pattern without its method ("/login"
// for "POST /login"), or "" when none is known.
func (e *exchange) Route() string {
	p := e.pattern
	if p == "" {
		p = e.r.Pattern
	}
	return stripMethod(p)
}

// stripMethod removes the "METHOD " prefix of a ServeMux pattern.
func stripMethod(p string) string {
	if p == "" || p[0] == '/' {
		return p
	}
	i := strings.IndexAny(p, " \t")
	if i < 0 || strings.IndexByte(p[:i], '/') >= 0 {
		return p
	}
	return strings.TrimLeft(p[i:], " \t")
}

// Header returns the first value of the named request header.
func (e *exchange) Header(name string) string { return e.r.Header.Get(name) }

// HeaderValues returns every value of the named request header.
func (e *exchange) HeaderValues(name string) []string { return e.r.Header.Values(name) }

// RemoteAddr returns the direct peer's address.
func (e *exchange) RemoteAddr() string { return e.r.RemoteAddr }

// SetHeader sets a response header; name is already canonical.
func (e *exchange) SetHeader(name, value string) {
	h := e.w.Header()
	if e.vals == nil {
		e.vals = new([4]string)
	}
	if e.n < len(e.vals) {
		e.vals[e.n] = value
		h[name] = e.vals[e.n : e.n+1 : e.n+1]
		e.n++
		return
	}
	h[name] = []string{value}
}

// Write completes the response.
func (e *exchange) Write(status int, contentType string, body []byte) error {
	h := e.w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	e.w.WriteHeader(status)
	_, err := e.w.Write(body)
	return err
}
