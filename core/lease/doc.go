// Package lease serves a hot key's checks from leases: an instance that sees
// a key checked often takes a lease of N units from the store in one atomic
// check of cost N (consumed there at once, like any check) and admits its
// next requests locally from those units until they are spent or the lease
// expires. One hot key then costs the store one call per lease instead of
// one per request, whatever the number of instances.
//
//	store, _ := redisstore.New(client)
//	leased, err := lease.New(store, []core.Policy{api}) // api: the policies that may be leased
//	lim := core.NewLimiter(leased)
//
// # Guarantees
//
//   - Never more admitted than the policy allows: every unit handed out was
//     consumed in the store first, by a check the store admitted, so the
//     admissions of all instances together, counted from any instant, never
//     exceed what the store itself would have admitted by then.
//   - Denials are the store's: a check the lease cannot cover goes to the
//     store, so a denied check's RetryAfter is exact. An admission served
//     from a lease reports Remaining as the store left it when the lease was
//     taken plus the units this instance still holds, and a ResetAfter
//     counted down from the store's; both are approximate while other
//     instances consume, and Decision.Source is core.SourceLease.
//   - Bounded waste: units a lease still holds when it expires are lost
//     (counted in Stats.UnitsWasted); at most the largest lease (WithMaxUnits)
//     per instance and hot key per lease lifetime (WithLifetime). A fixed
//     window's lease also ends with its window, so no unit crosses into the
//     next window.
//
// A key is hot when one instance checks it at least WithHotRate times a
// second, measured on the instants the checks carry; a lease then holds
// about a lifetime's worth of this instance's recent rate, at most
// WithMaxUnits and the policy's capacity. When the store cannot grant a
// lease that large, the check goes to the store alone and the next lease is
// half as large. Cold keys, multi-policy checks and policies not named at
// New go straight to the store.
//
// Leaky-bucket policies are refused (core.ErrUnsupported): each admitted request
// of a leaky bucket gets its own Delay, its place in the queue, which a lease
// of many units cannot give.
package lease
