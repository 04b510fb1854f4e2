package resilient_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

var benchPolicy = core.Policy{Limit: 1_000_000, Window: time.Second, Burst: 1_000_000, Algorithm: core.GCRA}

// benchChecks runs admitted single-policy checks over 1,024 keys.
func benchChecks(b *testing.B, be core.Backend) { benchChecksCtx(b, context.Background(), be) }

// benchChecksCtx is benchChecks with the callers' context ctx.
func benchChecksCtx(b *testing.B, ctx context.Context, be core.Backend) {
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	var tick atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		items, out := []core.Item{{Policy: benchPolicy, Cost: 1}}, make([]core.Decision, 1)
		for pb.Next() {
			now := t0.Add(time.Duration(tick.Add(1)) * time.Microsecond)
			items[0].Key = keys[i&1023]
			if err := be.Do(ctx, items, now, out); err != nil || !out[0].Allowed {
				b.Fatalf("%+v %v", out[0], err)
			}
			i++
		}
	})
}

// BenchmarkHealthy compares a check on the memory store with the same check
// through the wrapper: the difference is the wrapper's overhead on the
// healthy path. The memory store is bounded by its context and its wait
// limit, so the wrapper calls it on the caller's goroutine and gives each
// call a wait limit (one allocation), against a Redis round trip of tens of
// microseconds. A caller whose own deadline comes within the budget (as
// Envoy's do) is spared even that: the "caller-deadline" row.
func BenchmarkHealthy(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchChecks(b, newMem(b)) })
	// A long budget: a GC pause under a profiler must not turn into a
	// timeout that fails the benchmark.
	b.Run("resilient", func(b *testing.B) {
		benchChecks(b, must.Do(resilient.New(newMem(b), resilient.WithBudget(time.Second))))
	})
	b.Run("resilient/caller-deadline", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		benchChecksCtx(b, ctx, must.Do(resilient.New(newMem(b), resilient.WithBudget(time.Minute))))
	})
	b.Run("resilient+denycache", func(b *testing.B) {
		benchChecks(b, must.Do(resilient.New(newMem(b), resilient.WithBudget(time.Second), resilient.WithDenyCache(0))))
	})
}

// BenchmarkDenyCacheHit measures a denial answered by the deny cache.
func BenchmarkDenyCacheHit(b *testing.B) {
	p := core.Policy{Limit: 1, Window: time.Hour}
	benchDenied(b, must.Do(resilient.New(newMem(b), resilient.WithDenyCache(0))), p)
}

// BenchmarkOpenBreaker measures a check answered by the failure mode while
// the breaker is open.
func BenchmarkOpenBreaker(b *testing.B) {
	f := newFaulty(b)
	f.set(failing)
	benchDenied(b, must.Do(resilient.New(f, resilient.WithFailClosed(), resilient.WithBreaker(1, time.Hour))), benchPolicy)
}

// benchDenied runs checks of one key under p after a first one, failing if
// any is admitted.
func benchDenied(b *testing.B, be core.Backend, p core.Policy) {
	ctx := context.Background()
	_, _ = backendtest.CheckOne(ctx, be, "k", p, 1, t0)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		items, out := []core.Item{{Key: "k", Policy: p, Cost: 1}}, make([]core.Decision, 1)
		for pb.Next() {
			_ = be.Do(ctx, items, t0, out)
			if out[0].Allowed {
				b.Fatal("admitted")
			}
		}
	})
}
