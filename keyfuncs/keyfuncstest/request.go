// Package keyfuncstest provides a fake keyfuncs.Request for tests of key
// functions and of the adapters and middleware built on them.
package keyfuncstest

import (
	"context"
	"net/http"
)

// Request is a keyfuncs.Request (with HeaderValues) built from
// plain fields. The zero value is a request with empty fields and no headers.
// Header names are matched case-insensitively, as net/http does. Safe for
// concurrent reads; do not modify it while key functions read it.
type Request struct {
	Verb    string      // returned by Method
	URLPath string      // returned by Path
	Pattern string      // returned by Route; "" means no route matched
	Remote  string      // returned by RemoteAddr
	Headers http.Header // read by Header and HeaderValues; may be nil
	// Ctx is returned by Context; nil means context.Background().
	Ctx context.Context
}

// Context returns r.Ctx, or context.Background() when it is nil.
func (r *Request) Context() context.Context {
	if r.Ctx == nil {
		return context.Background()
	}
	return r.Ctx
}

// New returns a GET request for "/" from remote with the given headers, given
// as name, value pairs; a name given twice gets two lines, in order. A
// trailing name without a value is ignored.
func New(remote string, headerPairs ...string) *Request {
	r := &Request{Verb: http.MethodGet, URLPath: "/", Remote: remote, Headers: http.Header{}}
	for i := 0; i+1 < len(headerPairs); i += 2 {
		r.Headers.Add(headerPairs[i], headerPairs[i+1])
	}
	return r
}

// Method returns r.Verb.
func (r *Request) Method() string { return r.Verb }

// Path returns r.URLPath.
func (r *Request) Path() string { return r.URLPath }

// Route returns r.Pattern.
func (r *Request) Route() string { return r.Pattern }

// RemoteAddr returns r.Remote.
func (r *Request) RemoteAddr() string { return r.Remote }

// Header returns the first value of the named header, or "".
func (r *Request) Header(name string) string { return r.Headers.Get(name) }

// HeaderValues returns every value of the named header, or nil.
func (r *Request) HeaderValues(name string) []string { return r.Headers.Values(name) }
