package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/redact"
	"github.com/ratelimit-go/ratelimit/metrics"
)

// clock is what the service's limiters read: the system clock. The
// end-to-end tests, which run the service in their own process, shift it
// (see TestMain).
var clock core.Clock = core.SystemClock{}

// store is the service's backend: the memory store, or Redis behind
// core/resilient with the configured budget and failure mode.
type store struct {
	limiter *core.Limiter
	ping    func(context.Context) error // readiness: the backend answers within its budget
	close   func() error
	desc    string // for the logs: "memory" or the Redis addresses
}

// openStore builds the backend spec describes, feeding c.
func openStore(spec backendSpec, c *metrics.Collector, log *slog.Logger) (*store, error) {
	if spec.URL == "memory" {
		m, err := memstore.New(memstore.WithMaxKeys(10_000_000))
		if err != nil {
			return nil, err
		}
		if err := c.WatchMemstore("memory", m); err != nil {
			return nil, err
		}
		return &store{limiter: core.NewLimiter(m, core.WithClock(clock)), ping: func(context.Context) error { return nil }, close: func() error { return nil }, desc: "memory"}, nil
	}
	client, desc, err := redisClient(spec)
	if err != nil {
		return nil, err
	}
	// One script call in flight, not the library's four: the service's own
	// CPU, not Redis, bounds its throughput, and checks that queue behind
	// the call in flight go out together next (a pipeline of calls when
	// more queue than one call decides), so fewer, fuller calls cost both
	// sides less per check. With 64 gRPC clients on one Redis here: 12
	// checks per call instead of 4, 11-15 us of Redis CPU per request
	// instead of 16-22, the service's 47-55 us instead of 54-67, and
	// throughput as high or higher (scripts/bench-service.sh).
	opts := []redisstore.Option{redisstore.WithPipelines(1)}
	if _, ok := client.(*redis.ClusterClient); ok {
		// Every descriptor of one Envoy request must be decided in one
		// script call, so a domain's keys share a slot.
		opts = append(opts, redisstore.WithSlotKey(domainOfKey))
	}
	primary, err := redisstore.New(client, opts...)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	fallback, err := memstore.New(memstore.WithMaxKeys(1_000_000))
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	// The wrapper logs failures (the fallback taking over) and the breaker
	// closing again (Redis back), at most one line per 10 s.
	ropts := []resilient.Option{resilient.WithBudget(spec.Budget), resilient.WithEvents(c.ResilientEvents()), resilient.WithLogger(log, 0)}
	switch spec.OnFailure {
	case "open":
		ropts = append(ropts, resilient.WithFailOpen())
	case "closed":
		ropts = append(ropts, resilient.WithFailClosed())
	default:
		ropts = append(ropts, resilient.WithFallback(fallback))
	}
	if spec.DenyCache > 0 {
		ropts = append(ropts, resilient.WithDenyCache(spec.DenyCache))
	}
	b, err := resilient.New(c.Backend(primary), ropts...)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	if err := errors.Join(c.WatchResilient("redis", b), c.WatchMemstore("fallback", fallback)); err != nil {
		_ = client.Close()
		return nil, err
	}
	ping := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, spec.Budget)
		defer cancel()
		return client.Ping(ctx).Err()
	}
	return &store{limiter: core.NewLimiter(b, core.WithClock(clock)), ping: ping, close: client.Close, desc: desc}, nil
}

// domainOfKey is the slot key of a state key: its domain, the part before
// the first '|' (see domain.match).
func domainOfKey(key string) string {
	if i := strings.IndexByte(key, '|'); i >= 0 {
		return key[:i]
	}
	return key
}

// redisClient builds the go-redis client of a backend URL, with
// resilient.RedisOptions for the budget.
func redisClient(spec backendSpec) (redis.UniversalClient, string, error) {
	switch {
	case strings.HasPrefix(spec.URL, "redis-cluster://"), strings.HasPrefix(spec.URL, "redis-sentinel://"):
		u, err := url.Parse(spec.URL)
		if err != nil {
			return nil, "", fmt.Errorf("backend url: %w", redact.Error(err)) // url.Error quotes the URL, password included
		}
		addrs := strings.Split(u.Host, ",")
		password, _ := u.User.Password()
		if u.Scheme == "redis-cluster" {
			o := &redis.ClusterOptions{Addrs: addrs, Username: u.User.Username(), Password: password}
			resilient.RedisOptions(o, spec.Budget)
			return redis.NewClusterClient(o), "cluster " + u.Host, nil
		}
		master := strings.Trim(u.Path, "/")
		if master == "" {
			return nil, "", errors.New("backend url: redis-sentinel:// needs the master's name as its path")
		}
		o := &redis.FailoverOptions{MasterName: master, SentinelAddrs: addrs, Username: u.User.Username(), Password: password}
		resilient.RedisOptions(o, spec.Budget)
		return redis.NewFailoverClient(o), "sentinel " + u.Host + " master " + master, nil
	}
	o, err := redis.ParseURL(spec.URL)
	if err != nil {
		return nil, "", fmt.Errorf("backend url: %w", redact.Error(err))
	}
	resilient.RedisOptions(o, spec.Budget)
	return redis.NewClient(o), "redis " + o.Addr, nil
}
