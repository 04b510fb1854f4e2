package backendtest

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// isolationKeys differ from each other only in braces (which a Redis store
// may use as hash tags) and binary bytes.
var isolationKeys = []string{
	"user", "{user}", "{user", "user}", "}user{", "{u}ser", "u{s}er", "{}user",
	"user\x00", "\x00user", "user\xff", "us\x00er", "user\n", "USER",
}

func runIsolation(t *testing.T, newBackend Factory) {
	b := newBackend(t)
	ctx := context.Background()
	for _, alg := range core.Algorithms() {
		t.Run(string(alg)+"/Keys", func(t *testing.T) {
			p := core.Policy{Limit: 2, Window: time.Hour, Algorithm: alg}
			prefix := keyPrefix(t)
			clock := core.NewManualClock(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
			lim := core.NewLimiter(b, core.WithClock(clock))
			for i, k := range isolationKeys {
				key := prefix + k
				for n := range 2 {
					if d, err := lim.Allow(ctx, key, p); err != nil || !d.Allowed || d.Remaining != 1-n {
						t.Fatalf("key %q (after %d exhausted keys) check %d: %v %s", k, i, n, err, formatDecision(d))
					}
				}
				if d, err := lim.Allow(ctx, key, p); err != nil || d.Allowed {
					t.Fatalf("key %q: third check: %v %s", k, err, formatDecision(d))
				}
				clock.Advance(time.Microsecond)
			}
			// Reset one key: only it is full again.
			if err := lim.Reset(ctx, prefix+"{user}", p); err != nil {
				t.Fatal(err)
			}
			for _, k := range isolationKeys {
				d, err := lim.Peek(ctx, prefix+k, p)
				if err != nil {
					t.Fatal(err)
				}
				if full := k == "{user}"; (d.Remaining == 2) != full {
					t.Errorf("after resetting %q, key %q peeks %s", "{user}", k, formatDecision(d))
				}
			}
		})
		t.Run(string(alg)+"/Policies", func(t *testing.T) {
			key := keyPrefix(t) + "{shared}"
			clock := core.NewManualClock(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
			lim := core.NewLimiter(b, core.WithClock(clock))
			base := core.Policy{Limit: 2, Window: time.Minute, Algorithm: alg}
			others := []core.Policy{
				{Name: "other", Limit: 2, Window: time.Minute, Algorithm: alg},
				{Limit: 2, Window: 2 * time.Minute, Algorithm: alg},
				{Limit: 3, Window: time.Minute, Algorithm: alg},
			}
			for _, a := range core.Algorithms() {
				if a != alg {
					others = append(others, core.Policy{Limit: 2, Window: time.Minute, Algorithm: a})
				}
			}
			for i := range 2 {
				if d, err := lim.Allow(ctx, key, base); err != nil || !d.Allowed {
					t.Fatalf("check %d: %v %s", i, err, formatDecision(d))
				}
			}
			for _, o := range others {
				d, err := lim.Peek(ctx, key, o)
				if err != nil {
					t.Fatal(err)
				}
				if d.Remaining != o.Capacity() || !d.Allowed {
					t.Errorf("policy %s shares state with %s on one key: %s", o, base, formatDecision(d))
				}
			}
			if d, err := lim.Allow(ctx, key, base); err != nil || d.Allowed {
				t.Fatalf("third check of %s: %v %s", base, err, formatDecision(d))
			}
			// Resetting one policy leaves the other policies' state alone.
			if d, err := lim.Allow(ctx, key, others[0]); err != nil || !d.Allowed {
				t.Fatalf("check of %s: %v %s", others[0], err, formatDecision(d))
			}
			if err := lim.Reset(ctx, key, base); err != nil {
				t.Fatal(err)
			}
			if d, _ := lim.Peek(ctx, key, others[0]); d.Remaining != 1 {
				t.Errorf("resetting %s also reset %s: %s", base, others[0], formatDecision(d))
			}
			if d, _ := lim.Peek(ctx, key, base); d.Remaining != 2 {
				t.Errorf("reset of %s did not take: %s", base, formatDecision(d))
			}
		})
	}
}
