package exampleenv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/redact"
	"github.com/ratelimit-go/ratelimit/metrics"
)

// OpenLimiter returns a limiter on the system clock over the store that
// f.RedisURL selects: an in-memory store when it is "", else Redis wired as
// the README advises for production, which is the form to copy:
//
//   - the go-redis client gets resilient.RedisOptions for the budget:
//     timeouts equal to the budget, no command retry, context deadlines
//     honoured on socket I/O, and a dialer that is back on Redis as soon as
//     it answers again;
//   - the Redis store sits behind resilient.New with that budget, its
//     circuit breaker, and the failure mode f.OnFailure names.
//
// With Redis hung or down, every check then returns within the budget plus
// a few milliseconds instead of go-redis's defaults of 1.7 s (refused) to
// 10 s (hung). Redis must answer a PING at start, within 2 s or ctx's
// deadline. close releases the client; call it once the server has stopped.
//
// When c is not nil the stores feed it: the primary's latency (c.Backend),
// the wrapper's breaker and failures (c.ResilientEvents, Watch),
// the memory store's keys (Watch).
func OpenLimiter(ctx context.Context, f Flags, c *metrics.Collector) (l *core.Limiter, close func() error, err error) {
	if f.RedisURL == "" {
		st, err := memstore.New()
		if err != nil {
			return nil, nil, err
		}
		if c != nil {
			if err := c.Watch("memory", st); err != nil {
				return nil, nil, err
			}
		}
		return core.NewLimiter(st), func() error { return nil }, nil
	}
	opts, err := redis.ParseURL(f.RedisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("-redis: %w", redact.Error(err)) // url.Error quotes the URL, password included
	}
	resilient.RedisOptions(opts, f.Budget)
	client := redis.NewClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		_ = client.Close()
		return nil, nil, fmt.Errorf("-redis %s: %w", opts.Addr, err)
	}
	primary, err := redisstore.New(client)
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	var onFailure resilient.Option
	fallback, err := memstore.New(memstore.WithMaxKeys(1_000_000)) // bounded: a key flood during an outage cannot exhaust memory
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	switch f.OnFailure {
	case "open":
		onFailure = resilient.WithFailOpen()
	case "closed":
		onFailure = resilient.WithFailClosed()
	default:
		onFailure = resilient.WithFallback(fallback)
	}
	var backend core.Backend = primary
	ropts := []resilient.Option{resilient.WithBudget(f.Budget), onFailure}
	if c != nil {
		backend = c.Backend(primary)
		ropts = append(ropts, resilient.WithEvents(c.ResilientEvents()))
	}
	store, err := resilient.New(backend, ropts...)
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	if c != nil {
		if err := errors.Join(c.Watch("redis", store), c.Watch("fallback", fallback)); err != nil {
			_ = client.Close()
			return nil, nil, err
		}
	}
	return core.NewLimiter(store), client.Close, nil
}
