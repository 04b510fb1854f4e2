package memstore

import "time"

// Defaults of the options.
const (
	// DefaultShards is the number of shards when WithShards is not given.
	DefaultShards = 64
	// MaxShards bounds WithShards.
	MaxShards = 1 << 16
)

// config holds the options of a Store.
type config struct {
	shards        int
	maxKeys       int
	sweepInterval time.Duration
}

// Option configures a Store. Options are applied in order by New; a later
// option overrides an earlier one of the same kind.
type Option func(*config)

// WithShards sets the number of shards, each a lock and its own tables. n is
// rounded up to a power of two and capped at MaxShards; n <= 0 selects
// DefaultShards (64). More shards mean less lock contention between keys and
// a little more fixed memory (a few hundred bytes per shard and policy).
func WithShards(n int) Option {
	return func(c *config) {
		if n <= 0 {
			n = DefaultShards
		}
		n = min(n, MaxShards)
		p := 1
		for p < n {
			p <<= 1
		}
		c.shards = p
	}
}

// WithMaxKeys caps the number of states the store holds (Store.Len: one per
// key and policy). 0, the default, means no cap; a negative n is treated as
// 0. When the cap is reached, a check that would create a new state first
// reclaims expired states of its key's shard and, if there is still no room,
// fails with ErrStoreFull without changing anything. Checks on states that
// already exist are never refused for lack of room.
func WithMaxKeys(n int) Option {
	return func(c *config) { c.maxKeys = max(n, 0) }
}

// WithSweepInterval starts a background sweeper that calls Store.Sweep every
// d; Store.Close stops it. It is off by default, and d <= 0 leaves it off:
// checks reclaim expired state incrementally on their own (see the package
// documentation), so the sweeper only matters for a store that stops
// receiving new keys and should still return the memory of expired ones.
func WithSweepInterval(d time.Duration) Option {
	return func(c *config) { c.sweepInterval = d }
}
