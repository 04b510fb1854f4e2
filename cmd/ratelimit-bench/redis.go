package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
)

func init() { registerBackend("redis", openRedis) }

// redisTTLMargin keeps bench keys alive although the bench's manual clock
// may advance more slowly than the wall clock Redis expires keys by (a small
// -step); otherwise a key could vanish while it still matters to the run.
const redisTTLMargin = 10 * time.Minute

// openRedis opens the Redis store over -redis (a redis:// URL) or
// -redis-cluster (seed addresses), after a PING. Every run uses a fresh
// random key prefix, so runs never see each other's state, and the client
// never retries a command (a retried check could be counted twice).
func openRedis(cfg backendConfig) (core.Backend, func(), error) {
	var client redis.UniversalClient
	switch {
	case cfg.RedisURL != "" && len(cfg.RedisCluster) > 0:
		return nil, nil, errors.New("-backend redis: give -redis or -redis-cluster, not both")
	case len(cfg.RedisCluster) > 0:
		client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: cfg.RedisCluster, MaxRetries: -1})
	case cfg.RedisURL != "":
		opt, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("-redis: %w", err)
		}
		opt.MaxRetries = -1
		client = redis.NewClient(opt)
	default:
		return nil, nil, errors.New("-backend redis needs -redis URL or -redis-cluster addresses")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, nil, fmt.Errorf("redis: %w", err)
	}
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	s, err := redisstore.New(client,
		redisstore.WithPrefix("ratelimit-bench:"+hex.EncodeToString(id[:])+":"),
		redisstore.WithTTLMargin(redisTTLMargin))
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	return s, func() { _ = client.Close() }, nil
}
