package backendtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// Step is one operation of a trace: Diff sets the clock to Set when it is
// not zero, moves it by Advance (back when negative), then checks Key under
// Policies, or peeks or resets.
type Step struct {
	Set      time.Time     // absolute clock reading to jump to first; zero means none
	Advance  time.Duration // clock movement before the operation
	Key      string
	Policies []core.Policy // one or more, distinct; a multi-policy check is all-or-nothing
	Cost     int           // units a check consumes; ignored by peek and reset
	Peek     bool          // report the state without consuming anything
	Reset    bool          // forget the key's state under Policies

	adjust core.Op       // core.OpRefund or core.OpCharge, from vector files
	at     time.Duration // a refund's charge instant, from now
}

// describe describes the step for failure messages, with the key quoted.
func (s Step) describe() string {
	var b strings.Builder
	if !s.Set.IsZero() {
		fmt.Fprintf(&b, "set %s, ", s.Set.Format(time.RFC3339Nano))
	}
	fmt.Fprintf(&b, "advance %v, %v key %q cost %d policies [", s.Advance, s.kind(), abbreviate(s.Key), s.Cost)
	for i, p := range s.Policies {
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteString(p.String())
	}
	b.WriteString("]")
	return b.String()
}

// kind names what the step does.
func (s Step) kind() string {
	switch {
	case s.adjust != 0:
		return "adjust"
	case s.Reset:
		return "reset"
	case s.Peek:
		return "peek"
	}
	return "check"
}

func abbreviate(key string) string {
	if len(key) > 48 {
		return fmt.Sprintf("%s...(%d bytes)", key[:32], len(key))
	}
	return key
}

// stepResult is what one Step produced: the clock reading it ran at, the
// decisions (one per policy; none for a reset or an error), whether the
// check as a whole was admitted, and the error, if any.
type stepResult struct {
	Now       time.Time
	Allowed   bool
	Decisions []core.Decision
	Err       error
}

// perform runs one step through a Limiter as users do: a single-policy
// check through AllowN, or Limiter.Check when viaCheck is set or the policy
// is a concurrency limit; several policies through Limiter.Check; a peek or
// a reset likewise.
func perform(ctx context.Context, lim *core.Limiter, clock *core.ManualClock, s Step, viaCheck bool) stepResult {
	if !s.Set.IsZero() {
		clock.Set(s.Set)
	}
	if s.Advance != 0 {
		clock.Advance(s.Advance)
	}
	o := stepResult{Now: clock.Now()}
	one := func(d core.Decision, err error) (core.Result, error) {
		return core.Result{Allowed: d.Allowed, Decisions: []core.Decision{d}}, err
	}
	items := func(op core.Op, cost int, at time.Time) []core.Item {
		items := make([]core.Item, len(s.Policies))
		for i, p := range s.Policies {
			items[i] = core.Item{Key: s.Key, Policy: p, Cost: cost, Op: op, At: at}
		}
		return items
	}
	var r core.Result
	var err error
	switch {
	case s.adjust != 0:
		r, err = lim.Do(ctx, items(s.adjust, s.Cost, o.Now.Add(s.at)), nil)
	case s.Reset:
		err = lim.Reset(ctx, s.Key, s.Policies...)
	case s.Peek && len(s.Policies) == 1:
		r, err = one(lim.Peek(ctx, s.Key, s.Policies[0]))
	case s.Peek:
		r, err = lim.Do(ctx, items(core.OpPeek, 0, time.Time{}), nil)
	case len(s.Policies) == 1 && !viaCheck && s.Policies[0].Algorithm != core.Concurrency: // AllowN refuses slots
		r, err = one(lim.AllowN(ctx, s.Key, s.Policies[0], s.Cost))
	default:
		r, err = lim.Check(ctx, s.Key, s.Policies, s.Cost, nil)
	}
	if err != nil {
		o.Err = err
		return o
	}
	o.Allowed, o.Decisions = r.Allowed, r.Decisions
	return o
}

