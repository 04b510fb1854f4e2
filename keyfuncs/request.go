// Package keyfuncs derives rate-limit keys from HTTP requests: the client IP
// (behind trusted proxies, IPv6 grouped by prefix), a header (hashed), a
// value authentication left in the request's context, the route, the
// method, and compositions of these. Key functions read a Request, which
// every adapter implements, so a key is the same on every framework.
package keyfuncs

import (
	"context"
	"errors"
)

// Request is the view of an HTTP request that key functions read. Adapters
// implement it over their framework's request; implementations must not
// allocate more than needed and must be safe to call repeatedly.
//
// Two optional methods: HeaderValues(name string) []string, every value of
// a header, one per line, in order (nil if absent), through which the
// client IP resolver reads forwarding headers spread over several lines
// (without it only the first line, which a client may forge, is visible;
// adapters should have it); and RemoteAddrPort() netip.AddrPort, the peer
// address as a value, which the resolver then reads instead of RemoteAddr.
type Request interface {
	// Method returns the request method, e.g. "GET".
	Method() string
	// Path returns the request's URL path as received, e.g. "/users/42".
	Path() string
	// Route returns the pattern of the route that matched, e.g.
	// "/users/{id}" or "/users/:id", or "" when no route matched.
	Route() string
	// Header returns the first value of the named header (case-insensitive
	// name), or "" if absent.
	Header(name string) string
	// RemoteAddr returns the address of the direct peer, "ip:port" or "ip".
	RemoteAddr() string
	// Context returns the request's context, where authentication
	// middleware leaves the caller's identity. Its Value also finds what
	// the framework keeps per request: Gin's Context.Set, Echo's
	// Context.Set and Fiber's Ctx.Locals, before the request context's own
	// values. Valid only during the call that received the Request.
	Context() context.Context
}

// KeyFunc derives the rate-limit key of a request. It returns ErrSkip to let
// the request through without limiting, or a *MissingKeyError when the key
// cannot be derived and the request should be refused.
type KeyFunc func(r Request) (string, error)

// ErrSkip is returned by a KeyFunc to tell the middleware not to rate-limit
// the request at all.
var ErrSkip = errors.New("keyfuncs: skip rate limiting for this request")

// MissingKeyError is returned by a KeyFunc to tell the middleware to refuse
// the request with Status (400 or 401 typically) because its key is missing or
// malformed. Source names what was missing ("header X-API-Key"); it is safe
// to show to clients.
type MissingKeyError struct {
	Source string
	Status int
}

// Error describes the problem; it is safe to log.
func (e *MissingKeyError) Error() string { return "keyfuncs: missing rate-limit key: " + e.Source }

// headerValuer is a Request's optional HeaderValues method.
type headerValuer interface{ HeaderValues(name string) []string }

// headerValues returns every value of the named header of r: all lines when
// r has HeaderValues (see Request), otherwise the first line only.
func headerValues(r Request, name string) []string {
	if hv, ok := r.(headerValuer); ok {
		return hv.HeaderValues(name)
	}
	if v := r.Header(name); v != "" {
		return []string{v}
	}
	return nil
}
