package algo

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
)

// retryAfter is how long until the same check succeeds: Wait when denied,
// zero when admitted.
func (o Answer) retryAfter() int64 {
	if o.Allowed {
		return 0
	}
	return o.Wait
}

// delay is how long to hold an admitted check: Wait when admitted, zero
// when denied.
func (o Answer) delay() int64 {
	if o.Allowed {
		return o.Wait
	}
	return 0
}

// step is one check of a schedule.
type step struct {
	cost, now int64
}

// schedule builds a random sequence of checks starting at base, with
// non-decreasing times, for policy p.
func schedule(r *rand.Rand, p *core.Params, base int64, n int) []step {
	out := make([]step, n)
	now := base
	for i := range out {
		now += randomGap(r, p.Window)
		out[i] = step{cost: 1 + r.Int64N(p.Capacity), now: now}
	}
	return out
}

// replay runs committed steps on a fresh machine.
func replay(t *testing.T, p *core.Params, steps []step) *machine {
	m := newMachine(t, p)
	for _, s := range steps {
		m.commit(s.cost, s.now)
	}
	return m
}

const rounds = 300

// checkOutcome holds the invariants every outcome keeps.
func checkOutcome(t *testing.T, what string, p *core.Params, cost int64, o Answer) {
	t.Helper()
	switch {
	case o.Remaining < 0 || o.Remaining > p.Capacity:
		t.Fatalf("%s: Remaining %d outside [0, %d]", what, o.Remaining, p.Capacity)
	// RetryAfter and Delay read Wait by Allowed, so "admitted with a
	// RetryAfter" and "denied with a Delay" cannot happen; what Wait holds
	// must still make sense for each.
	case !o.Allowed && o.Wait <= 0:
		t.Fatalf("%s: denied with RetryAfter %d", what, o.Wait)
	case o.Allowed && o.Wait < 0 || o.ResetAfter < 0:
		t.Fatalf("%s: negative Delay %d or ResetAfter %d", what, o.Wait, o.ResetAfter)
	case o.Allowed && cost > 0 && o.ResetAfter == 0:
		t.Fatalf("%s: admitted cost %d with a zero ResetAfter", what, cost)
	case o.Allowed && p.Algorithm != core.LeakyBucket && o.Wait != 0:
		t.Fatalf("%s: Delay %d from an algorithm that does not shape", what, o.Wait)
	}
}

// A denied check's RetryAfter is exact: at now+RetryAfter the same check on
// the same state is admitted, and one microsecond earlier it is not. This
// also holds for callers whose clock is behind the stored state.
func TestRetryAfterIsExact(t *testing.T) {
	t.Parallel()
	for _, a := range core.Algorithms() {
		t.Run(string(a), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(a))))
			denied := 0
			for round := range rounds {
				p := mustParams(t, randomPolicy(r, a))
				m := newMachine(t, p)
				for i, s := range schedule(r, p, unix2023, 40) {
					now := s.now
					if r.IntN(5) == 0 { // a lagging caller
						now -= r.Int64N(p.Window + 1)
					}
					what := fmt.Sprintf("round %d step %d %+v cost %d at %d", round, i, *p, s.cost, now)
					o := m.decide(s.cost, now)
					checkOutcome(t, what, p, s.cost, o)
					if !o.Allowed {
						denied++
						if !m.decide(s.cost, now+o.retryAfter()).Allowed {
							t.Fatalf("%s: denied with RetryAfter %d, still denied then", what, o.retryAfter())
						}
						if m.decide(s.cost, now+o.retryAfter()-1).Allowed {
							t.Fatalf("%s: RetryAfter %d is not minimal: admitted 1µs earlier", what, o.retryAfter())
						}
					}
					if c := m.commit(s.cost, now); c != o {
						t.Fatalf("%s: commit decided %+v, decide %+v", what, c, o)
					}
				}
			}
			if denied < rounds {
				t.Fatalf("only %d denials in %d rounds: the schedules do not exercise denial", denied, rounds)
			}
		})
	}
}

