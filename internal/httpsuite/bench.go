package httpsuite

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// DiscardWriter is a ResponseWriter that, like net/http's server, keeps
// headers in the map H and does not copy them on WriteHeader
// (httptest.ResponseRecorder clones the map, which inflates the cost of
// every header set). It records the status in Code and discards the body.
type DiscardWriter struct {
	H    http.Header
	Code int
}

func (d *DiscardWriter) Header() http.Header         { return d.H }
func (d *DiscardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *DiscardWriter) WriteHeader(code int)        { d.Code = code }

// Bench serves GET / with h once per iteration into a server-like writer
// and fails unless every response is 204. It reports allocations.
func Bench(b *testing.B, h http.Handler) {
	req := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := &DiscardWriter{H: make(http.Header)}
		h.ServeHTTP(w, req)
		if w.Code != http.StatusNoContent {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// BenchParallel is Bench on every P.
func BenchParallel(b *testing.B, h http.Handler) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := httptest.NewRequest("GET", "/", nil)
		for pb.Next() {
			w := &DiscardWriter{H: make(http.Header)}
			h.ServeHTTP(w, req)
			if w.Code != http.StatusNoContent {
				b.Errorf("status %d", w.Code)
				return
			}
		}
	})
}

// DenyClients is the number of client addresses BenchDeny cycles through.
const DenyClients = 1000

// DenyPolicy is the policy BenchDeny's middleware must enforce: each client
// is past it after BenchDeny's warm-up, and none is refilled while a
// benchmark runs.
const DenyPolicy = "100/1h;name=api"

// AllowOptions are the options of the middleware every adapter's allow
// benchmark builds: the memory store, keyed by kf, a policy far above any
// b.N (so that every request is admitted), and extra.
func AllowOptions(kf keyfuncs.KeyFunc, extra ...ratelimit.Option) []ratelimit.Option {
	return append([]ratelimit.Option{
		ratelimit.WithLimiter(core.NewLimiter(must.Do(memstore.New()))),
		ratelimit.WithKeyFunc(kf),
		ratelimit.WithPolicy(core.MustParsePolicy("1000000000/1h;name=api;algorithm=fixed_window")),
	}, extra...)
}

// DenyOptions are the options of the middleware every adapter's deny
// benchmark builds: the memory store, keyed by the peer address, DenyPolicy.
func DenyOptions() []ratelimit.Option {
	return []ratelimit.Option{
		ratelimit.WithLimiter(core.NewLimiter(must.Do(memstore.New()))),
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy(DenyPolicy)),
	}
}

// BenchDeny is the deny path as a flood of limited clients sends it:
// DenyClients client addresses round robin, each past DenyPolicy before the
// timer starts, served by h (middleware keyed by the peer address in front
// of a 204 handler) into a server-like writer. It fails unless every timed
// response is 429, and reports allocations.
func BenchDeny(b *testing.B, h http.Handler) {
	reqs := make([]*http.Request, DenyClients)
	for i := range reqs {
		reqs[i] = httptest.NewRequest("GET", "/", nil)
		reqs[i].RemoteAddr = fmt.Sprintf("10.0.%d.%d:1234", i/250, i%250)
	}
	for range 101 {
		for _, r := range reqs {
			h.ServeHTTP(&DiscardWriter{H: make(http.Header)}, r)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		w := &DiscardWriter{H: make(http.Header)}
		h.ServeHTTP(w, reqs[i])
		if w.Code != http.StatusTooManyRequests {
			b.Fatalf("status %d, want 429", w.Code)
		}
		if i++; i == len(reqs) {
			i = 0
		}
	}
}

// Benches are the benchmarks of an adapter whose middleware is an M: New
// builds one from options, and Engine installs its arguments in an app
// serving GET / with 204.
type Benches[M any] struct {
	New    func(opts ...ratelimit.Option) (M, error)
	Engine func(mws ...M) http.Handler
}

func (bs Benches[M]) with(b *testing.B, opts []ratelimit.Option) http.Handler {
	mw, err := bs.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return bs.Engine(mw)
}

// Bare is the baseline: the app and its handler alone.
func (bs Benches[M]) Bare(b *testing.B) { Bench(b, bs.Engine()) }

// Allow is the allow path (AllowOptions) keyed by a constant; subtract
// Bare for what the middleware adds.
func (bs Benches[M]) Allow(b *testing.B) {
	Bench(b, bs.with(b, AllowOptions(keyfuncs.Constant("client"))))
}

// AllowRemoteIP is Allow keyed by the peer address.
func (bs Benches[M]) AllowRemoteIP(b *testing.B) {
	Bench(b, bs.with(b, AllowOptions(keyfuncs.RemoteIP)))
}

// Deny is BenchDeny: a flood of clients past their limit.
func (bs Benches[M]) Deny(b *testing.B) { BenchDeny(b, bs.with(b, DenyOptions())) }

// BareParallel is Bare on every P.
func (bs Benches[M]) BareParallel(b *testing.B) { BenchParallel(b, bs.Engine()) }

// AllowParallel is Allow on every P, all on one key.
func (bs Benches[M]) AllowParallel(b *testing.B) {
	BenchParallel(b, bs.with(b, AllowOptions(keyfuncs.Constant("client"))))
}
