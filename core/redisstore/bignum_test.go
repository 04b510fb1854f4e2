package redisstore_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

// bigTrace builds a trace at the edge of the numbers the algorithms allow:
// limits and bursts near core.MaxLimit (the sliding log's limit for the
// log), odd windows up to a year, costs up to the capacity, so that
// timestamps in 2100, tolerances near 10^15 microseconds, integer divisions
// and the sliding window's floating-point estimate all run where rounding
// would show.
func bigTrace(seed uint64, n int) []backendtest.Step {
	rng := rand.New(rand.NewPCG(seed, 7))
	windows := []time.Duration{
		7*time.Second + 13*time.Microsecond,
		time.Hour - time.Microsecond,
		366*24*time.Hour - 3*time.Microsecond,
	}
	var pool []core.Policy
	for _, a := range core.Algorithms() {
		w := windows[rng.IntN(len(windows))]
		p := core.Policy{Algorithm: a, Window: w, Limit: core.MaxLimit - rng.IntN(1000)}
		if a == core.SlidingLog {
			p.Limit = 1000 + rng.IntN(9000) // one list element per unit
		}
		if rateBased(a) {
			p.Limit = min(p.Limit, int(w/time.Microsecond))
			// Burst*Interval must stay within the core's tolerance bound.
			interval := (int64(w/time.Microsecond) + int64(p.Limit) - 1) / int64(p.Limit)
			p.Burst = int(min(int64(core.MaxLimit), 1_000_000_000_000_000/interval) - rng.Int64N(1000))
		}
		if err := p.Validate(); err != nil {
			panic(err)
		}
		pool = append(pool, p)
	}
	start := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	if seed%2 == 0 {
		start = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	}
	steps := make([]backendtest.Step, n)
	for i := range steps {
		p := pool[rng.IntN(len(pool))]
		s := backendtest.Step{Key: "big", Policies: []core.Policy{p}, Cost: 1 + rng.IntN(p.Capacity())}
		if i == 0 {
			s.Set = start.Add(time.Duration(rng.Int64N(int64(time.Hour))) / time.Microsecond * time.Microsecond)
		} else {
			s.Advance = time.Duration(rng.Int64N(int64(p.Window/time.Microsecond)/3)) * time.Microsecond
		}
		if rng.IntN(8) == 0 {
			s.Peek = true
		}
		steps[i] = s
	}
	return steps
}

// TestLargeNumbers replays bigTrace on the reference and on the Redis store
// over miniredis, a real Redis and a real Cluster: real Redis is where a
// number printed with %.14g or a float reply would be caught.
func TestLargeNumbers(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		if admitted, checks := admissions(t, bigTrace(seed, 150)); admitted == 0 || admitted == checks {
			t.Fatalf("seed %d: the reference admits %d of %d checks; the trace should mix admissions and denials", seed, admitted, checks)
		}
	}
	onEachServer(t, func(t *testing.T, c redis.UniversalClient, _ time.Duration) {
		for seed := uint64(1); seed <= 4; seed++ {
			s := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin))
			if err := backendtest.Diff(context.Background(), bigTrace(seed, 150), backendtest.NewReference(), s); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
	})
}

// admissions runs the checks of steps, a trace of checks and peeks, on the
// reference and counts those it admits.
func admissions(t *testing.T, steps []backendtest.Step) (admitted, checks int) {
	clock := core.NewManualClock(time.Time{})
	lim := core.NewLimiter(backendtest.NewReference(), core.WithClock(clock))
	for _, s := range steps {
		if !s.Set.IsZero() {
			clock.Set(s.Set)
		}
		clock.Advance(s.Advance)
		if s.Peek {
			continue
		}
		r, err := lim.Check(context.Background(), s.Key, s.Policies, s.Cost, nil)
		if err != nil {
			t.Fatal(err)
		}
		if checks++; r.Allowed {
			admitted++
		}
	}
	return admitted, checks
}

// TestSlidingWindowRounding pins a case where the order of the estimate's
// floating-point operations decides RetryAfter: with prev*(w-e)/w the first
// fit is 30626934066 µs into the window, with prev*((w-e)/w) it would be one
// microsecond earlier. The script must round exactly like core/algo.
func TestSlidingWindowRounding(t *testing.T) {
	p := core.Policy{Limit: 594255661, Window: 24 * time.Hour, Algorithm: core.SlidingWindow}
	day := time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC) // a window start
	steps := []backendtest.Step{
		{Set: day, Key: "round", Policies: []core.Policy{p}, Cost: p.Limit},
		{Set: day.Add(24 * time.Hour), Key: "round", Policies: []core.Policy{p}, Cost: 210650798},
	}
	ctx := context.Background()
	clock := core.NewManualClock(day)
	ref := core.NewLimiter(backendtest.NewReference(), core.WithClock(clock))
	_, _ = ref.AllowN(ctx, "round", p, p.Limit)
	clock.Set(day.Add(24 * time.Hour))
	if d, err := ref.AllowN(ctx, "round", p, 210650798); err != nil || d.Allowed || d.RetryAfter != 30626934066*time.Microsecond {
		t.Fatalf("reference: %v %+v; the case no longer tests rounding", err, d)
	}
	onEachServer(t, func(t *testing.T, c redis.UniversalClient, _ time.Duration) {
		s := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)))
		if err := backendtest.Diff(ctx, steps, backendtest.NewReference(), s); err != nil {
			t.Fatal(err)
		}
	})
}

// rateBased reports whether a is driven by a rate and a burst (token
// bucket, GCRA, leaky bucket; "" is GCRA).
func rateBased(a core.Algorithm) bool {
	switch a {
	case core.TokenBucket, core.GCRA, core.LeakyBucket, "":
		return true
	}
	return false
}
