// Package memstore is the in-memory Backend: state for one process, in
// sharded hash tables, decided by the functions of core/algo.
//
// A Store is safe for concurrent use; all policies of a check are decided
// under one shard lock, and a check on a key with state allocates nothing.
// It has no clock: it decides with the caller's instant and reclaims a state
// once the latest instant it has seen (refreshed at least every millisecond)
// reaches the state's expiry, so a clock set back never drops state early.
// Reclaiming runs on the request path (each new key visits a few slots of
// its table), shrinks tables that become mostly empty, and needs no
// goroutine and no Close.
//
// WithMaxKeys caps the number of states: at the cap a new key first reclaims
// its shard's expired states and is otherwise refused with ErrStoreFull.
// Live state is never evicted, since that would refund quota.
package memstore
