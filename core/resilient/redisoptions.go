package resilient

import (
	"context"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions sets in o, the options of a go-redis client, the settings
// that make a latency budget real, and returns o. With go-redis defaults a
// dead server costs seconds per call (five dial attempts and three command
// retries) and a hung one blocks until the 5 s read timeout, because socket
// I/O ignores the context deadline unless ContextTimeoutEnabled is set. The
// wrapper stops waiting at the budget whatever the client does; these
// settings make the client stop too, so abandoned calls end promptly instead
// of holding goroutines and connections.
//
// It sets DialTimeout, ReadTimeout, WriteTimeout and PoolTimeout to budget
// (the wrapper's DefaultBudget when budget is zero or less), MaxRetries to -1
// (a consuming check that timed out may still have been applied, so it is
// never retried blindly), DialerRetries to 1 and ContextTimeoutEnabled to
// true. Call it after setting TLSConfig and any Dialer of your own: it also
// wraps the dialer so that the client is back on Redis as soon as it answers
// again. go-redis's pool, once PoolSize dials in a row have failed, stops
// dialling for about a second and answers every call with the remembered
// error; the wrapped dialer hands the pool a failed dial as a connection
// whose first read or write returns the dial error, so the call fails at once
// as before but the next call dials anew. Redirects of a cluster client
// (MOVED, ASK) are left as configured: they are how it follows a failover.
func RedisOptions[O *redis.Options | *redis.ClusterOptions | *redis.FailoverOptions | *redis.UniversalOptions](o O, budget time.Duration) O {
	if o == nil {
		return o
	}
	if budget <= 0 {
		budget = DefaultBudget
	}
	set := func(dial, read, write, pool *time.Duration, retries, dialRetries *int, ctxTimeout *bool) {
		*dial, *read, *write, *pool = budget, budget, budget, budget
		*retries, *dialRetries, *ctxTimeout = -1, 1, true
	}
	switch o := any(o).(type) {
	case *redis.Options:
		set(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.MaxRetries, &o.DialerRetries, &o.ContextTimeoutEnabled)
		inner := o.Dialer
		if inner == nil {
			inner = redis.NewDialer(o) // reads o's DialTimeout and TLSConfig when it dials
		}
		o.Dialer = deferDialErrors(inner)
	case *redis.ClusterOptions:
		set(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.MaxRetries, &o.DialerRetries, &o.ContextTimeoutEnabled)
		o.Dialer = deferDialErrors(dialerFor(o.Dialer, func() *redis.Options {
			return &redis.Options{DialTimeout: o.DialTimeout, TLSConfig: o.TLSConfig}
		}))
	case *redis.FailoverOptions:
		set(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.MaxRetries, &o.DialerRetries, &o.ContextTimeoutEnabled)
		o.Dialer = deferDialErrors(dialerFor(o.Dialer, func() *redis.Options {
			return &redis.Options{DialTimeout: o.DialTimeout, TLSConfig: o.TLSConfig}
		}))
	case *redis.UniversalOptions:
		set(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.MaxRetries, &o.DialerRetries, &o.ContextTimeoutEnabled)
		o.Dialer = deferDialErrors(dialerFor(o.Dialer, func() *redis.Options {
			return &redis.Options{DialTimeout: o.DialTimeout, TLSConfig: o.TLSConfig}
		}))
	}
	return o
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
