package ratelimit

import "github.com/ratelimit-go/ratelimit/adapter"

// setHeaderBytes sets name to value on res, through SetHeaderBytes when res
// implements it.
func setHeaderBytes(res adapter.Response, name string, value []byte) {
	if s, ok := res.(adapter.HeaderBytesSetter); ok {
		s.SetHeaderBytes(name, value)
		return
	}
	res.SetHeader(name, string(value))
}

// trackedResponse records whether a handler completed the response, so
// that the middleware can complete it when a custom handler did not.
type trackedResponse struct {
	adapter.Response
	wrote bool
}

func (t *trackedResponse) Write(status int, contentType string, body []byte) error {
	t.wrote = true
	return t.Response.Write(status, contentType, body)
}
