package stdhttp_test

import (
	"net/http"
	"testing"

	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

// twoHeaders is the least any middleware writing the default fields pays:
// it sets RateLimit-Policy and RateLimit to constant values and calls the
// handler, with no limiter, key or formatting at all. Subtracting it from
// BenchmarkAllow leaves what the rate limiter itself costs.
var twoHeaders = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Ratelimit-Policy"] = floorPolicy
	h["Ratelimit"] = floorState
	benchHandler.ServeHTTP(w, r)
})

// The floor's values are built once and shared by every response, which no
// real middleware could do with values that change per request: the floor
// pays only for the two map entries.
var (
	floorPolicy = []string{`"api";q=1000000000;w=3600`}
	floorState  = []string{`"api";r=999999999;t=3600`}
)

// BenchmarkFloorTwoHeaders is the two-header floor with the recorder.
func BenchmarkFloorTwoHeaders(b *testing.B) { benchServe(b, twoHeaders) }

// BenchmarkFloorTwoHeadersDiscard is the two-header floor with the
// server-like writer.
func BenchmarkFloorTwoHeadersDiscard(b *testing.B) { httpsuite.Bench(b, twoHeaders) }
