package memstore

import "github.com/ratelimit-go/ratelimit/internal/opt"

// Defaults of the options.
const (
	// defaultShards is the number of shards when withShards is not given.
	defaultShards = 64
	// maxShards bounds withShards.
	maxShards = 1 << 16
)

// config holds the options of a Store.
type config struct {
	opt.Errs
	shards  int
	maxKeys int
}

// Option configures a Store (see package core for the options' rule).
type Option func(*config)

// withShards sets the number of shards, each a lock and its own tables: n
// between 1 and 65536, rounded up to a power of two; 0 selects 64. Tests
// use it (export_test.go) to put keys in one shard or many.
func withShards(n int) Option {
	return func(c *config) {
		if n < 0 || n > maxShards {
			c.Fail("WithShards(%d): want 0 (the default) to %d", n, maxShards)
			return
		}
		if n == 0 {
			n = defaultShards
		}
		p := 1
		for p < n {
			p <<= 1
		}
		c.shards = p
	}
}

// WithMaxKeys caps the number of states (one per key and policy); 0, the
// default, means no cap. At the cap a new state first reclaims its shard's
// expired states, and fails with ErrStoreFull if there is still no room.
func WithMaxKeys(n int) Option {
	return func(c *config) { opt.Count(&c.Errs, &c.maxKeys, "WithMaxKeys", n, 0) }
}
