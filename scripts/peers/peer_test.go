// Package peers holds the side-by-side benchmarks against other libraries:
// a module of its own, outside the project's modules and go.work, so that
// no module of the project requires a peer. Run them with
// scripts/bench-peers.sh.
package peers

import (
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/httprate"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// bare is the handler every row wraps: a 204 with no header field.
var bare = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })

// requests are 1,000 requests from distinct client addresses.
func requests() []*http.Request {
	reqs := make([]*http.Request, 1000)
	for i := range reqs {
		reqs[i] = httptest.NewRequest("GET", "/", nil)
		reqs[i].RemoteAddr = "10.0." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250) + ":1234"
	}
	return reqs
}

// ours is the stdhttp middleware over the memory store, keyed by the peer
// address, with the default headers.
func ours(b testing.TB, limit int, window time.Duration) http.Handler {
	store, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	mw, err := stdhttp.New(
		ratelimit.WithLimiter(core.NewLimiter(store)),
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.Policy{Limit: limit, Window: window}),
	)
	if err != nil {
		b.Fatal(err)
	}
	return mw(bare)
}

// chi is go-chi/httprate keyed by the peer address, as its documentation
// shows a key function that trusts no header.
func chi(limit int) http.Handler {
	return httprate.LimitBy(limit, time.Minute, peerIP)(bare)
}

// peerIP is the request's peer address, canonicalised as httprate does.
func peerIP(r *http.Request) (string, error) {
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	return httprate.CanonicalizeIP(ip), nil
}

// run serves the requests round robin into a recorder, after warm rounds
// of warm-up (101 exhaust a limit of 100), and fails unless 99% of the
// timed responses have status want.
func run(b *testing.B, h http.Handler, warm int, want int) {
	reqs := requests()
	loop(b, len(reqs), warm, want, func(i int) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, reqs[i])
		return rec.Code
	})
}

// loop serves requests 0 to n-1 round robin through serve, which returns
// the status: warm rounds first, then the timed ones, and fails unless 99%
// of those have status want.
func loop(b *testing.B, n, warm, want int, serve func(i int) int) {
	for range warm {
		for i := range n {
			serve(i)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	i, hits := 0, 0
	for b.Loop() {
		if serve(i) == want {
			hits++
		}
		if i++; i == n {
			i = 0
		}
	}
	b.StopTimer()
	if hits < b.N*99/100 {
		b.Fatalf("%d of %d answered %d", hits, b.N, want)
	}
}

// The rows of the README's table: the bare handler, then each limiter
// admitting (a limit never reached) and denying (100 per minute, exhausted
// in warm-up), then constant header fields with no limiter (the floor rows
// below).
func BenchmarkBare(b *testing.B) { run(b, bare, 0, http.StatusNoContent) }
func BenchmarkOursAllow(b *testing.B) {
	run(b, ours(b, 1_000_000_000, 24*time.Hour), 1, http.StatusNoContent)
}
func BenchmarkHttprateAllow(b *testing.B) { run(b, chi(1_000_000_000), 1, http.StatusNoContent) }
func BenchmarkOursDeny(b *testing.B) {
	run(b, ours(b, 100, time.Minute), 101, http.StatusTooManyRequests)
}
func BenchmarkHttprateDeny(b *testing.B) { run(b, chi(100), 101, http.StatusTooManyRequests) }

// floor2 writes the two header fields an admitted response of ours carries,
// as constants, and no limiter: what the recorder costs for them.
var floor2 = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Ratelimit-Policy"] = []string{`"default";q=100;w=60`}
	h["Ratelimit"] = []string{`"default";r=99;t=1`}
	w.WriteHeader(http.StatusNoContent)
})

var body429 = []byte(`{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"rate limit exceeded","violated_policies":["default"]}`)

// floorDeny writes the five header fields and the body of our 429 as
// constants, and no limiter.
var floorDeny = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Ratelimit-Policy"] = []string{`"default";q=100;w=60`}
	h["Ratelimit"] = []string{`"default";r=0;t=1`}
	h["Retry-After"] = []string{"1"}
	h["Content-Type"] = []string{"application/problem+json"}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(body429)
})

func BenchmarkFloorAllow(b *testing.B) { run(b, floor2, 0, http.StatusNoContent) }
func BenchmarkFloorDeny(b *testing.B)  { run(b, floorDeny, 0, http.StatusTooManyRequests) }

// TestAllocsPerRequest counts the allocations of one request of each row
// exactly, as the difference of runtime.MemStats.Mallocs over 100,000
// requests: a benchmark's allocs/op is a whole number, and the deny row's
// moved between 8 and 9 from run to run before denials had prepared
// header fields. It fails when a denied request of ours allocates more than
// an admitted one, or more than 4 objects beyond the bare handler (the
// recorder's buffer for the body, the header map's storage, and the two
// its header copy takes for the fields). scripts/bench-peers.sh prints its
// figures.
func TestAllocsPerRequest(t *testing.T) {
	rows := []struct {
		name string
		h    http.Handler
		warm int
	}{
		{"Bare", bare, 0},
		{"OursAllow", ours(t, 1_000_000_000, 24*time.Hour), 1},
		{"OursDeny", ours(t, 100, time.Minute), 101},
		{"FloorAllow", floor2, 0},
		{"FloorDeny", floorDeny, 0},
	}
	got := make(map[string]float64)
	for _, row := range rows {
		reqs := requests()
		for range row.warm {
			for _, r := range reqs {
				row.h.ServeHTTP(httptest.NewRecorder(), r)
			}
		}
		const n = 100_000
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range n {
			row.h.ServeHTTP(httptest.NewRecorder(), reqs[i%len(reqs)])
		}
		runtime.ReadMemStats(&after)
		got[row.name] = float64(after.Mallocs-before.Mallocs) / n
		t.Logf("%-12s %.3f allocs/request", row.name, got[row.name])
	}
	if d := got["OursDeny"] - got["OursAllow"]; d > 0.05 {
		t.Errorf("a denied request allocates %.3f more than an admitted one, want none", d)
	}
	if d := got["OursDeny"] - got["Bare"]; d > 4.05 {
		t.Errorf("a denied request allocates %.3f more than the bare handler, want at most 4", d)
	}
}
