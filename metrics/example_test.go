package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/metrics"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// The collector wired to every source, and /metrics served with promhttp.
// In production the primary would be a redisstore.Store.
func Example() {
	c, err := metrics.New()
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		log.Fatal(err)
	}
	primary, err := memstore.New()
	if err != nil {
		log.Fatal(err)
	}
	fallback, err := memstore.New(memstore.WithMaxKeys(100_000))
	if err != nil {
		log.Fatal(err)
	}
	store, err := resilient.New(c.Backend(primary),
		resilient.WithFallback(fallback),
		resilient.WithEvents(c.ResilientEvents()))
	if err != nil {
		log.Fatal(err)
	}
	m, err := ratelimit.New(
		ratelimit.WithLimiter(core.NewLimiter(store)),
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("2/1m;name=api"),
			core.MustParsePolicy("1/1m;name=api-stricter;shadow=true")), // a rollout, dry run
		ratelimit.WithObserver(c.Observer()),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = c.Watch("redis", store)
	_ = c.Watch("fallback", fallback)
	_ = c.Watch("api", m)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") })
	app := stdhttp.Middleware(m)(mux)
	for range 3 {
		app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}

	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	rec := httptest.NewRecorder()
	metricsHandler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil).WithContext(context.Background()))
	lines := bufio.NewScanner(rec.Body)
	for lines.Scan() {
		if l := lines.Text(); strings.HasPrefix(l, "ratelimit_checks_total") || strings.HasPrefix(l, "ratelimit_decisions_total{source=\"primary\"}") {
			fmt.Println(l)
		}
	}
	// Output:
	// ratelimit_checks_total{outcome="allowed",policy="api"} 2
	// ratelimit_checks_total{outcome="allowed",policy="api-stricter"} 1
	// ratelimit_checks_total{outcome="denied",policy="api"} 1
	// ratelimit_checks_total{outcome="shadow_denied",policy="api-stricter"} 1
	// ratelimit_decisions_total{source="primary"} 3
}
