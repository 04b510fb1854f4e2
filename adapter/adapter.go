// Package adapter is for writers of framework adapters and of handlers for
// ratelimit.WithDeniedHandler and WithErrorHandler: the response view that
// ratelimit.Middleware.Handle writes to.
package adapter

// Response is the part of an HTTP response the middleware writes to. Each
// adapter implements it over its framework's response.
//
// The middleware calls SetHeader any number of times, then Write at most
// once; after Write it touches the response no more. A Response may also
// have SetHeaderBytes(name string, value []byte), for a value valid only
// during the call that it can keep without an allocation, and
// SetSharedHeader(name string, values []string), for a slice the
// middleware prepared once and shares between responses, which it must
// never write into; the middleware uses them when they are there.
type Response interface {
	// SetHeader sets the response header name to the single value value,
	// replacing any previous value. name is always in canonical form
	// ("Ratelimit-Policy", "Retry-After"), so implementations need not
	// canonicalise it; value never contains CR, LF or NUL.
	SetHeader(name, value string)
	// Write sends the status, a Content-Type and body, completing the
	// response. body may be shared between responses: it must not be
	// modified or kept. An error (the client went away) is reported to
	// observers.
	Write(status int, contentType string, body []byte) error
}
