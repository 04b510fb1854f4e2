package resilient

import (
	"context"
	"net"
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
// Call one of the Apply methods on options you have filled in otherwise
// (after TLSConfig and any Dialer of your own): besides the fields below they
// wrap the dialer so that the client is back on Redis as soon as it answers
// again. go-redis's pool, once PoolSize dials in a row have failed, stops
// dialling, answers every call with the remembered dial error and probes the
// server once a second, so a restarted Redis stayed unused for up to a
// second (about 900 of 3,300 checks failed in one measured run). The wrapped
// dialer hands the pool a failed dial as a connection whose first read or
// write returns the dial error: the call fails at once with that error, as
// before, but the pool never counts a failed dial, and the next call dials
// anew. Copying the fields alone leaves that behaviour as go-redis has it. The zero value sets every timeout to
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

// Apply sets the timeouts in o, for redis.NewClient, and wraps its dialer
// (go-redis's own when o.Dialer is nil) so that failed dials never lock the
// pool out (see RedisTimeouts).
func (t RedisTimeouts) Apply(o *redis.Options) {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
	o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled = t.MaxRetries, t.DialerRetries, t.ContextTimeoutEnabled
	inner := o.Dialer
	if inner == nil {
		inner = redis.NewDialer(o) // reads o's DialTimeout and TLSConfig when it dials
	}
	o.Dialer = deferDialErrors(inner)
}

// dialerFor returns dial, or go-redis's default dialer for the options that
// options returns at dial time.
func dialerFor(dial func(context.Context, string, string) (net.Conn, error), options func() *redis.Options) func(context.Context, string, string) (net.Conn, error) {
	if dial != nil {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return redis.NewDialer(options())(ctx, network, addr)
	}
}

// deferDialErrors wraps dial so that a dial that fails returns, instead of
// its error, a connection that fails every read and write with that error.
// go-redis counts failed dials and, at PoolSize of them, stops dialling for
// about a second; a connection that fails on use is removed like any broken
// connection and counts nothing, so the next call dials again.
func deferDialErrors(dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return &failedConn{err: err, addr: failedAddr{network, addr}}, nil
		}
		return c, nil
	}
}

// failedConn is a dial that failed, as a net.Conn: every read and write
// returns the dial error.
type failedConn struct {
	err  error
	addr failedAddr
}

func (c *failedConn) Read([]byte) (int, error)         { return 0, c.err }
func (c *failedConn) Write([]byte) (int, error)        { return 0, c.err }
func (c *failedConn) Close() error                     { return nil }
func (c *failedConn) LocalAddr() net.Addr              { return c.addr }
func (c *failedConn) RemoteAddr() net.Addr             { return c.addr }
func (c *failedConn) SetDeadline(time.Time) error      { return nil }
func (c *failedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *failedConn) SetWriteDeadline(time.Time) error { return nil }

// failedAddr is the address a failed dial was for.
type failedAddr struct{ network, addr string }

func (a failedAddr) Network() string { return a.network }
func (a failedAddr) String() string  { return a.addr }

// ApplyCluster sets the timeouts in o, for redis.NewClusterClient, and wraps
// its dialer as Apply does. Redirects
// (MOVED, ASK) are left as configured: they are how a cluster client follows
// a failover.
func (t RedisTimeouts) ApplyCluster(o *redis.ClusterOptions) {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
	o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled = t.MaxRetries, t.DialerRetries, t.ContextTimeoutEnabled
	o.Dialer = deferDialErrors(dialerFor(o.Dialer, func() *redis.Options {
		return &redis.Options{DialTimeout: o.DialTimeout, TLSConfig: o.TLSConfig}
	}))
}

// ApplyFailover sets the timeouts in o, for redis.NewFailoverClient, and
// wraps its dialer as Apply does.
func (t RedisTimeouts) ApplyFailover(o *redis.FailoverOptions) {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
	o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled = t.MaxRetries, t.DialerRetries, t.ContextTimeoutEnabled
	o.Dialer = deferDialErrors(dialerFor(o.Dialer, func() *redis.Options {
		return &redis.Options{DialTimeout: o.DialTimeout, TLSConfig: o.TLSConfig}
	}))
}

// ApplyUniversal sets the timeouts in o, for redis.NewUniversalClient, and
// wraps its dialer as Apply does.
func (t RedisTimeouts) ApplyUniversal(o *redis.UniversalOptions) {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = t.DialTimeout, t.ReadTimeout, t.WriteTimeout, t.PoolTimeout
	o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled = t.MaxRetries, t.DialerRetries, t.ContextTimeoutEnabled
	o.Dialer = deferDialErrors(dialerFor(o.Dialer, func() *redis.Options {
		return &redis.Options{DialTimeout: o.DialTimeout, TLSConfig: o.TLSConfig}
	}))
}
