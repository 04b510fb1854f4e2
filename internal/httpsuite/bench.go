package httpsuite

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// discardWriter is a ResponseWriter that, like net/http's server, keeps
// headers in a fresh map and does not copy them on WriteHeader
// (httptest.ResponseRecorder clones the map, which inflates the cost of
// every header set).
type discardWriter struct {
	h    http.Header
	code int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }

// Bench serves GET / with h once per iteration into a server-like writer
// and fails unless every response is 204. It reports allocations.
func Bench(b *testing.B, h http.Handler) {
	req := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := &discardWriter{h: make(http.Header)}
		h.ServeHTTP(w, req)
		if w.code != http.StatusNoContent {
			b.Fatalf("status %d", w.code)
		}
	}
}

// BenchParallel is Bench on every P.
func BenchParallel(b *testing.B, h http.Handler) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := httptest.NewRequest("GET", "/", nil)
		for pb.Next() {
			w := &discardWriter{h: make(http.Header)}
			h.ServeHTTP(w, req)
			if w.code != http.StatusNoContent {
				b.Errorf("status %d", w.code)
				return
			}
		}
	})
}
