package algo

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// checkAdjust runs the properties of Adjust for one algorithm on random
// policies and histories: a refund of an admitted check at its instant
// gives back the answers of the state before it; no refund goes below an
// empty state; after a charge into debt, RetryAfter is exact.
func checkAdjust[S any](t *testing.T, algorithm core.Algorithm, decide func(p *core.Params, st S, cost, now int64) (Answer, S)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(len(algorithm))))
	for trial := range 3000 {
		limit := 1 + rng.IntN(20)
		window := time.Duration(1+rng.IntN(120)) * time.Second
		p := mustParams(t, core.Policy{Limit: limit, Window: window, Algorithm: algorithm})
		var st S
		now := unix2023 + rng.Int64N(int64(window/time.Microsecond))
		for range rng.IntN(6) {
			now += rng.Int64N(p.Interval*2 + 1)
			if o, next := decide(p, st, 1+rng.Int64N(int64(limit)), now); o.Allowed {
				st = next
			}
		}
		cost := 1 + rng.Int64N(int64(limit))
		o, after := decide(p, st, cost, now)
		if o.Allowed {
			before0, _ := decide(p, st, 0, now)
			back := Adjust(p, after, -cost, now, now)
			got0, _ := decide(p, back, 0, now)
			if got0.Remaining != before0.Remaining {
				t.Fatalf("trial %d %s: refund of %d: remaining %d, want %d as before the check", trial, algorithm, cost, got0.Remaining, before0.Remaining)
			}
		}
		empty := Adjust(p, st, -1<<62, now, now)
		if e, _ := decide(p, empty, 0, now); e.Remaining != int64(limit) || e.ResetAfter != 0 {
			t.Fatalf("trial %d %s: a refund of everything leaves %+v, want an empty state", trial, algorithm, e)
		}
		debt := Adjust(p, st, 1+rng.Int64N(3*int64(limit)), now, now)
		d, _ := decide(p, debt, 1, now)
		if d.Remaining < 0 {
			t.Fatalf("trial %d %s: negative remaining %+v", trial, algorithm, d)
		}
		if !d.Allowed {
			at := now + d.retryAfter()
			if late, _ := decide(p, debt, 1, at); !late.Allowed {
				t.Fatalf("trial %d %s: denied at RetryAfter %d: %+v", trial, algorithm, d.retryAfter(), late)
			}
			if early, _ := decide(p, debt, 1, at-1); early.Allowed {
				t.Fatalf("trial %d %s: admitted a microsecond before RetryAfter %d", trial, algorithm, d.retryAfter())
			}
		}
	}
}

func TestAdjust(t *testing.T) {
	t.Parallel()
	t.Run("gcra", func(t *testing.T) { checkAdjust(t, core.GCRA, GCRA) })
	t.Run("token_bucket", func(t *testing.T) { checkAdjust(t, core.TokenBucket, TokenBucket) })
	t.Run("leaky_bucket", func(t *testing.T) { checkAdjust(t, core.LeakyBucket, LeakyBucket) })
	t.Run("fixed_window", func(t *testing.T) { checkAdjust(t, core.FixedWindow, FixedWindow) })
	t.Run("sliding_window", func(t *testing.T) { checkAdjust(t, core.SlidingWindow, SlidingWindow) })
}

func TestSlidingLogAdjust(t *testing.T) {
	t.Parallel()
	p := mustParams(t, core.Policy{Limit: 4, Window: time.Minute, Algorithm: core.SlidingLog})
	var l Log
	CommitSlidingLog(p, &l, 2, unix2023, unix2023)
	CommitSlidingLog(p, &l, 1, unix2023+sec, unix2023+sec)
	Adjust(p, &l, -5, unix2023, unix2023+2*sec) // the first charge's entries only
	if l.Len() != 1 || l.at(0) != unix2023+sec {
		t.Fatalf("after the refund: %d entries, first %d", l.Len(), l.at(0))
	}
	Adjust(p, &l, 100, 0, unix2023+2*sec)
	if l.Len() != 4 {
		t.Fatalf("a charge keeps the newest limit entries: %d", l.Len())
	}
	o, _ := SlidingLog(p, &l, 1, unix2023+2*sec)
	if o.Allowed || o.retryAfter() != 60*sec {
		t.Fatalf("after the charge: %+v", o)
	}
}
