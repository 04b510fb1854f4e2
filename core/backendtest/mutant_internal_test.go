package backendtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// broken wraps the reference with one deliberate bug, to show that the
// property checks catch it: a suite that passes broken backends proves
// nothing.
type broken struct {
	core.Backend
	bug    string
	latest time.Time
}

// Do runs a batch of one key through Check or Peek, where the bugs are.
func (b *broken) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	if len(items) == 0 {
		return b.Backend.Do(ctx, items, now, out)
	}
	ps := make([]core.Policy, len(items))
	for i := range items {
		ps[i] = items[i].Policy
	}
	if items[0].Op == core.OpPeek {
		return b.Peek(ctx, items[0].Key, ps, now, out)
	}
	return b.Check(ctx, items[0].Key, ps, items[0].Cost, now, out)
}

func (b *broken) Check(ctx context.Context, key string, ps []core.Policy, cost int, now time.Time, out []core.Decision) error {
	if b.bug == "merge-braces" {
		key = strings.NewReplacer("{", "", "}", "").Replace(key)
	}
	if err := core.Check(ctx, b.Backend, key, ps, cost, now, out); err != nil {
		return err
	}
	for i, p := range ps {
		d := &out[i]
		switch {
		case b.bug == "consume-on-deny" && !d.Allowed:
			var one [1]core.Decision
			_ = core.Check(ctx, b.Backend, key, ps[i:i+1], 1, now, one[:])
		case b.bug == "early-retry" && d.RetryAfter > time.Millisecond:
			d.RetryAfter -= time.Microsecond
		case b.bug == "admit-window" && !d.Allowed && len(ps) == 1 && windowAlgorithms[p.Algorithm]:
			d.Allowed, d.RetryAfter = true, 0
		}
	}
	return nil
}

func (b *broken) Peek(ctx context.Context, key string, ps []core.Policy, now time.Time, out []core.Decision) error {
	if b.bug == "merge-braces" {
		key = strings.NewReplacer("{", "", "}", "").Replace(key)
	}
	if err := core.Peek(ctx, b.Backend, key, ps, now, out); err != nil {
		return err
	}
	if b.bug == "refund-backwards" && now.Before(b.latest) {
		for i, p := range ps {
			out[i].Remaining = p.Capacity()
		}
	}
	if now.After(b.latest) {
		b.latest = now
	}
	return nil
}

func TestPropertiesCatchBrokenBackends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, bug := range []string{"consume-on-deny", "early-retry", "admit-window"} {
		caught := false
		for seed := uint64(101); seed < 101+propertySeeds && !caught; seed++ {
			b := &broken{Backend: NewReference(), bug: bug}
			caught = checkTraceProperties(b, RandomTrace(seed, propertySteps, 0, false)) != nil
		}
		if !caught {
			t.Errorf("the trace properties pass a backend with bug %q", bug)
		}
	}

	caught := false
	for seed := uint64(1); seed <= differentialSeeds && !caught; seed++ {
		steps := RandomTrace(seed, differentialSteps, 0, false)
		caught = Diff(ctx, steps, NewReference(), &broken{Backend: NewReference(), bug: "merge-braces"}) != nil
	}
	if !caught {
		t.Error("the comparison with the reference passes a backend that ignores braces in keys")
	}

	caught = false
	for seed := uint64(201); seed < 201+backwardSeeds && !caught; seed++ {
		caught = checkNoRefund(&broken{Backend: NewReference(), bug: "refund-backwards"}, randomTrace(seed, backwardSteps, traceConfig{backwards: true})) != nil
	}
	if !caught {
		t.Error("the backward-clock check passes a backend that refunds when the clock moves back")
	}
}
