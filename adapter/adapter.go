// Package adapter is for writers of framework adapters and of custom
// ratelimit.DeniedHandler and ErrorHandler: the response view that
// ratelimit.Middleware.Handle writes to.
package adapter

// Response is the part of an HTTP response the middleware writes to. Each
// adapter implements it over its framework's response.
//
// The middleware calls SetHeader any number of times, then Write at most
// once; after Write it touches the response no more.
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

// HeaderBytesSetter is an optional interface of a Response that can keep a
// header value given as bytes valid only during the call without a separate
// allocation.
type HeaderBytesSetter interface {
	SetHeaderBytes(name string, value []byte)
}

// SharedHeaderSetter is an optional interface of a Response: it sets header
// name to values, a slice the middleware prepared once and shares between
// responses, which an adapter over an http.Header stores as it is and
// never writes into. The middleware replaces one found written into.
type SharedHeaderSetter interface {
	SetSharedHeader(name string, values []string)
}
