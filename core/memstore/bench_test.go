package memstore_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

// benchPolicy is a policy under which a key checked about once a
// millisecond is admitted about as often as denied.
func benchPolicy(a core.Algorithm) core.Policy {
	return core.Policy{Name: "bench", Limit: 1000, Window: time.Second, Algorithm: a}
}

// benchKeys builds n distinct keys before any timing starts.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	return keys
}

var benchStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// tickEvery is how many checks share one reading of the benchmark clock. The
// clock moves tickEvery µs at a time, 1µs per check on average, and one
// clock serves all goroutines (one timeline, as with the system clock)
// without every check writing to it.
const tickEvery = 64

// tick advances clock before the i-th check of a goroutine.
func tick(clock *core.ManualClock, i int) {
	if i%tickEvery == 0 {
		clock.Advance(tickEvery * time.Microsecond)
	}
}

// BenchmarkAllow measures Limiter.Allow over the store, per algorithm:
// serially over 1,000 keys, in parallel over 1,000 keys, and in parallel on
// one hot key. The clock moves 1µs per check on average.
func BenchmarkAllow(b *testing.B) {
	keys := benchKeys(1000)
	for _, a := range core.Algorithms() {
		p := benchPolicy(a)
		b.Run(string(a)+"/serial-1k", func(b *testing.B) {
			s := must.Do(memstore.New())
			clock := core.NewManualClock(benchStart)
			lim := core.NewLimiter(s, core.WithClock(clock))
			ctx := context.Background()
			admitted := 0
			b.ReportAllocs()
			b.ResetTimer()
			k := 0 // wraps over keys without a division in the loop
			for i := 0; i < b.N; i++ {
				tick(clock, i)
				d, err := lim.Allow(ctx, keys[k], p)
				if k++; k == len(keys) {
					k = 0
				}
				if err != nil {
					b.Fatal(err)
				}
				if d.Allowed {
					admitted++
				}
			}
			b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
		})
		parallel := func(b *testing.B, keys []string) {
			s := must.Do(memstore.New())
			clock := core.NewManualClock(benchStart)
			lim := core.NewLimiter(s, core.WithClock(clock))
			ctx := context.Background()
			// Each goroutine walks the keys in its own random order, as
			// independent clients would: in one shared order the
			// goroutines would meet on the same keys and shards at the
			// same moments, run after run.
			orders := make([][]string, runtime.GOMAXPROCS(0))
			for g := range orders {
				orders[g] = slices.Clone(keys)
				rand.New(rand.NewPCG(uint64(g), 1)).Shuffle(len(keys), func(i, j int) {
					orders[g][i], orders[g][j] = orders[g][j], orders[g][i]
				})
			}
			var started atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				mine := orders[int(started.Add(1)-1)%len(orders)]
				i, k := 0, 0
				for pb.Next() {
					tick(clock, i)
					if _, err := lim.Allow(ctx, mine[k], p); err != nil {
						b.Error(err)
						return
					}
					if k++; k == len(mine) {
						k = 0
					}
					i++
				}
			})
		}
		b.Run(string(a)+"/parallel-1k", func(b *testing.B) { parallel(b, keys) })
		b.Run(string(a)+"/parallel-hot", func(b *testing.B) { parallel(b, keys[:1]) })
	}
}

