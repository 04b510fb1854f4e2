// Package metrics exports what the rate limiter does as Prometheus metrics:
// a Collector the program registers, fed by the middleware's observer hook
// (every request's outcome, per policy, and who decided it), by
// core/resilient's events (circuit breaker transitions, primary failures by
// kind), by an instrumented backend (call latency), and, at scrape time, by
// the state of watched stores (breaker state, deny-cache hits, memory-store
// keys and keys refused by its cap, observer panics).
//
//	c := metrics.New()
//	if err := c.Register(prometheus.DefaultRegisterer); err != nil { ... }
//	primary, _ := redisstore.New(client)
//	store, err := resilient.New(c.Backend(primary), resilient.WithFallback(fallback), resilient.WithEvents(c.ResilientEvents()))
//	c.Watch("redis", store)
//	m, _ := ratelimit.New(..., ratelimit.WithLimiter(core.NewLimiter(store)), ratelimit.WithObserver(c.Observer()))
//	c.Watch("api", m)
//
// # Metrics
//
// Names follow the Prometheus conventions: the ratelimit_ prefix (behind an
// optional namespace, WithNamespace), base units (seconds), _total on
// counters. Labels are bounded: policy names (at most WithMaxPolicies of
// them; further names are counted as "other") and fixed enumerations, never
// a key.
//
//	ratelimit_checks_total{policy,outcome}      requests checked against each policy, by the request's
//	                                            outcome: allowed, denied, skipped, refused, failed_open,
//	                                            failed_closed; shadow policies count allowed or
//	                                            shadow_denied. policy="none" for requests no policy
//	                                            was chosen for (skipped, refused keys).
//	ratelimit_denials_total{policy}             denials by the policy that denied
//	ratelimit_decisions_total{source}           checked requests by who decided: primary, deny_cache,
//	                                            fallback, fail_open, fail_closed
//	ratelimit_backend_call_duration_seconds{op} latency of calls to the instrumented backend (check,
//	                                            peek, reset)
//	ratelimit_backend_errors_total{kind}        failed primary calls by kind: timeout, refused, script,
//	                                            out_of_memory, cluster, overloaded, other
//	ratelimit_breaker_transitions_total{to}     circuit breaker transitions, by the state entered
//	ratelimit_breaker_state{backend,state}      1 for the breaker's current state (closed, open,
//	                                            half_open), 0 for the others
//	ratelimit_deny_cache_hits_total{backend}    checks the deny cache denied without a round trip
//	ratelimit_memstore_keys{store}              states a memory store holds
//	ratelimit_memstore_refused_total{store}     checks a memory store refused at its key cap
//	ratelimit_observer_panics_total{middleware} observer calls that panicked and were recovered
//
// The observer costs a few map lookups and atomic adds per request and
// allocates nothing once every policy has been seen.
package metrics