// Diff replays steps on each backend, through a core.Limiter and a
// core.ManualClock of its own from the zero time, and returns nil when every
// backend's outcomes equal the first's: the same clock readings, admissions
// and decisions (wherever they came from: Decision.Source aside), and errors
// of the same kind. Otherwise the error names the backend, the first
// differing step and both outcomes. Single-policy checks alternate between
// Limiter.AllowN and Limiter.Check.
func Diff(ctx context.Context, steps []Step, backends ...core.Backend) error {
	var want []stepResult
	for i, b := range backends {
		got := replay(ctx, b, steps)
		if i == 0 {
			want = got
		} else if err := diffOutcomes(steps, want, got); err != nil {
			return fmt.Errorf("backend %d differs from backend 0: %w", i, err)
		}
	}
	return nil
}

// replay runs steps against b in order, from a new clock, and returns one
// stepResult per step.
func replay(ctx context.Context, b core.Backend, steps []Step) []stepResult {
	clock := core.NewManualClock(time.Time{})
	lim := core.NewLimiter(b, core.WithClock(clock))
	out := make([]stepResult, len(steps))
	for i, s := range steps {
		out[i] = perform(ctx, lim, clock, s, i%2 == 1)
	}
	return out
}

// errorKind names the sentinel error of this module that err matches:
// "invalid_key", "no_policy", "unknown_algorithm", "invalid_policy",
// "invalid_cost", "cost_exceeds_capacity"; "" for nil and "other" for
// anything else. Vector files use these names.
func errorKind(err error) string {
	if err == nil {
		return ""
	}
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "other"
}

var errorKinds = []struct {
	err  error
	name string
}{
	{core.ErrInvalidKey, "invalid_key"}, {core.ErrNoPolicy, "no_policy"}, {core.ErrUnknownAlgorithm, "unknown_algorithm"},
	{core.ErrInvalidPolicy, "invalid_policy"}, {core.ErrInvalidCost, "invalid_cost"}, {core.ErrCostExceedsCapacity, "cost_exceeds_capacity"},
}

// diffOutcomes compares two replays of the same trace (see Diff).
func diffOutcomes(steps []Step, want, got []stepResult) error {
	if len(want) != len(got) {
		return fmt.Errorf("want %d outcomes, got %d", len(want), len(got))
	}
	for i := range want {
		if d := diffOutcome(want[i], got[i]); d != "" {
			s := "?"
			if i < len(steps) {
				s = steps[i].describe()
			}
			return fmt.Errorf("step %d (%s) at %s: %s", i, s, want[i].Now.Format(time.RFC3339Nano), d)
		}
	}
	return nil
}

func diffOutcome(w, g stepResult) string {
	if !w.Now.Equal(g.Now) {
		return fmt.Sprintf("clock %s, want %s", g.Now.Format(time.RFC3339Nano), w.Now.Format(time.RFC3339Nano))
	}
	if errorKind(w.Err) != errorKind(g.Err) {
		return fmt.Sprintf("error %v, want %v", g.Err, w.Err)
	}
	if w.Allowed != g.Allowed {
		return fmt.Sprintf("allowed %v, want %v", g.Allowed, w.Allowed)
	}
	if len(w.Decisions) != len(g.Decisions) {
		return fmt.Sprintf("%d decisions, want %d", len(g.Decisions), len(w.Decisions))
	}
	for j := range w.Decisions {
		// Where a decision came from (Decision.Source: the primary store or
		// a wrapper's deny cache) is not part of it.
		wd, gd := w.Decisions[j], g.Decisions[j]
		wd.Source, gd.Source = core.SourcePrimary, core.SourcePrimary
		if wd != gd {
			return fmt.Sprintf("policy %d: got %s, want %s", j, formatDecision(g.Decisions[j]), formatDecision(w.Decisions[j]))
		}
	}
	return ""
}

// formatDecision renders a decision compactly for failure messages.
func formatDecision(d core.Decision) string {
	return fmt.Sprintf("{allowed=%v limit=%d remaining=%d retry_after=%v reset_after=%v delay=%v}",
		d.Allowed, d.Limit, d.Remaining, d.RetryAfter, d.ResetAfter, d.Delay)
}
