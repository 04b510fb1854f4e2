package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
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

// onServer is a Factory of stores on a shared real server c, each test under
// its own prefix, with realMargin.
func onServer(c redis.UniversalClient) backendtest.Factory {
	return func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin))
	}
}

func TestConformanceMiniredis(t *testing.T) {
	_, c := newMiniredis(t)
	backendtest.Run(t, func(t *testing.T) core.Backend { return newStore(t, c) })
}

func TestConformanceRedis(t *testing.T) {
	c := redistest.Client(t)
	backendtest.Run(t, onServer(c))
}

func TestConformanceCluster(t *testing.T) {
	c := redistest.Cluster(t)
	backendtest.Run(t, onServer(c))
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

// bySlot co-locates keys by the part before the first '|', as a service
// co-locates the descriptors of one domain.
func bySlot(key string) string {
	if i := strings.IndexByte(key, '|'); i >= 0 {
		return key[:i]
	}
	return key
}

func TestMultiKeyMiniredis(t *testing.T) {
	_, c := newMiniredis(t)
	backendtest.RunMultiKey(t, func(t *testing.T) core.Backend { return newStore(t, c) })
}

func TestMultiKeyRedis(t *testing.T) {
	c := redistest.Client(t)
	backendtest.RunMultiKey(t, onServer(c))
}

// TestMultiKeyCluster: on a Cluster the keys of a multi-key check must
// share a slot. With a common slot key the whole suite holds; without one,
// keys of different slots fail with ErrCrossSlot and change nothing.
func TestMultiKeyCluster(t *testing.T) {
	c := redistest.Cluster(t)
	backendtest.RunMultiKey(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin),
			redisstore.WithSlotKey(func(string) string { return "one-slot" }))
	})

	ctx := context.Background()
	now := time.Now()
	p := core.MustParsePolicy("5/1m;name=p")
	plain := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)))
	items := []core.Item{{Key: "a", Policy: p, Cost: 1}, {Key: "b", Policy: p, Cost: 1}, {Key: "c", Policy: p, Cost: 1}}
	out := make([]core.Decision, 3)
	if err := plain.Do(ctx, items, now, out); !errors.Is(err, redisstore.ErrCrossSlot) {
		t.Fatalf("keys of three slots: %v, want ErrCrossSlot", err)
	}
	d, err := backendtest.CheckOne(ctx, plain, "a", p, 1, now)
	if err != nil || d.Remaining != 4 {
		t.Fatalf("after the refused multi-key check a has %+v, %v; want it untouched", d, err)
	}
	tagged := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithSlotKey(bySlot))
	items = []core.Item{{Key: "dom|a", Policy: p, Cost: 1}, {Key: "dom|b", Policy: p, Cost: 1}}
	if err := tagged.Do(ctx, items, now, out[:2]); err != nil || !out[0].Allowed || !out[1].Allowed {
		t.Fatalf("keys of one slot key: %v %+v", err, out[:2])
	}
}

// Differential traces: enough seeds that the three start instants
// RandomTrace picks from (near today, in the year 2100 and before 1970) are
// covered, which the test asserts.
const (
	diffSeeds = 16
	diffSteps = 300
)

// TestDifferential replays the same random traces (all six algorithms,
// single and multi-policy checks, costs, peeks, resets, invalid steps, keys
// with braces, binary bytes and a long key) on the reference backend, the
// memory store, and the Redis store on miniredis, a real Redis and a real
// Cluster, and requires identical outcomes everywhere.
func TestDifferential(t *testing.T) {
	years := map[int]bool{}
	traces := make([][]backendtest.Step, diffSeeds)
	for i := range traces {
		traces[i] = backendtest.RandomTrace(uint64(1000+i), diffSteps, 6, true)
		years[traces[i][0].Set.Year()] = true
	}
	if !years[2026] || !years[2100] || !years[1969] {
		t.Fatalf("traces start in years %v; want 2026, 2100 and 1969", years)
	}
	ctx := context.Background()
	onEachServer(t, func(t *testing.T, c redis.UniversalClient, margin time.Duration) {
		for i, steps := range traces {
			s := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(margin))
			// Backends 1 and 2: memstore and the Redis store.
			if err := backendtest.Diff(ctx, steps, backendtest.NewReference(), must.Do(memstore.New()), s); err != nil {
				t.Fatalf("seed %d: %v", 1000+i, err)
			}
		}
	})
}

// onEachServer runs f as a subtest on miniredis, a real Redis and a real
// Cluster, given the server's client and the TTL margin a server running
// on its own clock needs.
func onEachServer(t *testing.T, f func(t *testing.T, c redis.UniversalClient, margin time.Duration)) {
	t.Run("miniredis", func(t *testing.T) {
		_, c := newMiniredis(t)
		f(t, c, 0)
	})
	t.Run("redis", func(t *testing.T) { f(t, redistest.Client(t), realMargin) })
	t.Run("cluster", func(t *testing.T) { f(t, redistest.Cluster(t), realMargin) })
}
