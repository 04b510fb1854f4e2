package main

import (
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	extv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// nopWriter is a server-like ResponseWriter that keeps nothing.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

// benchService is a service over the configuration files given as name,
// content pairs (the first is the main file; see writeConfig), logging
// nowhere, closed when the benchmark ends.
func benchService(b *testing.B, files ...string) *service {
	s, err := newService(writeConfig(b, files...), "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.close() })
	return s
}

// BenchmarkCheckHandler is the HTTP API's own work for one POST /v1/check
// on the memory store, without the network: reading the body, the check,
// the header fields, the answer and the metrics.
func BenchmarkCheckHandler(b *testing.B) {
	h := benchService(b, "c.yaml", "policies:\n  api: \"1000000/1s\"\n").handler()
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

// BenchmarkShouldRateLimit is the gRPC service's own work for one
// ShouldRateLimit on the memory store, without the network: matching the
// descriptor, the check, the response and the metrics.
func BenchmarkShouldRateLimit(b *testing.B) {
	g := &rlsServer{s: benchService(b,
		"c.yaml", "envoy:\n  files: [\"d.yaml\"]\n",
		"d.yaml", "domain: load\ndescriptors:\n  - key: user\n    rate_limit:\n      unit: second\n      requests_per_unit: 1000000\n")}
	reqs := make([]*rlsv3.RateLimitRequest, 1000)
	for i := range reqs {
		reqs[i] = &rlsv3.RateLimitRequest{Domain: "load", Descriptors: []*extv3.RateLimitDescriptor{{Entries: []*extv3.RateLimitDescriptor_Entry{{Key: "user", Value: "load-" + strconv.Itoa(i)}}}}}
	}
	ctx := b.Context()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		res, err := g.ShouldRateLimit(ctx, reqs[i%len(reqs)])
		if err != nil || res.OverallCode != rlsv3.RateLimitResponse_OK {
			b.Fatal(res, err)
		}
	}
}
