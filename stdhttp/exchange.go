package stdhttp

import (
	"net/http"
	"strings"
	"sync"
	"unsafe"
)

// exchange is one request and its response as the middleware core sees
// them: it implements keyfuncs.Request, keyfuncs.HeaderValuesRequest and
// ratelimit.Response. Exchanges are pooled: neither the middleware core
// nor key functions keep a Request after the call. The header values it
// sets share one headerBlock allocated per response (the header map keeps
// referring to it after the exchange is recycled), so the allow path
// allocates one block instead of one slice per header field and one string
// per built value.
type exchange struct {
	r       *http.Request
	w       http.ResponseWriter
	pattern string // the route pattern resolved before the mux ran, if any
	hdr     *headerBlock
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

// headerBlock is the storage for one response's rate-limit header values:
// the value slices and the bytes of values built per request, allocated
// together once per request and never reused, so the strings handed to the
// header map stay immutable.
type headerBlock struct {
	vals [4]string
	buf  [96]byte
	n    int // values used
	used int // bytes of buf used
}

// SetHeader sets a response header; name is already canonical.
func (e *exchange) SetHeader(name, value string) {
	h := e.w.Header()
	if e.hdr == nil {
		e.hdr = new(headerBlock)
	}
	b := e.hdr
	if b.n < len(b.vals) {
		b.vals[b.n] = value
		h[name] = b.vals[b.n : b.n+1 : b.n+1]
		b.n++
		return
	}
	h[name] = []string{value}
}

// SetHeaderBytes sets a response header from bytes valid only during the
// call, copying them into the request's header block when they fit so that
// the value costs no allocation of its own.
func (e *exchange) SetHeaderBytes(name string, value []byte) {
	if e.hdr == nil {
		e.hdr = new(headerBlock)
	}
	b := e.hdr
	if len(value) == 0 || len(value) > len(b.buf)-b.used {
		e.SetHeader(name, string(value))
		return
	}
	dst := b.buf[b.used : b.used+len(value)]
	copy(dst, value)
	b.used += len(value)
	e.SetHeader(name, unsafe.String(&dst[0], len(dst)))
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
