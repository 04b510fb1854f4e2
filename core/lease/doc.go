// Package lease serves a hot key's checks from leases: an instance that sees
// a key checked often consumes N units from the store in one check and
// admits its next requests locally until they are spent or the lease
// expires, so a hot key costs the store one call per lease.
//
//	store, _ := redisstore.New(client)
//	leased, err := lease.New(store, []core.Policy{api}) // the policies that may be leased
//	lim := core.NewLimiter(leased)
//
// Guarantees:
//
//   - Never more admitted than the policy allows: every unit handed out was
//     consumed in the store first.
//   - Denials are the store's, so a denial's RetryAfter is exact. Admissions
//     from a lease (Decision.Source core.SourceLease) report approximate
//     Remaining and ResetAfter while other instances consume.
//   - Bounded waste: units still held when a lease expires are lost (Stats),
//     at most WithMaxUnits per instance and hot key per WithLifetime. A fixed
//     window's lease ends with its window.
//
// A key is hot from WithHotRate checks a second on one instance; a lease
// holds about a lifetime of that rate, and halves after the store refuses
// one. Cold keys, multi-policy checks and policies not named at New go to
// the store. Leaky buckets and concurrency limits are refused
// (core.ErrUnsupported): each admission has its own Delay, or its own slot
// to give back, which a lease cannot keep.
package lease
