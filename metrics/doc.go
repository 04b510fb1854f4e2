// Package metrics exports what the rate limiter does as Prometheus metrics: a
// Collector fed by the middleware's observer (each request's outcome per
// policy, and who decided it), by core/resilient's events, by an
// instrumented backend (call latency), and at scrape time by watched stores
// (breaker state, deny-cache hits, memory-store keys).
//
//	c, err := metrics.New()
//	prometheus.MustRegister(c) // a prometheus.Collector
//	primary, _ := redisstore.New(client)
//	store, err := resilient.New(c.Backend(primary), resilient.WithFallback(fallback), resilient.WithEvents(c.ResilientEvents()))
//	c.Watch("redis", store)
//	m, _ := ratelimit.New(..., ratelimit.WithLimiter(core.NewLimiter(store)), ratelimit.WithObserver(c.Observer()))
//	c.Watch("api", m)
//
// Names follow the Prometheus conventions (the ratelimit_ prefix behind an
// optional WithNamespace, seconds, _total on counters), and labels are
// bounded: at most WithMaxPolicies policy names (the rest count as "other")
// and fixed enumerations, never a key. docs/observability.md lists the
// metrics.
package metrics
