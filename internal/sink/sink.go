// Package sink holds the places tests write to and read back: a Log safe
// for concurrent writers, a Recorder that keeps what the middleware
// answers, and a Response that discards it.
package sink

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
)

// Log is a bytes.Buffer for a logger written from several goroutines.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Lines returns what was written as lines, without the last newline.
func (l *Log) Lines() []string { return strings.Split(strings.TrimSpace(l.String()), "\n") }

// Response is an adapter.Response that discards what is written, so that
// a benchmark measures the middleware alone.
type Response struct{}

// SetHeader does nothing.
func (Response) SetHeader(string, string) {}

// Write does nothing.
func (Response) Write(int, string, []byte) error { return nil }

// Recorder is an adapter.Response that keeps what was written.
type Recorder struct {
	H           http.Header
	Status      int
	ContentType string
	Body        []byte
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{H: http.Header{}} }

// SetHeader sets one value of name.
func (r *Recorder) SetHeader(name, value string) { r.H[name] = []string{value} }

// Write keeps the status, content type and a copy of body.
func (r *Recorder) Write(status int, contentType string, body []byte) error {
	r.Status, r.ContentType, r.Body = status, contentType, append([]byte(nil), body...)
	return nil
}