// BenchmarkMillionKeys fills a store with 1,000,000 keys per algorithm and
// reports the live heap per key after a collection (B/key), then measures
// Allow over those keys, where most lookups miss the CPU caches.
func BenchmarkMillionKeys(b *testing.B) {
	const n = 1_000_000
	keys := benchKeys(n)
	ctx := context.Background()
	for _, a := range core.Algorithms() {
		p := benchPolicy(a)
		b.Run(string(a), func(b *testing.B) {
			clock := core.NewManualClock(benchStart)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s := must.Do(memstore.New())
			lim := core.NewLimiter(s, core.WithClock(clock))
			for _, k := range keys {
				if _, err := lim.Allow(ctx, k, p); err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if s.Len() != n {
				b.Fatalf("Len = %d, want %d", s.Len(), n)
			}
			b.ReportAllocs()
			b.ResetTimer() // also deletes reported metrics: report after the loop
			for i := 0; i < b.N; i++ {
				tick(clock, i)
				if _, err := lim.Allow(ctx, keys[i%n], p); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/key")
		})
	}
}

// BenchmarkDeny measures Limiter.Allow denying, per algorithm: 1,000 keys
// round robin, each past a limit of 100 per minute in its first window, the
// clock still.
func BenchmarkDeny(b *testing.B) {
	keys := benchKeys(1000)
	for _, a := range core.Algorithms() {
		b.Run(string(a), func(b *testing.B) {
			lim := core.NewLimiter(must.Do(memstore.New()), core.WithClock(core.NewManualClock(benchStart)))
			p := core.Policy{Name: "bench", Limit: 100, Window: time.Minute, Algorithm: a}
			ctx := context.Background()
			for _, k := range keys {
				if _, err := lim.AllowN(ctx, k, p, 100); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				if d, err := lim.Allow(ctx, keys[k], p); err != nil || d.Allowed {
					b.Fatalf("Allow = %+v, %v; want a denial", d, err)
				}
				if k++; k == len(keys) {
					k = 0
				}
			}
		})
	}
}

// BenchmarkDo measures the store alone, without the Limiter and its clock:
// batches of one GCRA item over 1,000 keys, serially.
func BenchmarkDo(b *testing.B) {
	keys := benchKeys(1000)
	s := must.Do(memstore.New())
	p := benchPolicy(core.GCRA)
	ctx := context.Background()
	now := benchStart
	admitted := 0
	items, out := []core.Item{{Policy: p, Cost: 1}}, make([]core.Decision, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%tickEvery == 0 {
			now = now.Add(tickEvery * time.Microsecond)
		}
		items[0].Key = keys[i%len(keys)]
		err := s.Do(ctx, items, now, out)
		if err != nil {
			b.Fatal(err)
		}
		if out[0].Allowed {
			admitted++
		}
	}
	b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
}

// serialChecks runs check once per iteration over keys in turn, advancing
// clock as BenchmarkAllow does unless it is nil, and reports the share of
// checks admitted.
func serialChecks(b *testing.B, keys []string, clock *core.ManualClock, check func(key string) (allowed bool, err error)) {
	admitted := 0
	b.ReportAllocs()
	b.ResetTimer()
	k := 0
	for i := 0; i < b.N; i++ {
		if clock != nil {
			tick(clock, i)
		}
		allowed, err := check(keys[k])
		if k++; k == len(keys) {
			k = 0
		}
		if err != nil {
			b.Fatal(err)
		}
		if allowed {
			admitted++
		}
	}
	b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
}

// BenchmarkCheckTwoPolicies measures a multi-policy check through the
// Limiter ("1,000 per second and 1,000,000 per hour" per key, GCRA and
// fixed window): one lock, both policies evaluated, then both committed.
// 1,000 keys, serially.
func BenchmarkCheckTwoPolicies(b *testing.B) {
	s := must.Do(memstore.New())
	clock := core.NewManualClock(benchStart)
	lim := core.NewLimiter(s, core.WithClock(clock))
	policies := []core.Policy{
		benchPolicy(core.GCRA),
		{Name: "hourly", Limit: 1_000_000, Window: time.Hour, Algorithm: core.FixedWindow},
	}
	out := make([]core.Decision, len(policies))
	ctx := context.Background()
	serialChecks(b, benchKeys(1000), clock, func(key string) (bool, error) {
		res, err := lim.Check(ctx, key, policies, 1, out)
		return res.Allowed, err
	})
}

// BenchmarkAllowSystemClock is BenchmarkAllow's serial GCRA row with the
// Limiter's default clock, read on every check, as in production and as
// limiters that read the time themselves are measured. With 1,000 keys
// checked this fast, most checks are denied.
func BenchmarkAllowSystemClock(b *testing.B) {
	s := must.Do(memstore.New())
	lim := core.NewLimiter(s)
	p := benchPolicy(core.GCRA)
	ctx := context.Background()
	serialChecks(b, benchKeys(1000), nil, func(key string) (bool, error) {
		d, err := lim.Allow(ctx, key, p)
		return d.Allowed, err
	})
}

// BenchmarkNewPolicy is the first check under a policy the store has not
// seen before, b.N distinct policies in all: a new policy costs about the
// same however many the store already has.
func BenchmarkNewPolicy(b *testing.B) {
	s := must.Do(memstore.New())
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		if _, err := backendtest.CheckOne(ctx, s, "k", core.Policy{Limit: i, Window: time.Minute}, 1, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLineTransfer measures the host, not the store: what it costs two
// CPUs to pass one cache line between them. Two goroutines take turns
// writing one counter, each spinning until the other has written; an
// operation is one turn of each, so it moves the line twice. Half of it is
// about the price of one transfer, which the parallel rows of BenchmarkAllow
// pay for each shard lock and key state the other goroutine touched last; it
// changes with where the host places its virtual CPUs, and a virtual CPU the
// host takes away for a while shows as a slower figure too (run with -cpu 2).
func BenchmarkLineTransfer(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs two CPUs: -cpu 2")
	}
	var turn struct {
		_ [64]byte
		n atomic.Int64 // even: the benchmark's turn; odd: the partner's
		_ [64]byte
	}
	var stop atomic.Bool
	partner := make(chan struct{})
	go func() {
		defer close(partner)
		for i := int64(1); ; i += 2 {
			for turn.n.Load() != i {
				if stop.Load() {
					return
				}
			}
			turn.n.Store(i + 1)
		}
	}()
	var i int64
	for b.Loop() { // b.Loop times only the loop: the partner's start is not in it
		for turn.n.Load() != i {
		}
		turn.n.Store(i + 1)
		i += 2
	}
	stop.Store(true)
	<-partner
}
