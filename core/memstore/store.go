package memstore

import (
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/opt"
)

// ErrStoreFull is returned when a check would create a new state in a store
// holding WithMaxKeys states, even after reclaiming its shard's expired
// ones. Nothing is changed.
var ErrStoreFull = errors.New("memstore: store is full")

// errShortOut reports an out slice with fewer elements than policies.
var errShortOut = errors.New("memstore: out has fewer elements than policies")

// Compile-time checks of the interfaces the Store implements.
var (
	_ core.Backend = (*Store)(nil)
	_ core.Bounded = (*Store)(nil)
)

// Bounded implements core.Bounded: true. A call waits for nothing but a
// shard's lock, held for the length of one decision.
func (*Store) Bounded() bool { return true }

// Store is the in-memory Backend; create it with New. It keeps state per
// key and distinct Policy value, and remembers every valid Policy it was
// given for its whole life: policies come from configuration.
type Store struct {
	shards  []shard
	mask    uint64
	seed    maphash.Seed
	reg     registry
	maxKeys int64         // 0: no cap
	keys    atomic.Int64  // states held, over all shards
	refused atomic.Uint64 // checks refused with ErrStoreFull
	// latest is the instant (µs) of the most recent check, for Sweep,
	// published when it moves back or forward by publishGrain.
	latest atomic.Int64

	sweepMu sync.Mutex // serialises whole-store sweeps
}

// shard is one lock and the tables of the keys that hash to it.
type shard struct {
	mu   sync.Mutex
	now  int64      // instant (µs) of the shard's most recent check
	tabs []anyTable // index = policyInfo.id; nil until the policy is used here
	// pad keeps neighbouring shards' locks off one cache line pair.
	_ [128 - 8 - 8 - 24]byte
}

// New returns a Store configured by opts. It starts no goroutine and needs
// no closing; without options it never fails.
func New(opts ...Option) (*Store, error) {
	c := config{Errs: opt.Errs{Pkg: "memstore"}, shards: defaultShards}
	opt.Apply(&c, opts)
	if c.Err != nil {
		return nil, c.Err
	}
	s := &Store{
		shards:  make([]shard, c.shards),
		mask:    uint64(c.shards - 1),
		seed:    maphash.MakeSeed(),
		maxKeys: int64(c.maxKeys),
	}
	return s, nil
}

// Len returns the number of states the store holds: one per key and policy
// under which the key has state, including expired states not yet reclaimed.
func (s *Store) Len() int { return int(s.keys.Load()) }

// locate hashes key and returns its shard (every policy of a key lives in
// one) and hash.
func (s *Store) locate(key string) (*shard, uint64) {
	h := maphash.String(s.seed, key)
	return &s.shards[h&s.mask], h
}

// publishGrain is how far forward the store's time must move before a check
// publishes it: Sweep's time trails the checks by less than this.
const publishGrain = 1000 // µs

// observe records now as the time of sh's most recent check and publishes
// it as the store's time when it moved back, or forward by publishGrain: a
// clock set back keeps states until it reaches their expiry again.
func (s *Store) observe(sh *shard, now int64) {
	sh.now = now
	if l := s.latest.Load(); now < l || now >= l+publishGrain {
		s.latest.Store(now)
	}
}

// reserve claims room for n new states, reclaiming expired states of sh
// (never key's own) when the cap is reached. Requires sh.mu.
func (s *Store) reserve(sh *shard, n int64, key string, h uint64) error {
	if n == 0 {
		return nil
	}
	if s.maxKeys == 0 {
		s.keys.Add(n)
		return nil
	}
	if s.tryReserve(n) {
		return nil
	}
	if removed := sh.reclaim(reclaimBudget, key, h); removed > 0 {
		s.keys.Add(-int64(removed))
	}
	if s.tryReserve(n) {
		return nil
	}
	s.refused.Add(1)
	return ErrStoreFull
}

// Refused returns how many checks the store refused with ErrStoreFull
// because the cap of WithMaxKeys was reached.
func (s *Store) Refused() uint64 { return s.refused.Load() }

// tryReserve adds n to the state count if the cap allows it.
func (s *Store) tryReserve(n int64) bool {
	for {
		c := s.keys.Load()
		if c+n > s.maxKeys {
			return false
		}
		if s.keys.CompareAndSwap(c, c+n) {
			return true
		}
	}
}

// reclaimBudget bounds the entries a check visits to make room when the
// store is full, so that no request scans a whole shard.
const reclaimBudget = 256

// reclaim deletes expired states of the shard among at most budget visited
// entries, never key's own, starting each table at a place derived from h.
// Requires sh.mu.
func (sh *shard) reclaim(budget int, key string, h uint64) int {
	removed := 0
	for _, t := range sh.tabs {
		if t == nil {
			continue
		}
		r, v := t.reclaim(sh.now, budget, key, h)
		removed += r
		if budget -= v; budget <= 0 {
			break
		}
	}
	return removed
}
