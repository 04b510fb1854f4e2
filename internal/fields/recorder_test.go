package fields

import (
	"net/http"
)

// recorder is a Response that remembers what was written.
type recorder struct {
	h      http.Header
	status int
	ct     string
	body   []byte
	writes int
}

func newRecorder() *recorder { return &recorder{h: http.Header{}} }

func (r *recorder) SetHeader(name, value string) { r.h[name] = []string{value} }

func (r *recorder) Write(status int, contentType string, body []byte) error {
	r.writes++
	r.status, r.ct, r.body = status, contentType, append([]byte(nil), body...)
	return nil
}
