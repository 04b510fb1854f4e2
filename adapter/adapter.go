// Package adapter is for the writers of framework adapters: the response
// view an adapter implements over its framework's response, which
// ratelimit.Middleware.Handle writes to. Users of the middleware never need
// it unless they write a custom ratelimit.DeniedHandler or ErrorHandler,
// which write through a Response. The adapters in stdhttp, ginrl, echorl
// and fiberrl are its users.
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
	// Write sends the status line, a Content-Type of contentType and body,
	// completing the response. body may be shared between responses (the
	// middleware prepares its 429 bodies once): it must not be modified, nor
	// kept after Write returns. An error means the body could not be
	// written (the client went away); the middleware reports it to
	// observers and otherwise ignores it.
	Write(status int, contentType string, body []byte) error
}

// HeaderBytesSetter is an optional interface a Response may implement:
// SetHeaderBytes sets header name to the single value held in value, which
// is valid only during the call. An adapter that can keep the bytes without
// a separate allocation (copying them into storage it allocates per request
// anyway, or into its framework's own buffers) implements it; otherwise the
// middleware converts value to a string and calls SetHeader.
type HeaderBytesSetter interface {
	SetHeaderBytes(name string, value []byte)
}

// SharedHeaderSetter is an optional interface a Response may implement:
// SetSharedHeader sets header name to the single value values[0]. values
// is a slice the middleware prepared once and shares between every
// response carrying the same value, its length equal to its capacity: an
// adapter over an http.Header puts it in the map as it is, so that the
// field costs no allocation, and never writes into it. The middleware
// checks before each use that the slice still holds its value and replaces
// one found written into, so code that writes into a response's header
// values in place (h[name][0] = v) changes that response alone. A Response
// without it gets SetHeader(name, values[0]).
type SharedHeaderSetter interface {
	SetSharedHeader(name string, values []string)
}
