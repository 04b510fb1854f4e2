package lease_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/lease"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

var floorScript = redis.NewScript("return 1")

// rate runs n operations over goroutines goroutines and returns them per
// second; op gets the goroutine's index.
func rate(b *testing.B, goroutines, n int, op func(g int) error) float64 {
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for g := range goroutines {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := op(g); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkHotKey: one hot key shared by 4 instances (each its own go-redis
// client) through one Redis, 64 goroutines in all, the system clock, a
// fixed window of 1,000,000,000 per hour (nothing is denied). It reports the
// admitted checks per second with leases on and off, and the trivial
// EVALSHA floor of the same run (64 goroutines, one client), and the ratio
// of the leased rate to the floor.
func BenchmarkHotKey(b *testing.B) {
	c := redistest.NewClient()
	if c == nil {
		b.Skipf("%s is not set", redistest.AddrEnv)
	}
	defer c.Close()
	ctx := context.Background()
	if err := floorScript.Load(ctx, c).Err(); err != nil {
		b.Fatal(err)
	}
	p := core.Policy{Limit: 1_000_000_000, Window: time.Hour, Algorithm: core.FixedWindow}
	const instances, goroutines = 4, 64
	var leasedPrefix string
	build := func(leased bool) []*core.Limiter {
		prefix := "bench:" + time.Now().Format("150405.000000") + ":"
		if leased {
			leasedPrefix = prefix
		}
		var lims []*core.Limiter
		for range instances {
			cl := redistest.NewClient()
			b.Cleanup(func() { _ = cl.Close() })
			s, err := redisstore.New(cl, redisstore.WithPrefix(prefix))
			if err != nil {
				b.Fatal(err)
			}
			var be core.Backend = s
			if leased {
				lb, err := lease.New(s, []core.Policy{p})
				if err != nil {
					b.Fatal(err)
				}
				be = lb
			}
			lims = append(lims, core.NewLimiter(be))
		}
		return lims
	}
	var admitted atomic.Int64
	check := func(lims []*core.Limiter) func(g int) error {
		return func(g int) error {
			d, err := lims[g%instances].Allow(ctx, "hot", p)
			if err == nil && !d.Allowed {
				b.Fatal("denied under a limit of 1e9 per hour")
			}
			if d.Allowed {
				admitted.Add(1)
			}
			return err
		}
	}
	floor := func(int) error { return floorScript.EvalSha(ctx, c, []string{"hot"}).Err() }
	on, off := build(true), build(false)
	b.ResetTimer()
	f1 := rate(b, goroutines, max(b.N/20, 1000), floor)
	leasedRate := rate(b, goroutines, b.N, check(on))
	leasedAdmitted := admitted.Load()
	plainRate := rate(b, goroutines, max(b.N/20, 1000), check(off))
	f2 := rate(b, goroutines, max(b.N/20, 1000), floor)
	b.StopTimer()
	// Zero over-admission: the store consumed at least every unit the
	// leased instances admitted (the rest is what the leases still hold).
	s, err := redisstore.New(c, redisstore.WithPrefix(leasedPrefix))
	if err != nil {
		b.Fatal(err)
	}
	out := make([]core.Decision, 1)
	if err := core.Peek(ctx, s, "hot", []core.Policy{p}, time.Now(), out); err != nil {
		b.Fatal(err)
	}
	consumed := int64(p.Limit - out[0].Remaining)
	if leasedAdmitted > consumed {
		b.Fatalf("%d admitted from leases, %d consumed in the store: over-admission", leasedAdmitted, consumed)
	}
	b.ReportMetric(float64(consumed-leasedAdmitted), "held/op-run")
	fl := (f1 + f2) / 2
	b.ReportMetric(leasedRate, "leased/s")
	b.ReportMetric(plainRate, "plain/s")
	b.ReportMetric(fl, "floor/s")
	b.ReportMetric(leasedRate/fl, "ratio")
}
