package backendtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// Trace sizes: about 12,000 backend calls in all, one to two seconds on a real
// Redis at 50-100 µs per call.
const (
	differentialSeeds = 12
	differentialSteps = 400
	propertySeeds     = 10
	propertySteps     = 250
	backwardSeeds     = 4
	backwardSteps     = 200
)

func runProperties(t *testing.T, newBackend Factory) {
	t.Run("MatchesReference", func(t *testing.T) {
		b := newBackend(t)
		for seed := uint64(1); seed <= differentialSeeds; seed++ {
			steps := prefixed(RandomTrace(seed, differentialSteps, 0, true), keyPrefix(t))
			ctx := context.Background()
			want, got := replay(ctx, NewReference(), steps), replay(ctx, b, steps)
			if err := diffOutcomes(steps, want, got); err != nil {
				t.Fatalf("seed %d: backend differs from the reference: %v", seed, err)
			}
			for i, o := range got {
				for _, msg := range checkInvariants(steps[i], o) {
					t.Errorf("seed %d step %d (%s): %s", seed, i, steps[i].describe(), msg)
				}
			}
		}
	})
	t.Run("ExactLimitsDenialsRetryAfter", func(t *testing.T) {
		b := newBackend(t)
		for seed := uint64(101); seed < 101+propertySeeds; seed++ {
			steps := prefixed(RandomTrace(seed, propertySteps, 0, false), keyPrefix(t))
			if err := checkTraceProperties(b, steps); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
	})
	t.Run("BackwardClockNoRefund", func(t *testing.T) {
		b := newBackend(t)
		for seed := uint64(201); seed < 201+backwardSeeds; seed++ {
			steps := prefixed(randomTrace(seed, backwardSteps, traceConfig{backwards: true}), keyPrefix(t))
			if err := checkNoRefund(b, steps); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
	})
}

// prefixed returns a copy of steps with prefix prepended to every key.
func prefixed(steps []Step, prefix string) []Step {
	out := make([]Step, len(steps))
	for i, s := range steps {
		s.Key = prefix + s.Key
		out[i] = s
	}
	return out
}

// checkTraceProperties walks a forward trace through a Limiter over b and
// checks, at every check, the invariants, that a denial changed nothing,
// that the same check is still denied 1 ms before RetryAfter and admitted
// exactly at it, and the ledger.
func checkTraceProperties(b core.Backend, steps []Step) error {
	ctx := context.Background()
	clock := core.NewManualClock(time.Time{})
	lim := core.NewLimiter(b, core.WithClock(clock))
	led := newLedger()
	for i, s := range steps {
		where := func(format string, args ...any) error {
			return fmt.Errorf("step %d (%s) at %s: %s", i, s.describe(), clock.Now().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
		}
		if !s.Set.IsZero() {
			clock.Set(s.Set)
		}
		clock.Advance(s.Advance)
		s.Set, s.Advance = time.Time{}, 0
		o := perform(ctx, lim, clock, s, i%2 == 1)
		if o.Err != nil {
			return where("unexpected error %v", o.Err)
		}
		if bad := checkInvariants(s, o); len(bad) > 0 {
			return where("%s", bad[0])
		}
		switch {
		case s.kind() == "reset":
			led.reset(s)
			continue
		case s.kind() != "check":
			continue
		case o.Allowed:
			if err := led.admit(s, clock.Now()); err != nil {
				return where("%v", err)
			}
			continue
		}
		if err := deniedChangedNothing(ctx, lim, clock, s, o); err != nil {
			return where("%v", err)
		}
		retry := core.Result{Allowed: o.Allowed, Decisions: o.Decisions, Binding: binding(o.Decisions)}.Decision().RetryAfter
		if retry < time.Millisecond {
			continue
		}
		clock.Advance(retry - time.Millisecond)
		early := perform(ctx, lim, clock, s, false)
		if early.Err != nil || early.Allowed {
			return where("RetryAfter %v: the same check 1 ms earlier was admitted (err %v)", retry, early.Err)
		}
		clock.Advance(time.Millisecond)
		on := perform(ctx, lim, clock, s, true)
		if on.Err != nil || !on.Allowed {
			return where("RetryAfter %v: the same check at that moment was denied (err %v): %s", retry, on.Err, formatDecisions(on.Decisions))
		}
		if err := led.admit(s, clock.Now()); err != nil {
			return where("%v", err)
		}
	}
	return nil
}

// deniedChangedNothing peeks after a denied check, which must report the
// same Remaining and ResetAfter (for one unit, the same decisions).
func deniedChangedNothing(ctx context.Context, lim *core.Limiter, clock *core.ManualClock, s Step, denied stepResult) error {
	peek := s
	peek.Peek, peek.Reset = true, false
	after := perform(ctx, lim, clock, peek, false)
	if after.Err != nil {
		return fmt.Errorf("peek after a denied check: %v", after.Err)
	}
	for j, d := range denied.Decisions {
		a := after.Decisions[j]
		if d.Remaining != a.Remaining || d.ResetAfter != a.ResetAfter || (s.Cost == 1 && d != a) {
			return fmt.Errorf("policy %d: a denied check reported %s, a peek right after it %s: the denial changed the state", j, formatDecision(d), formatDecision(a))
		}
	}
	return nil
}

// binding is the index of the denying decision with the longest RetryAfter.
func binding(ds []core.Decision) int {
	b := 0
	for i, d := range ds {
		if !d.Allowed && (ds[b].Allowed || d.RetryAfter > ds[b].RetryAfter) {
			b = i
		}
	}
	return b
}

func formatDecisions(ds []core.Decision) string {
	s := ""
	for _, d := range ds {
		s += formatDecision(d)
	}
	return s
}

// checkNoRefund walks a trace whose clock also moves backwards: after a
// move back no policy reports more units remaining than before it.
func checkNoRefund(b core.Backend, steps []Step) error {
	ctx := context.Background()
	clock := core.NewManualClock(time.Time{})
	lim := core.NewLimiter(b, core.WithClock(clock))
	for i, s := range steps {
		peek := s
		peek.Peek, peek.Reset, peek.Set, peek.Advance = true, false, time.Time{}, 0
		var ahead stepResult
		if s.Advance < 0 {
			ahead = perform(ctx, lim, clock, peek, false)
		}
		o := perform(ctx, lim, clock, s, i%2 == 1)
		where := fmt.Sprintf("step %d (%s) at %s", i, s.describe(), o.Now.Format(time.RFC3339Nano))
		if o.Err != nil {
			return fmt.Errorf("%s: unexpected error %v", where, o.Err)
		}
		if bad := checkInvariants(s, o); len(bad) > 0 {
			return fmt.Errorf("%s: %s", where, bad[0])
		}
		if s.Advance >= 0 {
			continue
		}
		if ahead.Err != nil {
			return fmt.Errorf("%s: peek: %v", where, ahead.Err)
		}
		back := o
		if s.kind() != "peek" {
			// A peek now, before this step's effect, is not observable any
			// more: peek again only when the step consumed nothing.
			if s.kind() != "check" || o.Allowed {
				continue
			}
			back = perform(ctx, lim, clock, peek, false)
		}
		for j := range back.Decisions {
			if back.Decisions[j].Remaining > ahead.Decisions[j].Remaining {
				return fmt.Errorf("%s: the clock moved back %v and policy %d was refunded: %d remaining, %d before", where, -s.Advance, j, back.Decisions[j].Remaining, ahead.Decisions[j].Remaining)
			}
		}
	}
	return nil
}