// After an admitted check the state may be dropped at now+ResetAfter: that is
// its ExpiresAt, and from then on an absent state decides exactly as the
// stored one (the TTL rule every store relies on).
func TestExpiresAtRule(t *testing.T) {
	t.Parallel()
	for _, a := range core.Algorithms() {
		t.Run(string(a), func(t *testing.T) {
			r := rand.New(rand.NewPCG(2, uint64(len(a))))
			for round := range rounds {
				p := mustParams(t, randomPolicy(r, a))
				m := newMachine(t, p)
				for i, s := range schedule(r, p, unix2023, 30) {
					o := m.commit(s.cost, s.now)
					if !o.Allowed {
						continue
					}
					what := fmt.Sprintf("round %d step %d %+v cost %d at %d", round, i, *p, s.cost, s.now)
					exp := s.now + o.ResetAfter
					if got := m.expiresAt(); got != exp {
						t.Fatalf("%s: ExpiresAt %d, want now+ResetAfter = %d", what, got, exp)
					}
					fresh := newMachine(t, p)
					for k := range 4 {
						at := exp
						if k > 0 {
							at += randomGap(r, p.Window)
						}
						cost := 1 + r.Int64N(p.Capacity)
						if got, want := m.decide(cost, at), fresh.decide(cost, at); got != want {
							t.Fatalf("%s: at %d (expiry %d) cost %d the stored state decides %+v, an absent one %+v", what, at, exp, cost, got, want)
						}
					}
					if exp > s.now && a != core.SlidingLog {
						// One microsecond before expiry the state still
						// matters for some cost (the log may have dropped
						// older entries and is covered above).
						if full := fresh.decide(p.Capacity, exp-1); full.Allowed && m.decide(p.Capacity, exp-1) == full {
							t.Fatalf("%s: state is already equivalent to absent at %d, before ExpiresAt %d", what, exp-1, exp)
						}
					}
				}
			}
		})
	}
}

// Decisions do not depend on where on the time line they happen: the same
// schedule shifted by a whole number of windows, to before 1970 or to the
// year 2100, decides identically. An empty state is empty at any instant.
func TestTranslationInvariance(t *testing.T) {
	t.Parallel()
	for _, a := range core.Algorithms() {
		t.Run(string(a), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(len(a))))
			for round := range rounds {
				p := mustParams(t, randomPolicy(r, a))
				base := windowStart(unix2023, p.Window)
				steps := schedule(r, p, base, 40)
				targets := []int64{windowStart(year2100, p.Window), windowStart(-unix2023, p.Window), 0, -p.Window}
				if a == core.GCRA {
					// GCRA stores one number and reads zero as "empty", so a
					// theoretical arrival time landing exactly on the Unix
					// epoch is forgotten; schedules straddling 1970 are the
					// only ones that can hit it.
					targets = targets[:3]
				}
				for _, to := range targets {
					ref, moved := newMachine(t, p), newMachine(t, p)
					for i, s := range steps {
						shifted := s.now - base + to
						want := ref.commit(s.cost, s.now)
						got := moved.commit(s.cost, shifted)
						if got != want {
							t.Fatalf("round %d step %d %+v: cost %d at %d decides %+v, shifted to %d %+v", round, i, *p, s.cost, s.now, want, shifted, got)
						}
					}
				}
			}
		})
	}
}

// A caller whose clock is behind the instant the state is kept at gets no
// refund: it decides no more permissively than a caller at that instant, and
// an admitted check leaves exactly the state a check at that instant leaves.
func TestLaggingClockGetsNoRefund(t *testing.T) {
	t.Parallel()
	for _, a := range core.Algorithms() {
		t.Run(string(a), func(t *testing.T) {
			r := rand.New(rand.NewPCG(4, uint64(len(a))))
			lagged := 0
			for round := range rounds {
				p := mustParams(t, randomPolicy(r, a))
				steps := schedule(r, p, unix2023, 25)
				var done []step
				for i, s := range steps {
					m := replay(t, p, done)
					done = append(done, s)
					if i == 0 {
						continue
					}
					stamp := m.stamp()
					lag := stamp - 1 - r.Int64N(2*p.Window)
					cost := 1 + r.Int64N(p.Capacity)
					what := fmt.Sprintf("round %d step %d %+v: cost %d at %d behind %d", round, i, *p, cost, lag, stamp)
					behind, at := replay(t, p, done[:i]), replay(t, p, done[:i])
					ob, oa := behind.commit(cost, lag), at.commit(cost, stamp)
					if ob.Allowed && !oa.Allowed {
						t.Fatalf("%s: admitted behind, denied at the stored instant", what)
					}
					if !ob.Allowed {
						continue
					}
					lagged++
					for range 4 {
						later := stamp + randomGap(r, p.Window)
						c := 1 + r.Int64N(p.Capacity)
						if gb, ga := behind.decide(c, later), at.decide(c, later); gb != ga {
							t.Fatalf("%s: afterwards cost %d at %d decides %+v, after a check at the stored instant %+v", what, c, later, gb, ga)
						}
					}
				}
			}
			if lagged < rounds {
				t.Fatalf("only %d admitted lagging checks", lagged)
			}
		})
	}
}
