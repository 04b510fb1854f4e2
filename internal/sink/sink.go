// Package sink holds two places tests write to and read back: a Log safe
// for concurrent writers, and a Response that discards what the
// middleware answers.
package sink

import (
	"bytes"
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
