package exampleenv

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
)

// OpenLimiter returns a limiter on the system clock over the store that
// redisURL selects: an in-memory store when it is "", else a Redis store
// on a client for that URL, which must answer a PING within 2 s or ctx's
// deadline, whichever is earlier. close releases the store (and the
// client); call it once the server has stopped.
func OpenLimiter(ctx context.Context, redisURL string) (l *core.Limiter, close func() error, err error) {
	if redisURL == "" {
		st := memstore.New()
		return core.NewLimiter(st), st.Close, nil
	}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("-redis: %w", err)
	}
	client := redis.NewClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		_ = client.Close()
		return nil, nil, fmt.Errorf("-redis %s: %w", opts.Addr, err)
	}
	st, err := redisstore.New(client)
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	return core.NewLimiter(st), client.Close, nil
}
