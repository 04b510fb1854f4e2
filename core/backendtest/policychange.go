package backendtest

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// runPolicyChange pins core.Identity: under the same name with another
// limit or burst, the units used are kept on every algorithm and the new
// numbers apply at once; a lowered limit denies with nothing negative; a
// rename starts afresh.
func runPolicyChange(t *testing.T, newBackend Factory) {
	b := newBackend(t)
	ctx := context.Background()
	now := time.Date(2026, 5, 5, 10, 0, 30, 0, time.UTC)
	check := func(t *testing.T, key string, p core.Policy, cost int) core.Decision {
		t.Helper()
		var out [1]core.Decision
		if err := core.Check(ctx, b, key, []core.Policy{p}, cost, now, out[:]); err != nil {
			t.Fatalf("check %v: %v", p, err)
		}
		return out[0]
	}
	for _, alg := range core.Algorithms() {
		t.Run(string(alg), func(t *testing.T) {
			key := keyPrefix(t) + "k"
			old := core.Policy{Name: "api", Limit: 10, Window: time.Minute, Algorithm: alg}
			if d := check(t, key, old, 6); !d.Allowed || d.Remaining != 4 {
				t.Fatalf("6 of 10: %s", formatDecision(d))
			}
			raised := old
			raised.Limit = 20
			d := check(t, key, raised, 1)
			if !d.Allowed || d.Remaining >= 19 {
				t.Fatalf("after raising the limit to 20 the state was lost: %s", formatDecision(d))
			}
			if d.Remaining != 13 {
				// Every algorithm keeps the units used: 7 of 20.
				t.Fatalf("raised to 20 after 6 + 1 units: %s, want remaining 13", formatDecision(d))
			}
			lowered := old
			lowered.Limit = 4
			// 7 units used, more than the new limit: denied, nothing
			// negative, nothing written.
			d = check(t, key, lowered, 1)
			if d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 {
				t.Fatalf("lowered to 4 after 7 units: %s, want a denial with remaining 0", formatDecision(d))
			}
			if d = check(t, key, raised, 1); !d.Allowed || d.Remaining != 12 {
				t.Fatalf("raised to 20 again after the denial: %s, want remaining 12 (the denial wrote nothing)", formatDecision(d))
			}
			renamed := old
			renamed.Name = "api-v2"
			if d := check(t, key, renamed, 1); !d.Allowed || d.Remaining != 9 {
				t.Fatalf("a renamed policy starts afresh: %s", formatDecision(d))
			}
		})
	}
}
