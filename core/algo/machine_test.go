package algo

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// machine runs one algorithm over one key the way a store does: decide is
// pure; commit decides and stores the new state when the check is admitted
// with a positive cost. The property tests below drive every algorithm
// through it.
type machine struct {
	decide    func(cost, now int64) Answer
	commit    func(cost, now int64) Answer
	expiresAt func() int64 // valid once a check has been committed
	// stamp is the instant the state is kept at: a caller whose clock is
	// behind it is treated as if it were at that instant.
	stamp func() int64
}

func newMachine(t testing.TB, p *core.Params) *machine {
	t.Helper()
	switch p.Algorithm {
	case core.FixedWindow:
		return valueMachine(p, FixedWindow, func(s FixedWindowState) int64 { return s.Start })
	case core.SlidingWindow:
		return valueMachine(p, SlidingWindow, func(s SlidingWindowState) int64 { return s.Start })
	case core.TokenBucket:
		return valueMachine(p, TokenBucket, func(s TokenBucketState) int64 { return s.Last })
	case core.GCRA:
		return valueMachine(p, GCRA, func(s GCRAState) int64 { return s.TAT })
	case core.LeakyBucket:
		return valueMachine(p, LeakyBucket, func(s LeakyBucketState) int64 { return s.Last })
	case core.SlidingLog:
		l := new(Log)
		return &machine{
			decide: func(c, now int64) Answer { o, _ := SlidingLog(p, l, c, now); return o },
			commit: func(c, now int64) Answer {
				o, ts := SlidingLog(p, l, c, now)
				if o.Allowed && c > 0 {
					CommitSlidingLog(p, l, c, ts, now)
				}
				return o
			},
			expiresAt: func() int64 { return l.ExpiresAt(p) },
			stamp:     l.newest,
		}
	}
	t.Fatalf("no machine for %q", p.Algorithm)
	return nil
}

// valueMachine is the machine of an algorithm whose state is a value that
// step returns anew, kept at the instant stamp reads.
func valueMachine[S interface{ ExpiresAt(*core.Params) int64 }](p *core.Params, step func(*core.Params, S, int64, int64) (Answer, S), stamp func(S) int64) *machine {
	var st S
	return &machine{
		decide: func(c, now int64) Answer { o, _ := step(p, st, c, now); return o },
		commit: func(c, now int64) Answer {
			o, next := step(p, st, c, now)
			if o.Allowed && c > 0 {
				st = next
			}
			return o
		},
		expiresAt: func() int64 { return st.ExpiresAt(p) },
		stamp:     func() int64 { return stamp(st) },
	}
}

func mustParams(t testing.TB, pol core.Policy) *core.Params {
	t.Helper()
	p, err := pol.Params()
	if err != nil {
		t.Fatalf("%+v: %v", pol, err)
	}
	return &p
}

// randomPolicy returns a valid policy for a with small numbers, so that
// random schedules hit every branch.
func randomPolicy(r *rand.Rand, a core.Algorithm) core.Policy {
	limit := 1 + r.IntN(12)
	window := time.Duration(limit+r.IntN(3_000_000)) * time.Microsecond
	p := core.Policy{Limit: limit, Window: window, Algorithm: a}
	if rateBased(a) && r.IntN(2) == 0 {
		p.Burst = 1 + r.IntN(15)
	}
	return p
}

// randomGap returns a gap between checks: often zero (the same microsecond),
// often small, sometimes longer than the window.
func randomGap(r *rand.Rand, window int64) int64 {
	switch r.IntN(6) {
	case 0:
		return 0
	case 1:
		return r.Int64N(3)
	case 2:
		return r.Int64N(2*window + 1)
	default:
		return r.Int64N(window/4 + 1)
	}
}

const (
	unix2023 = 1_700_000_000_000_000 // µs
	year2100 = 4_102_444_800_000_000 // 2100-01-01T00:00:00Z in µs
)

func TestMachinesAgreeWithPolicy(t *testing.T) {
	t.Parallel()
	// A smoke test of the harness itself: a fresh key admits exactly its
	// capacity at one instant under every algorithm.
	for _, a := range core.Algorithms() {
		pol := core.Policy{Limit: 5, Window: time.Second, Algorithm: a}
		if rateBased(a) {
			pol.Burst = 7
		}
		p := mustParams(t, pol)
		m := newMachine(t, p)
		n := int64(0)
		for m.commit(1, unix2023).Allowed {
			n++
			if n > 100 {
				break
			}
		}
		if n != p.Capacity {
			t.Errorf("%s: %d admitted at one instant, want the capacity %d", a, n, p.Capacity)
		}
	}
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
