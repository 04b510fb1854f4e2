package redisstore_test

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
	"github.com/ratelimit-go/ratelimit/internal/testcerts"
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

// under is a Factory of stores on a real server c under prefix (which an
// ACL may require), with realMargin.
func under(c redis.UniversalClient, prefix string) backendtest.Factory {
	return func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(prefix), redisstore.WithTTLMargin(realMargin))
	}
}

// TestConformanceMiniredis runs the conformance suite, and the multi-key
// one, on miniredis.
func TestConformanceMiniredis(t *testing.T) {
	_, c := newMiniredis(t)
	runBoth(t, func(t *testing.T) core.Backend { return newStore(t, c) })
}

// TestConformanceRedis runs both suites on a real Redis.
func TestConformanceRedis(t *testing.T) {
	runBoth(t, onServer(redistest.Client(t)))
}

// runBoth runs the conformance suite and the multi-key one.
func runBoth(t *testing.T, f backendtest.Factory) {
	backendtest.Run(t, f)
	backendtest.RunMultiKey(t, f)
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

// TestConformanceTLSAndACL runs the conformance suite against a real Redis
// over TLS, as an ACL user allowed only docs/redis.md's commands: every
// operation of every algorithm runs within them.
func TestConformanceTLSAndACL(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	const prefix = "rltls:"
	_, addr := redisproc.StartTLS(t, ca, redisproc.StoreACL("ratelimit", "s3cret", prefix))
	roots := ca.Pool()
	opts := &redis.Options{Addr: addr, Username: "ratelimit", Password: "s3cret",
		TLSConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	resilient.RedisOptions(opts, resilient.DefaultBudget)
	opts.ReadTimeout, opts.WriteTimeout = 0, 0 // a loaded CI machine: no spurious timeouts
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	runBoth(t, under(c, prefix))
}

// TestACLLineDocumented: the ACL line the tests grant is the one
// docs/redis.md shows.
func TestACLLineDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/redis.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "ACL SETUSER "+strings.TrimPrefix(redisproc.StoreACLDoc(), "user ")) {
		t.Fatalf("docs/redis.md does not show the ACL line the tests grant:\nACL SETUSER %s", strings.TrimPrefix(redisproc.StoreACLDoc(), "user "))
	}
}

// TestClusterACL: on a real Cluster, docs/redis.md's line plus
// +cluster|slots is all a user of the store needs.
func TestClusterACL(t *testing.T) {
	const prefix = "rlacl:"
	cl := redisproc.StartCluster(t, 3, 0, 2*time.Second, redisproc.StoreACL("ratelimit", "s3cret", prefix)+" +cluster|slots")
	var addrs []string
	for _, n := range cl.Nodes {
		addrs = append(addrs, n.Addr)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Username: "ratelimit", Password: "s3cret", MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	backendtest.Run(t, under(c, prefix))
}

// TestConformanceClusterTLS: the suite over a Cluster that speaks TLS to
// clients and between its nodes, go-redis given one TLS configuration for
// every node (their certificates name their IP address), as the ACL user.
func TestConformanceClusterTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "cluster")
	const prefix = "rlctls:"
	_, addrs := redisproc.StartClusterTLS(t, ca, 3, 2*time.Second, redisproc.StoreACL("ratelimit", "s3cret", prefix)+" +cluster|slots")
	roots := ca.Pool()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Username: "ratelimit", Password: "s3cret", MaxRetries: -1,
		TLSConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}})
	t.Cleanup(func() { _ = c.Close() })
	backendtest.Run(t, under(c, prefix))
}

const (
	raceClients    = 8
	raceGoroutines = 400
	raceLimit      = 100
)

func TestConcurrentExactRedis(t *testing.T) {
	testConcurrentExact(t, func(t *testing.T) redis.UniversalClient { return redistest.Client(t) })
}

func TestConcurrentExactCluster(t *testing.T) {
	testConcurrentExact(t, func(t *testing.T) redis.UniversalClient { return redistest.Cluster(t) })
}

