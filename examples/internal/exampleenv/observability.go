package exampleenv

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/metrics"
)

// Observability is an example's metrics: a Collector on a registry of its
// own, with the Go runtime's collectors beside it.
type Observability struct {
	Collector *metrics.Collector
	Registry  *prometheus.Registry
}

// NewObservability builds the Collector and registers it, with the Go
// runtime's and the process's collectors, on a registry of its own.
func NewObservability() (*Observability, error) {
	c, err := metrics.New()
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Observability{Collector: c, Registry: reg}, nil
}

// Options are the middleware options that feed the Collector.
func (o *Observability) Options() []ratelimit.Option {
	return []ratelimit.Option{ratelimit.WithObserver(o.Collector.Observer())}
}

// Handler serves the registry in the Prometheus exposition formats.
func (o *Observability) Handler() http.Handler {
	return promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{})
}
