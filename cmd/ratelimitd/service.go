package main

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ratelimit-go/ratelimit/metrics"
)

// service is the running ratelimitd: the store, the current configuration
// (swapped whole on reload), and the metrics.
type service struct {
	store   *store
	cfg     atomic.Pointer[runtime]
	log     *slog.Logger
	metrics *metrics.Collector
	reg     *prometheus.Registry
	m       serviceMetrics

	configPath, redisURL string
	inline               *inlineSet // shared by every configuration the service runs
}

// serviceMetrics are the service's own metrics, beside the limiter's.
type serviceMetrics struct {
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	grpcRequests *prometheus.CounterVec
	grpcDuration prometheus.Histogram
	reloads      *prometheus.CounterVec
}

func newServiceMetrics(reg *prometheus.Registry) serviceMetrics {
	m := serviceMetrics{
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ratelimitd_http_requests_total", Help: "HTTP requests, by endpoint and status code."}, []string{"endpoint", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ratelimitd_http_request_duration_seconds", Help: "HTTP request duration, in seconds.", Buckets: latencyBuckets}, []string{"endpoint"}),
		grpcRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ratelimitd_grpc_requests_total", Help: "ShouldRateLimit calls, by gRPC status code and overall code."}, []string{"code", "overall"}),
		grpcDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ratelimitd_grpc_request_duration_seconds", Help: "ShouldRateLimit duration, in seconds.", Buckets: latencyBuckets}),
		reloads:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ratelimitd_config_reloads_total", Help: "Configuration reloads, by result (applied or rejected)."}, []string{"result"}),
	}
	reg.MustRegister(m.httpRequests, m.httpDuration, m.grpcRequests, m.grpcDuration, m.reloads)
	m.reloads.WithLabelValues("applied")
	m.reloads.WithLabelValues("rejected")
	return m
}

// newService loads the configuration and opens the store.
func newService(configPath, redisURL string, log *slog.Logger) (*service, error) {
	rt, err := loadConfig(configPath, redisURL)
	if err != nil {
		return nil, err
	}
	c, err := metrics.New()
	if err != nil {
		return nil, err
	}
	// Beside the library's metrics, the process's own figures
	// (go_goroutines, go_memstats_*, process_resident_memory_bytes, ...),
	// as any Go service exports them.
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	st, err := openStore(rt.backend, rt.limits.memoryKeys, c, log)
	if err != nil {
		return nil, err
	}
	s := &service{store: st, log: log, metrics: c, reg: reg, m: newServiceMetrics(reg), configPath: configPath, redisURL: redisURL, inline: &inlineSet{}}
	rt.inline = s.inline
	s.cfg.Store(rt)
	return s, nil
}

// reload reads the configuration again and applies it when valid: a new
// configuration replaces the old one whole, and since state is found by
// policy identity no client's state is reset. An invalid configuration,
// or one that changes the backend (which needs a restart), is rejected:
// the running one stays, the error is logged and counted.
func (s *service) reload() error {
	rt, err := loadConfig(s.configPath, s.redisURL)
	if err == nil && rt.backend != s.cfg.Load().backend {
		err = &configError{File: s.configPath, Field: "backend", Msg: "the backend cannot change without a restart"}
	}
	if err == nil && rt.limits != s.cfg.Load().limits {
		err = &configError{File: s.configPath, Field: "limits", Msg: "the limits cannot change without a restart"}
	}
	if was := s.cfg.Load().tls.mode(); err == nil && rt.tls.mode() != was {
		err = &configError{File: s.configPath, Field: "tls", Msg: "the service runs " + was + "; changing that needs a restart (a new certificate or client CA does not)"}
	}
	if err != nil {
		s.m.reloads.WithLabelValues("rejected").Inc()
		s.log.Error("configuration rejected; the running one stays", "error", err.Error())
		return err
	}
	rt.inline = s.inline
	s.cfg.Store(rt)
	s.m.reloads.WithLabelValues("applied").Inc()
	s.log.Info("configuration reloaded", "file", s.configPath, "policies", len(rt.policies), "domains", len(rt.domains))
	return nil
}

func (s *service) close() error { return s.store.close() }

// ready reports whether the backend answers within its budget.
func (s *service) ready(ctx context.Context) error { return s.store.ping(ctx) }

// latencyBuckets are the service's request latency buckets, in seconds:
// 100 µs to 1 s, like the metrics module's backend histogram.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
