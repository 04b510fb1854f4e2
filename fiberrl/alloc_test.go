//go:build !race

// The race detector makes sync.Pool drop items, so allocation counts mean
// something only without it.

package fiberrl_test

import (
	"net/http"
	"testing"

	"github.com/ratelimit-go/ratelimit/fiberrl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// The allow path with a constant key and the default headers allocates
// nothing: the request view hands out no copies it is not asked for, and
// the header values go straight into fasthttp's buffers.
func TestAllowPathDoesNotAllocate(t *testing.T) {
	mw, err := fiberrl.New(httpsuite.AllowOptions(keyfuncs.Constant("client"))...)
	if err != nil {
		t.Fatal(err)
	}
	h := benchApp(mw)
	fctx := newCtx()
	allocs := testing.AllocsPerRun(1000, func() {
		fctx.Response.Reset()
		h(fctx)
	})
	if code := fctx.Response.StatusCode(); code != http.StatusNoContent || len(fctx.Response.Header.Peek("RateLimit")) == 0 {
		t.Fatalf("status %d, RateLimit %q", code, fctx.Response.Header.Peek("RateLimit"))
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per request, want 0", allocs)
	}
}
