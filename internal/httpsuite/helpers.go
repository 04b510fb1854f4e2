package httpsuite

import (
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

// T0 is the instant the adapters' own tests start their clocks at: 03:04,
// so that a five-minute window aligned to the hour ends 60 s later.
var T0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

// Limiter returns a Limiter over a new memory store on a manual clock
// reading T0.
func Limiter() *core.Limiter {
	return core.NewLimiter(must.Do(memstore.New()), core.WithClock(core.NewManualClock(T0)))
}

// Do serves a request without a body with h and returns the recorded
// response.
func Do(h http.Handler, method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}