// testConcurrentExact: 400 goroutines over 8 separate clients (8 pools, as 8
// instances would have) check one key at one frozen instant; exactly 100 of
// them are admitted, for every algorithm, alone and together with a roomier
// policy of another algorithm.
func testConcurrentExact(t *testing.T, newClient func(t *testing.T) redis.UniversalClient) {
	clients := make([]redis.UniversalClient, raceClients)
	for i := range clients {
		clients[i] = newClient(t)
	}
	algs := append(core.Algorithms(), core.Concurrency)
	for i, a := range algs {
		p := core.Policy{Limit: raceLimit, Window: time.Minute, Algorithm: a}
		roomy := core.Policy{Limit: 10 * raceLimit, Window: time.Hour, Algorithm: algs[(i+1)%len(algs)]}
		for _, tc := range []struct {
			name     string
			policies []core.Policy
		}{
			{string(a), []core.Policy{p}},
			{string(a) + "+" + string(roomy.Algorithm), []core.Policy{roomy, p}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				prefix := redistest.Prefix(t)
				stores := make([]*redisstore.Store, raceClients)
				for j, c := range clients {
					stores[j] = newStore(t, c, redisstore.WithPrefix(prefix))
				}
				var admitted, failed atomic.Int64
				var wg sync.WaitGroup
				start := make(chan struct{})
				for g := range raceGoroutines {
					wg.Add(1)
					go func(s *redisstore.Store) {
						defer wg.Done()
						<-start
						out := make([]core.Decision, len(tc.policies))
						var err error
						if len(tc.policies) == 1 {
							out[0], err = backendtest.CheckOne(context.Background(), s, "hot", tc.policies[0], 1, t0)
						} else {
							err = core.Check(context.Background(), s, "hot", tc.policies, 1, t0, out)
						}
						if err != nil {
							failed.Add(1)
							t.Error(err)
							return
						}
						ok := true
						for _, d := range out {
							ok = ok && d.Allowed
						}
						if ok {
							admitted.Add(1)
						}
					}(stores[g%raceClients])
				}
				close(start)
				wg.Wait()
				if failed.Load() != 0 || admitted.Load() != raceLimit {
					t.Fatalf("admitted %d of %d (%d errors), want exactly %d", admitted.Load(), raceGoroutines, failed.Load(), raceLimit)
				}
				out := make([]core.Decision, len(tc.policies))
				if err := core.Peek(context.Background(), stores[0], "hot", tc.policies, t0, out); err != nil {
					t.Fatal(err)
				}
				last := out[len(out)-1]
				if last.Remaining != 0 || last.Allowed {
					t.Fatalf("after the race: %+v, want nothing remaining", last)
				}
				if len(out) == 2 && out[0].Remaining != 10*raceLimit-raceLimit {
					t.Fatalf("roomy policy: %+v, want %d remaining", out[0], 10*raceLimit-raceLimit)
				}
			})
		}
	}
}

// TestConcurrentManyKeysCluster: one client, so concurrent checks share
// pipelines that span several keys and therefore several cluster nodes;
// every key still admits exactly its limit.
func TestConcurrentManyKeysCluster(t *testing.T) {
	c := redistest.Cluster(t)
	s := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)))
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"} // spread over the three masters
	p := core.Policy{Limit: raceLimit, Window: time.Minute, Algorithm: core.GCRA}
	admitted := make([]atomic.Int64, len(keys))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < 2*raceLimit*len(keys); g++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			<-start
			d, err := backendtest.CheckOne(context.Background(), s, keys[k], p, 1, t0)
			if err != nil {
				t.Error(err)
				return
			}
			if d.Allowed {
				admitted[k].Add(1)
			}
		}(g % len(keys))
	}
	close(start)
	wg.Wait()
	for i := range keys {
		if n := admitted[i].Load(); n != raceLimit {
			t.Errorf("key %q: admitted %d of %d, want %d", keys[i], n, 2*raceLimit, raceLimit)
		}
	}
}
