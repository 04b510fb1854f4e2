package ratelimit

import "github.com/ratelimit-go/ratelimit/adapter"

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
