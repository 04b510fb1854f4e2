package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// nopBackend admits everything without keeping state: what remains of an
// Allow over it is the Limiter's own cost.
type nopBackend struct{}

func (nopBackend) Do(_ context.Context, items []core.Item, _ time.Time, out []core.Decision) error {
	for i := range items {
		out[i] = core.Decision{Allowed: true, Limit: items[i].Policy.Limit, Remaining: items[i].Policy.Limit}
	}
	return nil
}

// BenchmarkLimiterOverhead is Allow over a backend that does nothing, on a
// manual clock: the clock read, the interface call and the Decision
// returned by value, which every backend's figure includes.
func BenchmarkLimiterOverhead(b *testing.B) {
	lim := core.NewLimiter(nopBackend{}, core.WithClock(core.NewManualClock(time.Unix(1_700_000_000, 0))))
	p := core.MustParsePolicy("100/1m;name=api")
	ctx := context.Background()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		d, err := lim.Allow(ctx, "key", p)
		if err != nil {
			b.Fatal(err)
		}
		n += d.Remaining
	}
	if n == 0 {
		b.Fatal("no decision admitted")
	}
}

// BenchmarkSystemClock is one reading of the default clock, which a
// Limiter on the system clock pays per check.
func BenchmarkSystemClock(b *testing.B) {
	var c core.Clock = core.SystemClock()
	var sum int64
	for b.Loop() {
		sum += c.Now().UnixMicro()
	}
	if sum == 0 {
		b.Fatal("clock read zero")
	}
}

// BenchmarkTimeNow is time.Now, for comparison with BenchmarkSystemClock:
// it also reads the monotonic clock, which the limiter does not use.
func BenchmarkTimeNow(b *testing.B) {
	var sum int64
	for b.Loop() {
		sum += time.Now().UnixMicro()
	}
	if sum == 0 {
		b.Fatal("clock read zero")
	}
}
