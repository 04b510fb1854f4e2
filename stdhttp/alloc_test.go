//go:build !race

// The race detector makes sync.Pool drop items, so allocation counts mean
// something only without it.

package stdhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// TestAllocations: a denied request of a client over its limit allocates
// nothing at all (its header fields and body are prepared once and
// shared); an admitted one allocates its header block alone.
func TestAllocations(t *testing.T) {
	h := limited(t, keyfuncs.RemoteIP, "2/1h;name=api")
	req := httptest.NewRequest("GET", "/", nil)
	// One header map whose storage outlives each response, so that what
	// is counted is the middleware's allocations, not the map's.
	w := &httpsuite.DiscardWriter{H: http.Header{}}
	serve := func() {
		clear(w.H)
		h.ServeHTTP(w, req)
	}

	serve()
	if w.Code != http.StatusNoContent {
		t.Fatalf("first request: status %d", w.Code)
	}
	serve() // the last unit
	if w.Code != http.StatusNoContent {
		t.Fatalf("second request: status %d", w.Code)
	}
	denied := testing.AllocsPerRun(1000, serve)
	if w.Code != http.StatusTooManyRequests || w.H.Get("Retry-After") == "" || w.H.Get("Ratelimit") == "" {
		t.Fatalf("status %d, header %v", w.Code, w.H)
	}
	if denied != 0 {
		t.Errorf("%v allocations per denied request, want 0", denied)
	}

	h = limited(t, keyfuncs.RemoteIP, "1000000000/1h;name=api")
	admitted := testing.AllocsPerRun(1000, serve)
	if w.Code != http.StatusNoContent || w.H.Get("Ratelimit") == "" {
		t.Fatalf("status %d, header %v", w.Code, w.H)
	}
	if admitted != 1 {
		t.Errorf("%v allocations per admitted request, want 1 (the header block)", admitted)
	}
}
