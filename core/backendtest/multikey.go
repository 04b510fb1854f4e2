package backendtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// RunMultiKey pins core.MultiKeyChecker on the backends newBackend returns,
// which must implement it: several keys, each under its own policy,
// decided together; a denial by one consumes from none; an item given twice
// consumes once; concurrent checks never consume partially.
func RunMultiKey(t *testing.T, newBackend Factory) {
	now := time.Date(2026, 7, 1, 9, 0, 10, 0, time.UTC)
	ctx := context.Background()
	get := func(t *testing.T) (core.Backend, core.MultiKeyChecker) {
		b := newBackend(t)
		mk, ok := b.(core.MultiKeyChecker)
		if !ok {
			t.Fatalf("%T does not implement core.MultiKeyChecker", b)
		}
		return b, mk
	}
	peek := func(t *testing.T, b core.Backend, key string, p core.Policy) core.Decision {
		t.Helper()
		var d [1]core.Decision
		if err := b.Peek(ctx, key, []core.Policy{p}, now, d[:]); err != nil {
			t.Fatal(err)
		}
		return d[0]
	}
	wide := core.MustParsePolicy("3/1m;algorithm=fixed_window;name=per-number")
	narrow := core.MustParsePolicy("1/1m;algorithm=fixed_window;name=marketing")
	t.Run("AllOrNothing", func(t *testing.T) {
		b, mk := get(t)
		p := keyPrefix(t)
		items := []core.Keyed{{Key: p + "to_number=1"}, {Key: p + "type=marketing;to_number=1"}}
		items[0].Policy, items[1].Policy = wide, narrow
		out := make([]core.Decision, 2)
		if err := mk.CheckMany(ctx, items, 1, now, out); err != nil || !out[0].Allowed || !out[1].Allowed {
			t.Fatalf("first: %v %s %s", err, FormatDecision(out[0]), FormatDecision(out[1]))
		}
		if err := mk.CheckMany(ctx, items, 1, now, out); err != nil || !out[0].Allowed || out[1].Allowed {
			t.Fatalf("second: %v %s %s", err, FormatDecision(out[0]), FormatDecision(out[1]))
		}
		if out[1].RetryAfter != 50*time.Second || out[0].Remaining != 2 {
			t.Fatalf("denied check: %s %s", FormatDecision(out[0]), FormatDecision(out[1]))
		}
		// The denial consumed nothing from the key that had room.
		if d := peek(t, b, items[0].Key, wide); d.Remaining != 2 {
			t.Fatalf("per-number after the denial: %s, want remaining 2", FormatDecision(d))
		}
		// Alone it still has room for two.
		for i := range 2 {
			if err := mk.CheckMany(ctx, items[:1], 1, now, out); err != nil || !out[0].Allowed {
				t.Fatalf("alone %d: %v %s", i, err, FormatDecision(out[0]))
			}
		}
	})
	t.Run("SameItemTwice", func(t *testing.T) {
		b, mk := get(t)
		it := core.Keyed{Key: keyPrefix(t) + "k", Policy: wide}
		out := make([]core.Decision, 2)
		if err := mk.CheckMany(ctx, []core.Keyed{it, it}, 1, now, out); err != nil || !out[0].Allowed || !out[1].Allowed {
			t.Fatalf("%v %+v", err, out)
		}
		if d := peek(t, b, it.Key, wide); d.Remaining != 2 {
			t.Fatalf("an item given twice consumed %d", 3-d.Remaining)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		_, mk := get(t)
		out := make([]core.Decision, 2)
		if err := mk.CheckMany(ctx, nil, 1, now, out); err == nil {
			t.Fatal("no items accepted")
		}
		if err := mk.CheckMany(ctx, []core.Keyed{{Key: "", Policy: wide}}, 1, now, out); err == nil {
			t.Fatal("an empty key accepted")
		}
		if err := mk.CheckMany(ctx, []core.Keyed{{Key: "k", Policy: wide}}, 4, now, out); err == nil {
			t.Fatal("a cost above capacity accepted")
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		b, mk := get(t)
		p := keyPrefix(t)
		a := core.Keyed{Key: p + "a", Policy: core.MustParsePolicy("40/1h;algorithm=fixed_window;name=a")}
		c := core.Keyed{Key: p + "c", Policy: core.MustParsePolicy("25/1h;algorithm=fixed_window;name=c")}
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted := 0
		for g := range 8 {
			wg.Go(func() {
				out := make([]core.Decision, 2)
				for range 10 {
					items := []core.Keyed{a, c}
					if g%2 == 1 {
						items = []core.Keyed{c, a} // either order
					}
					if err := mk.CheckMany(ctx, items, 1, now, out); err != nil {
						t.Error(err)
						return
					}
					if out[0].Allowed && out[1].Allowed {
						mu.Lock()
						admitted++
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		ra, rc := peek(t, b, a.Key, a.Policy), peek(t, b, c.Key, c.Policy)
		if admitted != 25 || ra.Remaining != 15 || rc.Remaining != 0 {
			t.Fatalf("admitted %d; a remaining %d, c remaining %d; want 25, 15, 0", admitted, ra.Remaining, rc.Remaining)
		}
	})
}
