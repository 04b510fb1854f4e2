package backendtest

import (
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// checkInvariants returns what is wrong with an outcome of step s regardless
// of the exact numbers: the decisions belong to the step's policies, nothing
// is negative or above capacity, RetryAfter is set exactly when denied, only
// an admitted leaky bucket check carries a Delay, and an admitted check was
// admitted by every policy.
func checkInvariants(s Step, o stepResult) []string {
	if o.Err != nil || s.kind() == "reset" {
		return nil
	}
	var bad []string
	if len(o.Decisions) != len(s.Policies) {
		return []string{fmt.Sprintf("%d decisions for %d policies", len(o.Decisions), len(s.Policies))}
	}
	all := true
	for i, d := range o.Decisions {
		p := s.Policies[i]
		fail := func(format string, args ...any) {
			bad = append(bad, fmt.Sprintf("policy %d %s: ", i, p)+fmt.Sprintf(format, args...)+" in "+formatDecision(d))
		}
		all = all && d.Allowed
		if d.Limit != p.Limit {
			fail("Limit %d, want %d", d.Limit, p.Limit)
		}
		if d.Remaining < 0 || d.Remaining > p.Capacity() {
			fail("Remaining %d outside [0, %d]", d.Remaining, p.Capacity())
		}
		if d.ResetAfter < 0 || d.RetryAfter < 0 || d.Delay < 0 {
			fail("negative duration")
		}
		if full := fullRemaining(p); d.ResetAfter == 0 && d.Remaining != full {
			fail("ResetAfter 0 but Remaining %d is not the capacity %d", d.Remaining, full)
		}
		if d.Allowed && d.RetryAfter != 0 {
			fail("admitted with RetryAfter %v", d.RetryAfter)
		}
		if !d.Allowed && d.RetryAfter <= 0 {
			fail("denied without a RetryAfter")
		}
		if d.Delay != 0 && (s.kind() != "check" || !o.Allowed || p.Algorithm != core.LeakyBucket) {
			fail("Delay %v outside an admitted leaky bucket check", d.Delay)
		}
		if d.RetryAfter%time.Microsecond != 0 || d.ResetAfter%time.Microsecond != 0 || d.Delay%time.Microsecond != 0 {
			fail("durations are not whole microseconds")
		}
	}
	if o.Allowed != all {
		bad = append(bad, fmt.Sprintf("outcome Allowed=%v but per-policy decisions say %v", o.Allowed, all))
	}
	return bad
}

// fullRemaining is Remaining for a key with no state: the capacity, or for a
// leaky bucket with a MaxDelay the unit checks that fit within it, one
// interval apart: min(capacity, MaxDelay/interval + 1).
func fullRemaining(p core.Policy) int {
	pr, err := p.Params()
	if err != nil || pr.MaxDelay == 0 {
		return p.Capacity()
	}
	return int(min(pr.Capacity, pr.MaxDelay/pr.Interval+1))
}
