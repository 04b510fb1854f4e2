// Package memstore is the in-memory Backend: rate-limit state for one process,
// kept in sharded maps and decided by the pure functions of package core/algo.
//
// A Store is safe for concurrent use. A check locks the one shard its key
// hashes to, so all the policies of a multi-policy check are decided under a
// single lock, and checks on different keys rarely contend. A check on a key
// that already has state allocates nothing.
//
// The Store has no clock. It decides with the instant the caller passes
// (core.Limiter reads its Clock once per check) and judges expiry against the
// newest instant it has been given, so tests driven by a core.ManualClock are
// deterministic.
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
