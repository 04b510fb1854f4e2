package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

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
				for g := 0; g < raceGoroutines; g++ {
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
