// Package memstore is the in-memory Backend: rate-limit state for one process,
// kept in sharded hash tables and decided by the pure functions of package
// core/algo.
//
// A Store is safe for concurrent use. A check hashes its key once; the hash
// picks one of the shards, each a lock and one table per policy, and the slot
// in those tables. All the policies of a multi-policy check are therefore
// decided under a single lock, and checks on different keys rarely contend.
// A check on a key that already has state allocates nothing. A GCRA state
// takes about 40 bytes plus the key (see BenchmarkMillionKeys); a sliding log
// grows with the policy's Limit and never beyond it.
//
// The Store has no clock. It decides with the instant the caller passes
// (core.Limiter reads its Clock once per check), and reclaims state by the
// instant of its most recent check: a state is dropped once that instant has
// reached the state's expiry, the moment from which its absence means the
// same as its presence. A sweep's view of that instant is refreshed
// whenever a check moves it back, or forward by a millisecond, so a sweep
// may lag by up to a millisecond and never runs ahead of the checks. When a
// clock is set back, state waits for the clock to catch up rather than being
// dropped early (which would refund quota). Tests driven by a
// core.ManualClock are therefore deterministic.
//
// State that has expired (whose absence means the same as its presence) is
// reclaimed on the request path, with no goroutine of its own: every check
// that stores a new key also visits a few slots of that policy's table (four)
// under the shard lock it already holds, deleting the expired states it finds,
// and a table that has become mostly empty is rebuilt smaller when that walk
// wraps around, so its memory returns to the runtime. The walk covers a whole
// table between two of its growths, so a table grows only for live state.
// Store.Sweep reclaims everything at once. A Store starts no goroutine and
// needs no closing.
//
// An optional cap on the number of states (WithMaxKeys) protects memory from
// key floods: when it is reached, a new key first reclaims the expired state
// of its shard and is otherwise refused with ErrStoreFull, while keys that
// already have state keep working. Live state is never evicted to make room,
// since evicting it would refund quota to whoever fills the store.
package memstore
