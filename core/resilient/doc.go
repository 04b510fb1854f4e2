// Package resilient keeps a rate limiter fast and predictable when its
// primary backend (core/redisstore) is slow, down or failing over. Backend
// wraps the primary and is itself a core.Backend:
//
//	opts := &redis.Options{Addr: "127.0.0.1:6379"}
//	resilient.RedisOptions(opts, resilient.DefaultBudget)
//	primary, err := redisstore.New(redis.NewClient(opts))
//	...
//	fallback, err := memstore.New(memstore.WithMaxKeys(1_000_000))
//	...
//	store, err := resilient.New(primary, resilient.WithFallback(fallback), resilient.WithDenyCache(0))
//	...
//	limiter := core.NewLimiter(store)
//
// Every primary call gets a budget (WithBudget, 50 ms), or the caller's
// sooner deadline. A core.Bounded primary is called on the caller's
// goroutine with the budget as its wait limit; any other runs on a goroutine
// the wrapper stops waiting for at the budget (WithMaxAbandoned bounds how
// many may still run).
//
// A failure is a primary error, a call past the budget, a panic, or a call
// refused for too many abandoned ones; the caller's own errors never count.
// After WithBreaker's consecutive failures (5) the breaker opens and checks
// go to the failure mode; after its cooldown (1 s) one check at a time
// probes the primary. Without a mode a failed check returns an error
// matching ErrUnavailable; WithFailOpen admits it, WithFailClosed denies it
// until the next probe, and WithFallback asks another backend (each instance
// then limits on its own). Decision.Source, WithEvents, Stats and WithLogger
// tell what answered.
//
// WithDenyCache denies a repeated check (same key, policies and cost) that
// the primary denied, locally, until its RetryAfter; it keeps only denials
// that move with time alone, so it never denies what the primary would
// admit. docs/redis.md gives the behaviour under every fault.
package resilient
