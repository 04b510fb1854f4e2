package main

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// nopWriter is a server-like ResponseWriter that keeps nothing.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkCheckHandler is the HTTP API's own work for one POST /v1/check
// on the memory store, without the network: reading the body, the check,
// the header fields, the answer and the metrics.
func BenchmarkCheckHandler(b *testing.B) {
	dir := b.TempDir()
	conf := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(conf, []byte("policies:\n  api: \"1000000/1s\"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	s, err := newService(conf, "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	h := s.handler()
	bodies := make([]string, 1000)
	for i := range bodies {
		bodies[i] = `{"key":"load-` + strconv.Itoa(i) + `","policies":["api"]}`
	}
	req, _ := http.NewRequest(http.MethodPost, "/v1/check", nil)
	req.Header.Set("Content-Type", "application/json")
	w := &nopWriter{h: http.Header{}}
	var rd strings.Reader
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rd.Reset(bodies[i%len(bodies)])
		req.Body = io.NopCloser(&rd)
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}
