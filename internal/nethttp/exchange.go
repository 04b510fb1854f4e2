package nethttp

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/sharedhdr"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// exchange is one request and its response as the middleware core sees
// them: it implements keyfuncs.Request (with HeaderValues) and
// adapter.Response. Exchanges are pooled: neither the middleware core
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
	native  any                       // the framework's request value (CheckNative), if any
	lookup  func(native, key any) any // the framework's per-request values, if any
}

// Context returns the request's context or, when a framework adapter gave
// its own per-request values (CheckNative), a context whose Value looks
// there first.
func (e *exchange) Context() context.Context {
	if e.lookup == nil {
		return e.r.Context()
	}
	return (*exchangeContext)(e)
}

// exchangeContext is an exchange seen as the context of its request, with
// the framework's values in front of the request context's.
type exchangeContext exchange

func (c *exchangeContext) Deadline() (time.Time, bool) { return c.r.Context().Deadline() }
func (c *exchangeContext) Done() <-chan struct{}       { return c.r.Context().Done() }
func (c *exchangeContext) Err() error                  { return c.r.Context().Err() }
func (c *exchangeContext) Value(key any) any {
	if v := c.lookup(c.native, key); v != nil {
		return v
	}
	return c.r.Context().Value(key)
}

// Request returns the *http.Request behind r, nil when r is not an exchange.
func Request(r keyfuncs.Request) *http.Request {
	if e, ok := r.(*exchange); ok {
		return e.r
	}
	return nil
}

// Native returns the framework's own request value that an adapter passed
// to CheckNative (a *gin.Context, an echo.Context) for r, or nil. Adapters
// wrap it in a typed accessor (ginrl.Context, echorl.Context).
func Native(r keyfuncs.Request) any {
	if e, ok := r.(*exchange); ok {
		return e.native
	}
	return nil
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
	return StripMethod(p)
}

// StripMethod removes the "METHOD " prefix of a ServeMux pattern.
func StripMethod(p string) string {
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
// header map stay immutable. It holds what an admitted request of the
// default header mode sets (RateLimit-Policy and RateLimit), and is kept
// small because every admitted request allocates one: 80 bytes, a size
// class of its own. A denial's fields are prepared ones, shared
// (SetSharedHeader), and need no block; a field past its room gets a
// slice of its own.
type headerBlock struct {
	vals [2]string
	buf  [46]byte
	n    uint8 // values used
	used uint8 // bytes of buf used
}

// Shared values of the fields Write sets on a problem document (see
// adapter.Response).
var (
	problemType = sharedhdr.New(fields.ContentTypeProblem)
	nosniff     = sharedhdr.New("nosniff")
)

// SetSharedHeader sets a response header to values, a slice shared between
// responses that is put in the header map as it is.
func (e *exchange) SetSharedHeader(name string, values []string) { e.w.Header()[name] = values }

// SetHeader sets a response header; name is already canonical.
func (e *exchange) SetHeader(name, value string) {
	h := e.w.Header()
	if e.hdr == nil {
		e.hdr = new(headerBlock)
	}
	b := e.hdr
	if int(b.n) < len(b.vals) {
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
	if len(value) == 0 || len(value) > len(b.buf)-int(b.used) {
		e.SetHeader(name, string(value))
		return
	}
	dst := b.buf[b.used : int(b.used)+len(value)]
	copy(dst, value)
	b.used += uint8(len(value))
	e.SetHeader(name, unsafe.String(&dst[0], len(dst)))
}

// Write completes the response.
func (e *exchange) Write(status int, contentType string, body []byte) error {
	if contentType == problemType.String() {
		e.SetSharedHeader("Content-Type", problemType.Slice())
	} else {
		e.SetHeader("Content-Type", contentType)
	}
	e.SetSharedHeader("X-Content-Type-Options", nosniff.Slice())
	// A length set for the handler's answer is not this body's. The name is
	// canonical already: delete it without Header.Del's canonicalization.
	delete(e.w.Header(), "Content-Length")
	e.w.WriteHeader(status)
	_, err := e.w.Write(body)
	return err
}
