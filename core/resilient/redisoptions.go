package resilient

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisTimeouts are the go-redis client settings that make a latency budget
// real: with go-redis defaults a dead server costs seconds per call (five
// dial attempts and three command retries) and a hung one blocks until the 5
// s read timeout, because socket I/O ignores the context deadline unless
// ContextTimeoutEnabled is set. The wrapper stops waiting at the budget
// whatever the client does; these settings make the client stop too, so
// abandoned calls end promptly instead of holding goroutines and
// connections.
//
// Copy the fields into your options, or call one of the Apply methods on
// options you have filled in otherwise. The zero value sets every timeout to
// go-redis's default and is not useful; build one with RedisOptions.
type RedisTimeouts struct {
	// DialTimeout bounds one connection attempt.
	DialTimeout time.Duration
	// ReadTimeout and WriteTimeout bound socket I/O.
	ReadTimeout, WriteTimeout time.Duration
	// PoolTimeout bounds the wait for a free connection.
	PoolTimeout time.Duration
	// MaxRetries is -1: go-redis does not retry a failed command. A consuming
	// check must never be retried blindly: a command that timed out may
	// still have been applied.
	MaxRetries int
	// DialerRetries is 1: one dial attempt per connection.
	DialerRetries int
	// ContextTimeoutEnabled is true: go-redis sets socket deadlines from the
	// context, which carries the budget.
	ContextTimeoutEnabled bool
}

// RedisOptions returns the recommended go-redis settings for budget (the
// wrapper's DefaultBudget when budget is zero or less): every timeout equal
// to the budget, no command retry, one dial attempt, and context deadlines
// honoured on socket I/O.
func RedisOptions(budget time.Duration) RedisTimeouts {
	if budget <= 0 {
		budget = DefaultBudget
	}
	return RedisTimeouts{
		DialTimeout:           budget,
		ReadTimeout:           budget,
		WriteTimeout:          budget,
		PoolTimeout:           budget,
		MaxRetries:            -1,
		DialerRetries:         1,
		ContextTimeoutEnabled: true,
	}
}

// Apply sets the timeouts in o, for redis.NewClient.
func (t RedisTimeouts) Apply(o *redis.Options) {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
	o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled = t.MaxRetries, t.DialerRetries, t.ContextTimeoutEnabled
}

// ApplyCluster sets the timeouts in o, for redis.NewClusterClient. Redirects
// (MOVED, ASK) are left as configured: they are how a cluster client follows
// a failover.
func (t RedisTimeouts) ApplyCluster(o *redis.ClusterOptions) {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
	o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled = t.MaxRetries, t.DialerRetries, t.ContextTimeoutEnabled
}

// ApplyFailover sets the timeouts in o, for redis.NewFailoverClient.
func (t RedisTimeouts) ApplyFailover(o *redis.FailoverOptions) {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
	o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled = t.MaxRetries, t.DialerRetries, t.ContextTimeoutEnabled
}

// ApplyUniversal sets the timeouts in o, for redis.NewUniversalClient.
func (t RedisTimeouts) ApplyUniversal(o *redis.UniversalOptions) {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
	o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled = t.MaxRetries, t.DialerRetries, t.ContextTimeoutEnabled
}
