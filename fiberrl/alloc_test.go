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

// The allow path with the default headers allocates nothing, with a
// constant key and with the client's IP (a client seen before, whose key's
// text keyfuncs remembers): the request view hands out no copies it is not
// asked for, and the header values go straight into fasthttp's buffers.
func TestAllowPathDoesNotAllocate(t *testing.T) {
	for name, kf := range map[string]keyfuncs.KeyFunc{"constant": keyfuncs.Constant("client"), "client IP": keyfuncs.RemoteIP} {
		mw, err := fiberrl.New(httpsuite.AllowOptions(kf)...)
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
			t.Fatalf("%s: status %d, RateLimit %q", name, code, fctx.Response.Header.Peek("RateLimit"))
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations per request, want 0", name, allocs)
		}
	}
}
