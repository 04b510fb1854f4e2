package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

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
	_, mini := newMiniredis(t)
	backends := []struct {
		name   string
		client func(t *testing.T) redis.UniversalClient
		margin time.Duration
	}{
		{"miniredis", func(*testing.T) redis.UniversalClient { return mini }, 0},
		{"redis", func(t *testing.T) redis.UniversalClient { return redistest.Client(t) }, realMargin},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.Cluster(t) }, realMargin},
	}
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
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			c := b.client(t)
			for i, steps := range traces {
				want := backendtest.Replay(ctx, backendtest.NewReference(), core.NewManualClock(time.Time{}), steps)
				mem := must.Do(memstore.New())
				gotMem := backendtest.Replay(ctx, mem, core.NewManualClock(time.Time{}), steps)
				if err := backendtest.DiffOutcomes(steps, want, gotMem); err != nil {
					t.Fatalf("seed %d: memstore differs from the reference: %v", 1000+i, err)
				}
				s := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(b.margin))
				got := backendtest.Replay(ctx, s, core.NewManualClock(time.Time{}), steps)
				if err := backendtest.DiffOutcomes(steps, gotMem, got); err != nil {
					t.Fatalf("seed %d: %s differs from memstore: %v", 1000+i, b.name, err)
				}
			}
		})
	}
}
