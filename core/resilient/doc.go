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
// primary that promises to return once its context is done or its wait
// limit has passed (core.Bounded: the memory store, the Redis store, and
// wrappers of them such as the metrics module's) is called on the caller's
// goroutine, and the budget reaches it as the call's wait limit
// (core.WithWaitLimit), which costs neither a timer nor a registration with
// a caller's cancelable context: no goroutine, no late result. Any other
// primary gets the budget as its context's deadline, on a goroutine of the
// wrapper's. A caller whose own deadline comes within the
// budget has its context passed on as it is. A wait limit on the caller's
// context that comes before the budget's end is that call's budget: a
// primary silent past it has run out of time, so the failure mode answers
// and the breaker counts a timeout, where the caller's own deadline would
// have ended the call with the caller's error. A service uses it to answer
// a little before its caller's deadline (cmd/ratelimitd does). Any other primary call runs on its own
// goroutine so that the wrapper stops waiting when the budget passes even if
// the primary ignores its context. The abandoned call finishes in the
// background; its result is discarded (an EventLateResult reports it), and
// WithMaxAbandoned bounds how many such calls may run at once, so a primary
// that never returns cannot pile up goroutines.
//
// The budget only bounds the wait. For abandoned calls (and the Redis
// store's goroutines that send commands left on the wire) to end promptly, and
// for a dead server not to cost a connection attempt per check, configure
// the Redis client too: go-redis ignores the context deadline on socket I/O
// unless ContextTimeoutEnabled is set, and its defaults (several dial
// attempts, three command retries, 5 s timeouts) turn a dead server into
// about 1.7 s per call and a hung one into 5 to 10 s. RedisOptions sets
// options matched to a budget: every timeout equal to it, MaxRetries -1 (a
// consuming check must never be retried blindly: a command that timed out
// may still have been applied), one dial attempt, ContextTimeoutEnabled.
//
// # Failures and the circuit breaker
//
// A failure is a primary error (Redis refusing, OOM, a failover's EOF), a
// call that exceeds the budget, a panic in the primary (recovered into an
// error), or a call refused because too many abandoned calls are still
// running. The caller's
// own errors are not failures: the core's typed validation errors
// (core.ErrInvalidPolicy, core.ErrInvalidCost, ...) are returned unchanged,
// as is the caller's context error when its context ends first; neither
// touches the breaker.
//
// After 5 consecutive failures the breaker opens
// (WithBreaker): checks go straight to the failure mode without waiting.
// After 1 s the next check becomes a probe: exactly one
// call goes to the primary while the others keep using the failure mode. A
// probe that succeeds closes the breaker and traffic returns to the primary;
// one that fails keeps it open for another cooldown. The breaker reads the
// clock given with WithClock (the system clock by default).
//
// There is one breaker per Backend, counting consecutive failures over all
// keys. When only part of the primary fails (one master of a Redis Cluster
// down until its replica takes over), successes on the other keys keep the
// breaker closed: checks of the affected keys each wait the budget and then
// get the failure mode, the others are unaffected. The fault tests measure
// this: with cluster-node-timeout 500 ms, about 1.7 s of 50 ms checks on the
// affected keys.
//
// # Failure modes
//
// Without a mode, a check the primary cannot answer returns an error
// matching ErrUnavailable (and ErrBudgetExceeded, ErrCircuitOpen or the
// primary's error), so that the caller decides. WithFailOpen admits it;
// WithFailClosed denies it with a RetryAfter equal to the time until the
// breaker next lets a check reach the primary; WithFallback sends it to
// another backend, usually a memstore, with the same policies.
//
// A fallback limits each instance on its own: while the primary is down, N
// instances admit up to N times each limit between them, and the primary
// does not learn what the fallback admitted once it is back. Checks return
// to the primary as soon as a probe succeeds.
//
// To tell a fail-open admission from a real one, attach a Report to the
// check's context with WithReport; WithEvents reports every failure and
// state change, and Stats counts them. WithLogger logs them at most once per
// interval, with the number of lines suppressed in between.
//
// # Deny cache
//
// WithDenyCache remembers checks the primary denied. Until the earliest
// RetryAfter of the denying policies has passed (measured with the instant
// each check carries), a check of the same key, the same policies and the
// same cost is denied locally without a round trip: an abusive client
// hammering one key costs the primary one call per RetryAfter instead of one
// per request. An answer from the cache is the primary's own, to the
// microsecond, shifted by the time elapsed (Decision.Source says it came
// from the cache): only denials whose every field moves with time alone are
// kept, those where every policy denied and the cost is 1 (a unit check
// denied has no unit left until its RetryAfter, under every algorithm), or
// where every policy is a fixed window (whose count and window end stand
// still until the window ends; such a denial also answers larger costs).
// Other denials go to the primary each time. It never denies what the
// primary would admit for this instance: an admission by the primary drops
// denials it proves stale, and Reset through this Backend drops the key's
// entries. A Reset, or consumption, through another instance is not seen
// before the entry expires.
//
// The cache answers batches of one key at one cost (one or more policies);
// batches of several keys always go to the primary.
//
// The cache is a fixed table of set-associative buckets: it never grows past
// its capacity, a lookup allocates nothing, and keys longer than 512 bytes or
// checks with more than 8 policies are not cached.
//
// # Clock skew between instances
//
// Instances pass their own clock's instant to the shared store, and a
// store's state never moves backwards, so an instance whose clock lags gets
// no refund and Remaining is never negative. The skew tests of this package
// measure what a 5 s skew admits beyond one clock, on a real Redis: under
// sustained load at most one unit over 60 s, for every algorithm, since the
// leading clock drives the state. The worst case is a burst on an idle key
// that the lagging instance writes first: the leading one reads that state
// as 5 s old. Per such burst the excess is at most min(capacity, skew x
// rate) for the token bucket, GCRA and the leaky bucket (measured: exactly
// that), and for the sliding log and sliding window counter (measured: 0 and
// 20 for 100 per 10 s, 10 for 10 per second); for the fixed window it is up
// to Limit when a window edge falls between the two clocks (the window edge
// burst, moved by the skew). redisstore.WithTTLMargin keeps state alive for
// the lagging instance.
package resilient
