package metrics_test

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/metrics"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

var noContent = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })

// allowPath is the net/http allow path on the memory store, one policy far
// above b.N, with the given extra options.
func allowPath(b *testing.B, extra ...ratelimit.Option) http.Handler {
	m, err := ratelimit.New(httpsuite.AllowOptions(keyfuncs.Constant("k"), extra...)...)
	if err != nil {
		b.Fatal(err)
	}
	return stdhttp.Middleware(m)(noContent)
}

// BenchmarkAllow is the allow path without metrics and with the collector's
// observer attached, in one run, so that the difference is the collector's
// cost per request (target: at most 60 ns and no allocation).
func BenchmarkAllow(b *testing.B) {
	b.Run("without-metrics", func(b *testing.B) { httpsuite.Bench(b, allowPath(b)) })
	b.Run("with-metrics", func(b *testing.B) {
		c, err := metrics.New()
		if err != nil {
			b.Fatal(err)
		}
		if err := prometheus.NewRegistry().Register(c); err != nil {
			b.Fatal(err)
		}
		httpsuite.Bench(b, allowPath(b, ratelimit.WithObserver(c.Observer())))
	})
}

// BenchmarkObserver is the observer alone, on an allowed event of one
// policy.
func BenchmarkObserver(b *testing.B) {
	c, _ := metrics.New()
	obs := c.Observer()
	p := core.MustParsePolicy("100/1m;name=api")
	ev := ratelimit.Event{Outcome: ratelimit.OutcomeAllowed, Policies: []core.Policy{p},
		Result: core.Result{Allowed: true, Decisions: []core.Decision{{Allowed: true}}, Policies: []core.Policy{p}}}
	b.ReportAllocs()
	for b.Loop() {
		obs(b.Context(), ev)
	}
}
