package backendtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// runContract calls the Backend methods directly, bypassing the Limiter's
// own validation, with every kind of bad input, and checks that each gets its
// typed error and leaves the state as it was.
func runContract(t *testing.T, newBackend Factory) {
	b := newBackend(t)
	ctx := context.Background()
	now := time.Date(2026, 5, 5, 10, 0, 0, 123456000, time.UTC)
	for _, alg := range core.Algorithms() {
		t.Run(string(alg)+"/BadInput", func(t *testing.T) {
			p := core.Policy{Limit: 5, Window: time.Minute, Algorithm: alg}
			key := keyPrefix(t) + "k"
			out := make([]core.Decision, 2)
			if err := core.Check(ctx, b, key, []core.Policy{p}, 2, now, out); err != nil || !out[0].Allowed {
				t.Fatalf("first check: %v %s", err, formatDecision(out[0]))
			}
			peek := func() core.Decision {
				t.Helper()
				var d [1]core.Decision
				if err := core.Peek(ctx, b, key, []core.Policy{p}, now, d[:]); err != nil {
					t.Fatalf("peek: %v", err)
				}
				return d[0]
			}
			want := peek()
			if want.Remaining != 3 {
				t.Fatalf("after 2 of 5: %s", formatDecision(want))
			}
			bad := []struct {
				name     string
				key      string
				policies []core.Policy
				cost     int
				kind     string
				peekKind string // the error Peek and Reset give; "" when they accept the input
			}{
				{"empty key", "", []core.Policy{p}, 1, "invalid_key", "invalid_key"},
				{"key too long", key + strings.Repeat("x", core.MaxKeyLen), []core.Policy{p}, 1, "invalid_key", "invalid_key"},
				{"no policy", key, nil, 1, "no_policy", "no_policy"},
				{"cost 0", key, []core.Policy{p}, 0, "invalid_cost", ""},
				{"cost -1", key, []core.Policy{p}, -1, "invalid_cost", ""},
				{"cost above capacity", key, []core.Policy{p}, 6, "cost_exceeds_capacity", ""},
				{"cost above the smaller capacity", key, []core.Policy{p, {Limit: 2, Window: time.Second, Algorithm: alg}}, 3, "cost_exceeds_capacity", ""},
				{"limit 0", key, []core.Policy{{Window: time.Minute, Algorithm: alg}}, 1, "invalid_policy", "invalid_policy"},
				{"negative window", key, []core.Policy{{Limit: 5, Window: -time.Second, Algorithm: alg}}, 1, "invalid_policy", "invalid_policy"},
				{"sub-microsecond window", key, []core.Policy{{Limit: 1, Window: time.Second + 1, Algorithm: alg}}, 1, "invalid_policy", "invalid_policy"},
				{"negative burst", key, []core.Policy{{Limit: 5, Window: time.Minute, Burst: -1, Algorithm: alg}}, 1, "invalid_policy", "invalid_policy"},
				{"unknown algorithm", key, []core.Policy{{Limit: 5, Window: time.Minute, Algorithm: "bogus"}}, 1, "unknown_algorithm", "unknown_algorithm"},
				{"one bad policy among good", key, []core.Policy{p, {Limit: 0, Window: time.Minute}}, 1, "invalid_policy", "invalid_policy"},
			}
			for _, c := range bad {
				out := make([]core.Decision, max(len(c.policies), 1))
				if got := errorKind(core.Check(ctx, b, c.key, c.policies, c.cost, now, out)); got != c.kind {
					t.Errorf("%s: Check gave %q, want %s", c.name, got, c.kind)
				}
				if len(c.policies) == 1 { // a batch of one item, the stores' fast path
					err := b.Do(ctx, []core.Item{{Key: c.key, Policy: c.policies[0], Cost: c.cost}}, now, make([]core.Decision, 1))
					if got := errorKind(err); got != c.kind {
						t.Errorf("%s: a batch of one gave %q, want %s", c.name, got, c.kind)
					}
				}
				if got := errorKind(core.Peek(ctx, b, c.key, c.policies, now, out)); got != c.peekKind {
					t.Errorf("%s: Peek gave %q, want %q", c.name, got, c.peekKind)
				}
				if c.peekKind != "" {
					if got := errorKind(core.NewLimiter(b).Reset(ctx, c.key, c.policies...)); got != c.peekKind {
						t.Errorf("%s: Reset gave %q, want %s", c.name, got, c.peekKind)
					}
				}
				if got := peek(); got != want {
					t.Fatalf("%s changed the state: %s, want %s", c.name, formatDecision(got), formatDecision(want))
				}
			}
		})
		t.Run(string(alg)+"/LongestKey", func(t *testing.T) {
			p := core.Policy{Limit: 3, Window: time.Second, Algorithm: alg}
			prefix := keyPrefix(t)
			key := prefix + strings.Repeat("\xff", core.MaxKeyLen-len(prefix))
			lim := core.NewLimiter(b, core.WithClock(core.NewManualClock(now)))
			for i := range 4 {
				d, err := lim.Allow(ctx, key, p)
				if err != nil || d.Allowed != (i < 3) {
					t.Fatalf("check %d of a %d-byte key: %v %s", i, len(key), err, formatDecision(d))
				}
			}
		})
	}
}
