package echorl

import (
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"
)

// exchange is one request and its response as the middleware core sees
// them: it implements keyfuncs.Request, keyfuncs.HeaderValuesRequest and
// ratelimit.Response over an echo.Context. Exchanges are pooled: neither
// the middleware core nor key functions keep a Request after the call.
// The header values it sets share one small array per response, so the
// allow path allocates one array instead of one slice per header field.
type exchange struct {
	c    echo.Context
	r    *http.Request
	vals *[4]string
	n    int
}

var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// Method returns the request method.
func (e *exchange) Method() string { return e.r.Method }

// Path returns the URL path.
func (e *exchange) Path() string { return e.r.URL.Path }

// Route returns the pattern of the matched route.
func (e *exchange) Route() string { return e.c.Path() }

// Header returns the first value of the named request header.
func (e *exchange) Header(name string) string { return e.r.Header.Get(name) }

// HeaderValues returns every value of the named request header.
func (e *exchange) HeaderValues(name string) []string { return e.r.Header.Values(name) }

// RemoteAddr returns the direct peer's address.
func (e *exchange) RemoteAddr() string { return e.r.RemoteAddr }

// SetHeader sets a response header; name is already canonical.
func (e *exchange) SetHeader(name, value string) {
	h := e.c.Response().Header()
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
	h := e.c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	return e.c.Blob(status, contentType, body)
}
