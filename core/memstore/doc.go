// Package memstore is the in-memory Backend: rate-limit state for one process,
// kept in sharded maps and decided by the pure functions of package core/algo.
//
// A Store is safe for concurrent use. A check locks the one shard its key
// hashes to, so all the policies of a multi-policy check are decided under a
// single lock, and checks on different keys rarely contend. A check on a key
// that already has state allocates nothing.
//
// The Store has no clock. It decides with the instant the caller passes
// (core.Limiter reads its Clock once per check), and reclaims state by the
// instant of its most recent check: a state is dropped once that instant has
// reached the state's expiry, the moment from which its absence means the
// same as its presence. The sweeper's view of that instant is refreshed
// whenever a check moves it back, or forward by a millisecond, so reclaiming
// may lag by up to a millisecond and never runs ahead of the checks. When a
// clock is set back, state waits for the clock to catch up rather than being
// dropped early (which would refund quota). Tests driven by a
// core.ManualClock are therefore deterministic.
//
// State that has expired (whose absence means the same as its presence) is
// reclaimed by a background sweeper that visits a bounded number of entries
// per lock hold, and maps that have become mostly empty are rebuilt so their
// memory returns to the runtime. Close stops the sweeper.
//
// An optional cap on the number of states (WithMaxKeys) protects memory from
// key floods: when it is reached, a new key first reclaims the expired state
// of its shard and is otherwise refused with ErrStoreFull, while keys that
// already have state keep working. Live state is never evicted to make room,
// since evicting it would refund quota to whoever fills the store.
package memstore
