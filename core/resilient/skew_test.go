package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
	"github.com/redis/go-redis/v9"
)

// skew is the clock difference between the two instances of the skew test.
const skew = 5 * time.Second

// skewPolicy admits 10 per second: skew times rate is 50 units.
func skewPolicy(alg core.Algorithm) core.Policy {
	return core.Policy{Name: "skew", Limit: 10, Window: time.Second, Algorithm: alg}
}

// newRedisLimiterPair returns two limiters on the same Redis keys (through
// two stores and two clients), with their own manual clocks.
func newRedisStore(t *testing.T, srv *redisproc.Server, prefix string) *redisstore.Store {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(c, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestClockSkewNoRefund: once an instance has used up a key's quota, an
// instance whose clock is 5 s behind gets nothing back.
func TestClockSkewNoRefund(t *testing.T) {
	srv := redisproc.Start(t)
	ctx := context.Background()
	for _, alg := range core.Algorithms() {
		p := skewPolicy(alg)
		prefix := "skew-refund-" + string(alg) + ":"
		base := t0
		ahead := core.NewLimiter(newRedisStore(t, srv, prefix), core.WithClock(core.NewManualClock(base)))
		behind := core.NewLimiter(newRedisStore(t, srv, prefix), core.WithClock(core.NewManualClock(base.Add(-skew))))
		for range p.Limit {
			if d, err := ahead.Allow(ctx, "k", p); err != nil || !d.Allowed {
				t.Fatalf("%s: within the limit: %+v, %v", alg, d, err)
			}
		}
		d, err := behind.Allow(ctx, "k", p)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed || d.Remaining < 0 || d.RetryAfter <= 0 {
			t.Fatalf("%s: the lagging instance was refunded: %+v", alg, d)
		}
		t.Logf("%s: the instance %v behind is denied with RetryAfter %v on its own clock", alg, skew, d.RetryAfter)
	}
}

// TestClockSkewOverAdmission: two instances whose clocks differ by 5 s
// share one key under sustained overload for 60 s. Remaining is never
// negative, and the units admitted exceed those of two instances with one
// clock by at most skew times rate. The measured excess is logged per
// algorithm.
func TestClockSkewOverAdmission(t *testing.T) {
	srv := redisproc.Start(t)
	ctx := context.Background()
	const (
		duration = 60 * time.Second
		step     = 10 * time.Millisecond // each instance checks every 10 ms
	)
	run := func(alg core.Algorithm, prefix string, offset time.Duration) (admitted int) {
		p := skewPolicy(alg)
		a := core.NewManualClock(t0)
		b := core.NewManualClock(t0.Add(offset))
		la := core.NewLimiter(newRedisStore(t, srv, prefix), core.WithClock(a))
		lb := core.NewLimiter(newRedisStore(t, srv, prefix), core.WithClock(b))
		for elapsed := time.Duration(0); elapsed < duration; elapsed += step {
			for _, l := range []*core.Limiter{la, lb} {
				d, err := l.Allow(ctx, "k", p)
				if err != nil {
					t.Fatal(err)
				}
				if d.Remaining < 0 || d.RetryAfter < 0 || d.ResetAfter < 0 {
					t.Fatalf("%s: negative quantities: %+v", alg, d)
				}
				if d.Allowed {
					admitted++
				}
			}
			a.Advance(step)
			b.Advance(step)
		}
		return admitted
	}
	for _, alg := range core.Algorithms() {
		p := skewPolicy(alg)
		bound := int(int64(skew) * int64(p.Limit) / int64(p.Window)) // skew times rate
		same := run(alg, "skew-same-"+string(alg)+":", 0)
		for _, offset := range []time.Duration{-skew, skew} {
			skewed := run(alg, "skew-"+offset.String()+"-"+string(alg)+":", offset)
			excess := skewed - same
			t.Logf("%s: second clock %+v: %d admitted in %v, %d with one clock: excess %d (bound skew*rate = %d)",
				alg, offset, skewed, duration, same, excess, bound)
			if excess > bound {
				t.Errorf("%s: skew %v admitted %d more than one clock, above skew*rate = %d", alg, offset, excess, bound)
			}
		}
	}
}

// TestClockSkewBursts: the worst case of skew. When the key is idle and the
// lagging instance writes it first, the leading instance reads that state as
// 5 s old. For every algorithm but the fixed window it finds at most
// min(capacity, skew times rate) units refilled beyond what one clock would
// give; for the fixed window, a window edge between the two clocks gives it
// a fresh window (the window edge burst, moved by the skew), so up to Limit.
// When the leading instance writes first, the lagging one gains nothing.
func TestClockSkewBursts(t *testing.T) {
	srv := redisproc.Start(t)
	ctx := context.Background()
	const bursts = 4
	// burst runs bursts of twice the capacity from two limiters, first
	// from one whose clock reads base+first then from one at base+second,
	// with idle gaps that let the state expire on both clocks. It returns
	// the units admitted per burst.
	burst := func(p core.Policy, prefix string, base, first, second time.Duration) []int {
		a := core.NewManualClock(t0.Add(base + first))
		b := core.NewManualClock(t0.Add(base + second))
		la := core.NewLimiter(newRedisStore(t, srv, prefix), core.WithClock(a))
		lb := core.NewLimiter(newRedisStore(t, srv, prefix), core.WithClock(b))
		var per []int
		for range bursts {
			n := 0
			for _, l := range []*core.Limiter{la, lb} {
				for range 2 * p.Capacity() {
					d, err := l.Allow(ctx, "k", p)
					if err != nil {
						t.Fatal(err)
					}
					if d.Remaining < 0 {
						t.Fatalf("%v: negative remaining %+v", p, d)
					}
					if d.Allowed {
						n++
					}
				}
			}
			per = append(per, n)
			a.Advance(40 * time.Second)
			b.Advance(40 * time.Second)
		}
		return per
	}
	for _, alg := range core.Algorithms() {
		for _, p := range []core.Policy{skewPolicy(alg), {Name: "skew-10s", Limit: 100, Window: 10 * time.Second, Algorithm: alg}} {
			bound := min(p.Capacity(), int(int64(skew)*int64(p.Limit)/int64(p.Window)))
			if alg == core.FixedWindow {
				bound = p.Limit
			}
			// t0 is 5 s into a 10 s window: base 0 keeps both clocks in one
			// 10 s window, base 7 s puts an edge between them.
			worst := 0
			for _, base := range []time.Duration{0, 7 * time.Second} {
				name := string(alg) + "-" + p.Window.String() + "-" + base.String()
				same := burst(p, "skew-burst-same-"+name+":", base, 0, 0)
				laggingFirst := burst(p, "skew-burst-lag-"+name+":", base, -skew, 0)
				leadingFirst := burst(p, "skew-burst-lead-"+name+":", base, 0, -skew)
				for i := range bursts {
					ex := laggingFirst[i] - same[i]
					worst = max(worst, ex)
					if ex > bound {
						t.Errorf("%s: burst %d admitted %d more than one clock, above the bound %d", name, i, ex, bound)
					}
					if leadingFirst[i] > same[i] {
						t.Errorf("%s: burst %d: the lagging instance gained %d after the leading one wrote", name, i, leadingFirst[i]-same[i])
					}
				}
			}
			t.Logf("%s %v: skew %v, rate %d per %v: worst excess per burst %d (bound %d, capacity %d)",
				alg, p.Window, skew, p.Limit, p.Window, worst, bound, p.Capacity())
		}
	}
}
