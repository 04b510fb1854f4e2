package stdhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// benchHandler writes a tiny body, as a real endpoint would.
var benchHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })

func benchServe(b *testing.B, h http.Handler) {
	req := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// BenchmarkBare is the baseline: the handler alone, with a recorder.
func BenchmarkBare(b *testing.B) { benchServe(b, benchHandler) }

// BenchmarkAllow is the allow path of the middleware with the memory store
// and the default headers; subtract BenchmarkBare for what it adds. The
// policy is far above b.N so that every request is admitted.
func BenchmarkAllow(b *testing.B) {
	mw, err := stdhttp.New(
		ratelimit.WithLimiter(core.NewLimiter(memstore.New(memstore.WithSweepInterval(0)))),
		ratelimit.WithKeyFunc(keyfuncs.Constant("client")),
		ratelimit.WithPolicy(core.MustParsePolicy("1000000000/1h;name=api;algorithm=fixed_window")),
	)
	if err != nil {
		b.Fatal(err)
	}
	benchServe(b, mw(benchHandler))
}

// BenchmarkAllowRemoteIP is BenchmarkAllow keyed by the peer address.
func BenchmarkAllowRemoteIP(b *testing.B) {
	mw, err := stdhttp.New(
		ratelimit.WithLimiter(core.NewLimiter(memstore.New(memstore.WithSweepInterval(0)))),
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("1000000000/1h;name=api;algorithm=fixed_window")),
	)
	if err != nil {
		b.Fatal(err)
	}
	benchServe(b, mw(benchHandler))
}

// BenchmarkBareDiscard is BenchmarkBare without the recorder's header copy.
func BenchmarkBareDiscard(b *testing.B) { httpsuite.Bench(b, benchHandler) }

// BenchmarkAllowDiscard is BenchmarkAllow without the recorder's header
// copy: closer to what a real server pays.
func BenchmarkAllowDiscard(b *testing.B) {
	mw, err := stdhttp.New(
		ratelimit.WithLimiter(core.NewLimiter(memstore.New(memstore.WithSweepInterval(0)))),
		ratelimit.WithKeyFunc(keyfuncs.Constant("client")),
		ratelimit.WithPolicy(core.MustParsePolicy("1000000000/1h;name=api;algorithm=fixed_window")),
	)
	if err != nil {
		b.Fatal(err)
	}
	httpsuite.Bench(b, mw(benchHandler))
}
