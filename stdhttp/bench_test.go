package stdhttp_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// benchHandler answers 204 and sets no header field at all: the least a
// handler can do, against which a middleware's header fields cost the most
// (their map entries are the response's first; see twoHeaders below).
var benchHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })

// jsonBody and jsonHandler are an endpoint as most are: a Content-Type
// field and a small body.
var (
	jsonBody    = []byte(`{"ok":true}`)
	jsonHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(jsonBody)
	})
)

// benchServe serves GET / with h into a fresh httptest recorder per
// iteration and fails unless every response has status want (204 when not
// given).
func benchServe(b *testing.B, h http.Handler, want ...int) {
	status := http.StatusNoContent
	if len(want) > 0 {
		status = want[0]
	}
	req := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != status {
			b.Fatalf("status %d, want %d", rec.Code, status)
		}
	}
}

// allowAll is the middleware of the allow-path benchmarks: the memory
// store, the default headers, and a policy far above b.N so that every
// request is admitted.
func allowAll(b *testing.B, kf keyfuncs.KeyFunc, opts ...ratelimit.Option) func(http.Handler) http.Handler {
	mw, err := stdhttp.New(append(httpsuite.AllowOptions(kf), opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	return mw
}

// BenchmarkBare is the baseline: the handler alone, with a recorder.
func BenchmarkBare(b *testing.B) { benchServe(b, benchHandler) }

// BenchmarkAllow is the allow path of the middleware with the memory store
// and the default headers; subtract BenchmarkBare for what it adds. The
// policy is far above b.N so that every request is admitted.
func BenchmarkAllow(b *testing.B) {
	benchServe(b, allowAll(b, keyfuncs.Constant("client"))(benchHandler))
}

// BenchmarkAllowRemoteIP is BenchmarkAllow keyed by the peer address.
func BenchmarkAllowRemoteIP(b *testing.B) {
	benchServe(b, allowAll(b, keyfuncs.RemoteIP)(benchHandler))
}

// BenchmarkBareDiscard is BenchmarkBare without the recorder's header copy.
func BenchmarkBareDiscard(b *testing.B) { httpsuite.Bench(b, benchHandler) }

// BenchmarkAllowDiscard is BenchmarkAllow without the recorder's header
// copy: closer to what a real server pays.
func BenchmarkAllowDiscard(b *testing.B) {
	httpsuite.Bench(b, allowAll(b, keyfuncs.Constant("client"))(benchHandler))
}

// BenchmarkAllowUsageDiscard is BenchmarkAllowDiscard with the request's
// Usage published (WithUsage) and a predicate that counts every response:
// what publishing adds to an admitted request.
func BenchmarkAllowUsageDiscard(b *testing.B) {
	httpsuite.Bench(b, allowAll(b, keyfuncs.Constant("client"), ratelimit.WithUsage(func(int) bool { return true }))(benchHandler))
}

// BenchmarkAllowSlotDiscard is BenchmarkAllowDiscard under a concurrency
// limit beside the rate policy: a slot taken, renewed by nothing, and given
// back per request.
func BenchmarkAllowSlotDiscard(b *testing.B) {
	httpsuite.Bench(b, allowAll(b, keyfuncs.Constant("client"), ratelimit.WithPolicy(
		core.MustParsePolicy("1000000000/1h;name=api"), core.MustParsePolicy("64;algorithm=concurrency;name=inflight")))(benchHandler))
}

// BenchmarkJSONBare is the baseline for an endpoint that sets
// Content-Type and writes a small JSON body, with the recorder.
func BenchmarkJSONBare(b *testing.B) { benchServe(b, jsonHandler, http.StatusOK) }

// BenchmarkJSONAllow is BenchmarkAllow in front of that endpoint: the
// handler's own header field already gave the map its storage, so the
// difference is what the limiter and its two fields add to a typical
// response.
func BenchmarkJSONAllow(b *testing.B) {
	benchServe(b, allowAll(b, keyfuncs.Constant("client"))(jsonHandler), http.StatusOK)
}

// limited is benchHandler behind the middleware on a memory store of its
// own, keyed by kf, under the policy spelled limit.
func limited(tb testing.TB, kf keyfuncs.KeyFunc, limit string) http.Handler {
	mw, err := stdhttp.New(
		ratelimit.WithLimiter(core.NewLimiter(must.Do(memstore.New()))),
		ratelimit.WithKeyFunc(kf),
		ratelimit.WithPolicy(core.MustParsePolicy(limit)),
	)
	if err != nil {
		tb.Fatal(err)
	}
	return mw(benchHandler)
}

// denyHarness is the deny path as a flood of limited clients sends it: 1,000
// client IPs round robin, keyed by RemoteAddr, each over its 100 per hour
// already (exhausted before the timer starts; at 100 per hour none is
// refilled while the benchmark runs), served into the recorder.
func denyHarness(b *testing.B, kf keyfuncs.KeyFunc, limit string) {
	h := limited(b, kf, limit)
	reqs := make([]*http.Request, 1000)
	for i := range reqs {
		reqs[i] = httptest.NewRequest("GET", "/", nil)
		reqs[i].RemoteAddr = "10.0." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250) + ":1234"
	}
	for range 101 {
		for _, r := range reqs {
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, reqs[i])
		if rec.Code != http.StatusTooManyRequests {
			b.Fatalf("status %d, want 429", rec.Code)
		}
		if i++; i == len(reqs) {
			i = 0
		}
	}
}

// BenchmarkDeny is a denied request (see denyHarness).
func BenchmarkDeny(b *testing.B) { denyHarness(b, keyfuncs.RemoteIP, "100/1h;name=api") }

// BenchmarkDenyDiscard is BenchmarkDeny into a server-like writer, which
// neither copies the header map nor buffers the body as the recorder does;
// compare BenchmarkAllowRemoteIPDiscard.
func BenchmarkDenyDiscard(b *testing.B) {
	mw, err := stdhttp.New(httpsuite.DenyOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	httpsuite.BenchDeny(b, mw(benchHandler))
}

// BenchmarkAllowRemoteIPDiscard is BenchmarkAllowRemoteIP into a
// server-like writer.
func BenchmarkAllowRemoteIPDiscard(b *testing.B) {
	httpsuite.Bench(b, allowAll(b, keyfuncs.RemoteIP)(benchHandler))
}

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
