package resilient

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions sets in o, the options of a go-redis client, what makes a
// latency budget real for the client too, and returns o: DialTimeout,
// ReadTimeout, WriteTimeout and PoolTimeout to budget (0: DefaultBudget),
// MaxRetries -1 (a check that timed out may have run), DialerRetries 1 and
// ContextTimeoutEnabled. Call it after setting TLSConfig and any Dialer: it
// wraps the dialer so that a failed dial fails its call without making the
// pool stop dialling for a second.
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
		o.Dialer = dialerFor(o.Dialer, &o.DialTimeout, &o.TLSConfig)
	case *redis.FailoverOptions:
		set(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.MaxRetries, &o.DialerRetries, &o.ContextTimeoutEnabled)
		o.Dialer = dialerFor(o.Dialer, &o.DialTimeout, &o.TLSConfig)
	case *redis.UniversalOptions:
		set(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.MaxRetries, &o.DialerRetries, &o.ContextTimeoutEnabled)
		o.Dialer = dialerFor(o.Dialer, &o.DialTimeout, &o.TLSConfig)
	}
	return o
}

// dialerFor returns dial, or go-redis's default dialer with the timeout and
// TLS settings the options hold at dial time, with deferDialErrors.
func dialerFor(dial func(context.Context, string, string) (net.Conn, error), timeout *time.Duration, tlsConfig **tls.Config) func(context.Context, string, string) (net.Conn, error) {
	if dial == nil {
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return redis.NewDialer(&redis.Options{DialTimeout: *timeout, TLSConfig: *tlsConfig})(ctx, network, addr)
		}
	}
	return deferDialErrors(dial)
}

// deferDialErrors wraps dial so that a failed dial returns a connection
// that fails every read and write with its error.
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
