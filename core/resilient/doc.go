// Package resilient keeps a rate limiter fast and predictable when its
// primary backend (in practice core/redisstore) is slow, down, full or
// failing over. Backend wraps the primary and is itself a core.Backend:
//
//	opts := &redis.Options{Addr: "127.0.0.1:6379"}
//	resilient.RedisOptions(opts, resilient.DefaultBudget)
//	primary, err := redisstore.New(redis.NewClient(opts))
//	if err != nil { ... }
//	fallback, err := memstore.New(memstore.WithMaxKeys(1_000_000))
//	if err != nil { ... }
//	store, err := resilient.New(primary,
//		resilient.WithFallback(fallback),
//		resilient.WithDenyCache(0))
//	if err != nil { ... }
//	limiter := core.NewLimiter(store)
//
// # Latency budget
//
// Every primary call gets a budget (DefaultBudget, 50 ms; WithBudget). A
// primary that is core.Bounded (the memory and Redis stores, and wrappers
// of them) is called on the caller's goroutine with the budget as the
// call's wait limit (core.WithWaitLimit); any other primary runs on a
// goroutine of the wrapper's, which stops waiting at the budget even if the
// primary ignores its context, and WithMaxAbandoned bounds how many such
// abandoned calls may still run (their late results are discarded and
// reported as a "late_result" event). A caller's deadline or wait limit that comes
// sooner is that call's budget. The budget bounds only the wait: configure
// the Redis client with RedisOptions so that it stops too.
//
// # Failures, the breaker and the failure modes
//
// A failure is a primary error, a call past the budget, a panic in the
// primary, or a call refused because too many abandoned calls still run.
// The caller's own errors (the core's typed validation errors, the
// caller's context ending first) are returned unchanged and never count.
// After 5 consecutive failures over all keys (WithBreaker) the breaker
// opens: checks go straight to the failure mode; after 1 s exactly one
// check at a time probes the primary, and the first success closes it. The
// breaker reads the clock of WithClock.
//
// Without a mode, a check the primary cannot answer returns an error
// matching ErrUnavailable (and ErrBudgetExceeded, ErrCircuitOpen or the
// primary's error). WithFailOpen admits it; WithFailClosed denies it with a
// RetryAfter equal to the time until the next probe; WithFallback sends it
// to another backend with the same policies, which limits each instance on
// its own (N instances admit up to N times each limit while the primary is
// down). Decision.Source and a Report (WithReport) say what answered;
// WithEvents, Stats and WithLogger make failures observable.
//
// # Deny cache
//
// WithDenyCache remembers denials of the primary and denies the same check
// (one key, the same policies and cost) locally until the earliest
// RetryAfter has passed, with the primary's own answer shifted by the time
// elapsed. It keeps only denials whose every field moves with time alone
// (cost 1 under any algorithm, any cost under fixed windows), so it never
// denies what the primary would admit for this instance; an admission or a
// Reset through this Backend drops stale entries. It is a fixed table:
// keys longer than 512 bytes and checks of more than 8 policies are not
// cached.
//
// Instances pass their own clock's instant to a shared store, whose state
// never moves backwards: a lagging clock gets no refund. docs/redis.md
// gives the measured behaviour under every fault and under clock skew.
package resilient
