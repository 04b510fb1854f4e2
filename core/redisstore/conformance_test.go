package redisstore_test

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

// realMargin lengthens TTLs on real servers: Redis expires keys by its wall
// clock, while the suite's manual clock may advance a few milliseconds
// across steps that take longer on the wall clock (windows as short as
// 10 ms), so without it a state could vanish before it stops mattering on
// the manual clock.
const realMargin = time.Minute

// newMiniredis returns a client of a fresh in-process miniredis.
func newMiniredis(t *testing.T) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return m, c
}

func newStore(t testing.TB, c redis.UniversalClient, opts ...redisstore.Option) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformanceMiniredis(t *testing.T) {
	_, c := newMiniredis(t)
	backendtest.Run(t, func(t *testing.T) core.Backend { return newStore(t, c) })
}

func TestConformanceRedis(t *testing.T) {
	c := redistest.Client(t)
	backendtest.Run(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin))
	})
}

func TestConformanceCluster(t *testing.T) {
	c := redistest.Cluster(t)
	backendtest.Run(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin))
	})
}

// TestConformanceRing runs the suite over a *redis.Ring of two miniredis
// shards: the Ring places keys by their hash tag, so all the keys of one
// check land on one shard and the script can reach them.
func TestConformanceRing(t *testing.T) {
	a, b := miniredis.RunT(t), miniredis.RunT(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr(), "b": b.Addr()}, MaxRetries: -1})
	t.Cleanup(func() { _ = ring.Close() })
	backendtest.Run(t, func(t *testing.T) core.Backend { return newStore(t, ring) })
	if len(a.Keys()) == 0 || len(b.Keys()) == 0 {
		t.Fatalf("keys per shard: %d and %d; want both shards used", len(a.Keys()), len(b.Keys()))
	}
}
