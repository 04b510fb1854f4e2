package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

// sharedOp is one step of a differential trace: a check (or peek, cost 0)
// of one key under some policies, or a multi-key check when items is set.
type sharedOp struct {
	key      string
	policies []core.Policy
	items    []core.Item
	cost     int64
	now      time.Time
}

// sharedTrace returns n random steps over a few keys, every algorithm, one
// to three policies per check (a policy sometimes named twice), peeks,
// multi-key checks when many is true (half their items with units of their
// own), and time that sometimes stands still
// and sometimes jumps past a window. One key holds a value of the wrong type
// under every policy (see poison), so its checks fail.
func sharedTrace(rng *rand.Rand, n int, many bool) []sharedOp {
	var ps []core.Policy
	for i, a := range core.Algorithms() {
		ps = append(ps, core.Policy{Name: string(a), Limit: 3 + i%3, Window: time.Duration(1+i) * time.Second, Algorithm: a})
	}
	ps = append(ps, core.Policy{Name: "delayed", Limit: 4, Window: 2 * time.Second, Algorithm: core.LeakyBucket, MaxDelay: time.Second})
	keys := []string{"a", "b", "c", "d", "bad"}
	now := time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)
	ops := make([]sharedOp, n)
	for i := range ops {
		switch rng.IntN(10) {
		case 0:
			now = now.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
		case 1, 2, 3:
			now = now.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
		}
		op := sharedOp{now: now, cost: int64(rng.IntN(4))}
		capacity := 1 << 30
		if many && rng.IntN(5) == 0 {
			for range 2 + rng.IntN(2) {
				p := ps[rng.IntN(len(ps))]
				it := core.Item{Key: keys[rng.IntN(len(keys)-1)], Policy: p}
				if rng.IntN(2) == 0 {
					// Units of its own (Envoy's per-descriptor
					// hits_addend), the same for every item of one
					// policy, so that a state given twice asks for one
					// cost.
					it.Cost = min(p.Limit, 1+int(p.Window/time.Second)%3)
				}
				op.items = append(op.items, it)
				capacity = min(capacity, p.Limit)
			}
			op.cost = max(op.cost, 1)
		} else {
			op.key = keys[rng.IntN(len(keys))]
			for range 1 + rng.IntN(3) {
				p := ps[rng.IntN(len(ps))]
				op.policies = append(op.policies, p)
				capacity = min(capacity, p.Limit)
			}
		}
		op.cost = min(op.cost, int64(capacity))
		ops[i] = op
	}
	return ops
}

func (s *Store) opCall(op sharedOp) *call {
	return s.newItemsCall(op.batch(), op.now)
}

// batch returns the items of op: a multi-key check's, each without units of
// its own consuming op.cost, or one per policy, peeks when op.cost is 0.
func (op sharedOp) batch() []core.Item {
	if op.items != nil {
		items := append([]core.Item(nil), op.items...)
		for i := range items {
			if items[i].Cost == 0 {
				items[i].Cost = int(op.cost)
			}
		}
		return items
	}
	items := make([]core.Item, len(op.policies))
	for i, p := range op.policies {
		items[i] = core.Item{Key: op.key, Policy: p, Cost: int(op.cost)}
		if op.cost == 0 {
			items[i].Op = core.OpPeek
		}
	}
	return items
}

// poison gives key "bad" a hash under every policy's GCRA-style string state
// and a string under the hash states, so that every check of it meets
// WRONGTYPE.
func poison(t *testing.T, s *Store, client redis.UniversalClient, ops []sharedOp) {
	t.Helper()
	ctx := context.Background()
	for _, op := range ops {
		if op.key != "bad" {
			continue
		}
		c := s.opCall(op)
		for i, k := range c.keys {
			var err error
			switch op.policies[i].Algorithm {
			case core.GCRA, core.TokenBucket:
				err = client.HSet(ctx, k, "x", "1").Err()
			default:
				err = client.Set(ctx, k, "x", 0).Err()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSharedCallsMatchOneCallPerCheck is the differential proof for shared
// script calls: one trace runs on two stores of one server, on one with
// every check in its own script call, on the other with consecutive checks
// sent together in groups of random size, as the batcher sends what queued
// while its calls were busy. Every check gets the same reply, or the same
// kind of error, on both: on miniredis, a real Redis and a real Cluster
// (with a common slot key, so that checks share calls there too, and
// without, so that they share only pipelines).
func TestSharedCallsMatchOneCallPerCheck(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		// miniredis fails every command of a script after one has failed,
		// even under pcall, so the wrong-type key stays out of its trace.
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		testSharedMatch(t, c, true, false)
	})
	t.Run("redis", func(t *testing.T) { testSharedMatch(t, redistest.Client(t), true, true) })
	t.Run("cluster-slot-key", func(t *testing.T) {
		testSharedMatch(t, redistest.Cluster(t), true, true, WithSlotKey(func(string) string { return "one" }))
	})
	t.Run("cluster", func(t *testing.T) { testSharedMatch(t, redistest.Cluster(t), false, true) })
}

func testSharedMatch(t *testing.T, client redis.UniversalClient, many, bad bool, opts ...Option) {
	ctx := context.Background()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			ops := sharedTrace(rand.New(rand.NewPCG(seed, 42)), 600, many)
			if !bad {
				ops = slices.DeleteFunc(ops, func(op sharedOp) bool { return op.key == "bad" })
			}
			newStore := func(perCall int) *Store {
				s, err := New(client, append([]Option{WithPrefix(redistest.Prefix(t)), WithChecksPerCall(perCall)}, opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				poison(t, s, client, ops)
				t.Cleanup(func() { _ = redistest.DeletePrefix(ctx, client, s.prefix) })
				return s
			}
			alone, shared := newStore(1), newStore(defaultChecksPerCall)
			rng := rand.New(rand.NewPCG(seed, 7))
			var merged, failed int
			for i := 0; i < len(ops); {
				n := min(1+rng.IntN(20), len(ops)-i)
				group := make([]*call, n)
				for j := range group {
					group[j] = shared.opCall(ops[i+j])
				}
				shared.calls.exec(ctx, group)
				for _, g := range shared.calls.group(group) {
					if len(g) > 1 {
						merged += len(g)
					}
				}
				for j, got := range group {
					want := alone.opCall(ops[i+j])
					alone.calls.exec(ctx, []*call{want})
					if (want.err != nil) != (got.err != nil) || !slices.Equal(want.reply, got.reply) {
						t.Fatalf("step %d %+v: shared call %v %v, own call %v %v", i+j, ops[i+j], got.reply, got.err, want.reply, want.err)
					}
					if want.err != nil {
						failed++
						// miniredis words them differently from Redis.
						if !strings.Contains(got.err.Error(), "WRONGTYPE") || !strings.Contains(want.err.Error(), "WRONGTYPE") {
							t.Fatalf("step %d: errors %q and %q, want WRONGTYPE on both", i+j, got.err, want.err)
						}
					}
				}
				i += n
			}
			if bad && failed == 0 {
				t.Fatal("no check met the wrong-type key: the trace proves nothing about errors")
			}
			if _, isCluster := client.(*redis.ClusterClient); !isCluster || opts != nil {
				if merged < len(ops)/2 {
					t.Fatalf("only %d of %d checks shared a script call", merged, len(ops))
				}
			}
			t.Logf("%d checks, %d in shared calls, %d failed alike", len(ops), merged, failed)
		})
	}
}
