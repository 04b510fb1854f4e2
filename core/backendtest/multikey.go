package backendtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// RunMultiKey pins batches of several keys on the backends newBackend
// returns: several keys, each under its own policy, decided together; a
// denial by one consumes from none; an item given twice consumes once;
// concurrent checks never consume partially; a reset forgets every item.
func RunMultiKey(t *testing.T, newBackend Factory) {
	now := time.Date(2026, 7, 1, 9, 0, 10, 0, time.UTC)
	ctx := context.Background()
	peek := func(t *testing.T, b core.Backend, key string, p core.Policy) core.Decision {
		t.Helper()
		var d [1]core.Decision
		if err := core.Peek(ctx, b, key, []core.Policy{p}, now, d[:]); err != nil {
			t.Fatal(err)
		}
		return d[0]
	}
	wide := core.MustParsePolicy("3/1m;algorithm=fixed_window;name=per-number")
	narrow := core.MustParsePolicy("1/1m;algorithm=fixed_window;name=marketing")
	t.Run("AllOrNothing", func(t *testing.T) {
		b := newBackend(t)
		p := keyPrefix(t)
		items := []core.Item{{Key: p + "to_number=1"}, {Key: p + "type=marketing;to_number=1"}}
		items[0].Policy, items[1].Policy = wide, narrow
		out := make([]core.Decision, 2)
		if err := b.Do(ctx, withCost(items, 1), now, out); err != nil || !out[0].Allowed || !out[1].Allowed {
			t.Fatalf("first: %v %s %s", err, formatDecision(out[0]), formatDecision(out[1]))
		}
		if err := b.Do(ctx, withCost(items, 1), now, out); err != nil || !out[0].Allowed || out[1].Allowed {
			t.Fatalf("second: %v %s %s", err, formatDecision(out[0]), formatDecision(out[1]))
		}
		if out[1].RetryAfter != 50*time.Second || out[0].Remaining != 2 {
			t.Fatalf("denied check: %s %s", formatDecision(out[0]), formatDecision(out[1]))
		}
		// The denial consumed nothing from the key that had room.
		if d := peek(t, b, items[0].Key, wide); d.Remaining != 2 {
			t.Fatalf("per-number after the denial: %s, want remaining 2", formatDecision(d))
		}
		// Alone it still has room for two.
		for i := range 2 {
			if err := b.Do(ctx, withCost(items[:1], 1), now, out); err != nil || !out[0].Allowed {
				t.Fatalf("alone %d: %v %s", i, err, formatDecision(out[0]))
			}
		}
		reset := []core.Item{items[0], items[1]}
		reset[0].Op, reset[1].Op = core.OpReset, core.OpReset
		if err := b.Do(ctx, reset, now, out); err != nil || out[0] != (core.Decision{}) || out[1] != (core.Decision{}) {
			t.Fatalf("reset: %v %s %s", err, formatDecision(out[0]), formatDecision(out[1]))
		}
		if d0, d1 := peek(t, b, items[0].Key, wide), peek(t, b, items[1].Key, narrow); d0.Remaining != 3 || d1.Remaining != 1 {
			t.Fatalf("after the reset: %s %s, want both full", formatDecision(d0), formatDecision(d1))
		}
	})
	t.Run("SameItemTwice", func(t *testing.T) {
		b := newBackend(t)
		it := core.Item{Key: keyPrefix(t) + "k", Policy: wide}
		out := make([]core.Decision, 2)
		if err := b.Do(ctx, withCost([]core.Item{it, it}, 1), now, out); err != nil || !out[0].Allowed || !out[1].Allowed {
			t.Fatalf("%v %+v", err, out)
		}
		if d := peek(t, b, it.Key, wide); d.Remaining != 2 {
			t.Fatalf("an item given twice consumed %d", 3-d.Remaining)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		b := newBackend(t)
		out := make([]core.Decision, 2)
		if err := b.Do(ctx, withCost(nil, 1), now, out); err == nil {
			t.Fatal("no items accepted")
		}
		if err := b.Do(ctx, withCost([]core.Item{{Key: "", Policy: wide}}, 1), now, out); err == nil {
			t.Fatal("an empty key accepted")
		}
		if err := b.Do(ctx, withCost([]core.Item{{Key: "k", Policy: wide}}, 4), now, out); err == nil {
			t.Fatal("a cost above capacity accepted")
		}
	})
	t.Run("CostPerItem", func(t *testing.T) {
		b := newBackend(t)
		p := keyPrefix(t)
		bytes := core.Item{Key: p + "bytes", Policy: core.MustParsePolicy("10/1m;algorithm=fixed_window;name=bytes"), Cost: 4}
		reqs := core.Item{Key: p + "reqs", Policy: core.MustParsePolicy("3/1m;algorithm=fixed_window;name=reqs")}
		log := core.Item{Key: p + "log", Policy: core.MustParsePolicy("10/1m;algorithm=sliding_log;name=log"), Cost: 3}
		rate := core.Item{Key: p + "rate", Policy: core.MustParsePolicy("10/1s;algorithm=gcra;name=rate"), Cost: 5}
		out := make([]core.Decision, 4)
		// Each item consumes its own units; reqs, without one, the check's.
		if err := b.Do(ctx, withCost([]core.Item{bytes, reqs, log, rate}, 1), now, out); err != nil || !out[0].Allowed || !out[1].Allowed || !out[2].Allowed || !out[3].Allowed {
			t.Fatalf("first: %v %+v", err, out)
		}
		for i, want := range []int{6, 2, 7, 5} {
			if out[i].Remaining != want {
				t.Fatalf("item %d: %s, want remaining %d", i, formatDecision(out[i]), want)
			}
		}
		// An item's own units deny the check: nothing is consumed anywhere.
		bytes.Cost = 7
		if err := b.Do(ctx, withCost([]core.Item{reqs, bytes, log}, 1), now, out); err != nil || out[1].Allowed || !out[0].Allowed || out[1].RetryAfter != 50*time.Second {
			t.Fatalf("denied: %v %s %s", err, formatDecision(out[0]), formatDecision(out[1]))
		}
		for _, it := range []core.Item{bytes, reqs, log} {
			if d, want := peek(t, b, it.Key, it.Policy), map[string]int{"bytes": 6, "reqs": 2, "log": 7}[it.Policy.Name]; d.Remaining != want {
				t.Fatalf("%s after the denial: %s, want remaining %d", it.Policy.Name, formatDecision(d), want)
			}
		}
		// Every item with its own units, the check's cost unused: the same
		// units everywhere is the plain check of that cost.
		bytes.Cost, reqs.Cost = 2, 2
		if err := b.Do(ctx, withCost([]core.Item{bytes, reqs}, 0), now, out); err != nil || !out[0].Allowed || out[0].Remaining != 4 || out[1].Remaining != 0 {
			t.Fatalf("own units only: %v %s %s", err, formatDecision(out[0]), formatDecision(out[1]))
		}
		// Refused, changing nothing: a negative cost, units above an item's
		// capacity, and one state asked for two costs.
		reqs.Cost = 0
		for name, tc := range map[string]struct {
			items []core.Item
			want  error
		}{
			"negative":       {[]core.Item{{Key: p + "bytes", Policy: bytes.Policy, Cost: -1}}, core.ErrInvalidCost},
			"above capacity": {[]core.Item{reqs, {Key: p + "bytes", Policy: bytes.Policy, Cost: 11}}, core.ErrCostExceedsCapacity},
			"two costs":      {[]core.Item{{Key: p + "bytes", Policy: bytes.Policy, Cost: 1}, {Key: p + "bytes", Policy: bytes.Policy, Cost: 2}}, core.ErrInvalidCost},
		} {
			if err := b.Do(ctx, withCost(tc.items, 1), now, out); !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", name, err, tc.want)
			}
		}
		if d := peek(t, b, bytes.Key, bytes.Policy); d.Remaining != 4 {
			t.Fatalf("bytes after refused checks: %s, want remaining 4", formatDecision(d))
		}
		// One state given twice with the same units consumes them once.
		bytes.Cost = 3
		if err := b.Do(ctx, withCost([]core.Item{bytes, bytes}, 1), now, out[:2]); err != nil || !out[0].Allowed || !out[1].Allowed {
			t.Fatalf("twice: %v %+v", err, out[:2])
		}
		if d := peek(t, b, bytes.Key, bytes.Policy); d.Remaining != 1 {
			t.Fatalf("bytes given twice with 3 units: %s, want remaining 1", formatDecision(d))
		}
	})
	t.Run("CostPerItemConcurrent", func(t *testing.T) {
		// Checks of units per item, and plain checks of another key, at
		// once: where a store sends concurrent checks together, both kinds
		// share its calls.
		b := newBackend(t)
		p := keyPrefix(t)
		a := core.Item{Key: p + "a", Policy: core.MustParsePolicy("40/1h;algorithm=gcra;name=a")}
		c := core.Item{Key: p + "c", Policy: core.MustParsePolicy("25/1h;algorithm=fixed_window;name=c")}
		d := core.Item{Key: p + "d", Policy: core.MustParsePolicy("100/1h;algorithm=token_bucket;name=d")}
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted, plain := 0, 0
		for g := range 9 {
			wg.Go(func() {
				out := make([]core.Decision, 2)
				for range 10 {
					// a consumes 2 and c 1, said two ways.
					items, cost := []core.Item{{Key: a.Key, Policy: a.Policy, Cost: 2}, c}, 1
					switch g % 3 {
					case 1:
						items, cost = []core.Item{{Key: c.Key, Policy: c.Policy, Cost: 1}, a}, 2
					case 2:
						items, cost = []core.Item{d}, 1
					}
					if err := b.Do(ctx, withCost(items, cost), now, out); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					switch {
					case g%3 == 2 && out[0].Allowed:
						plain++
					case g%3 != 2 && out[0].Allowed && out[1].Allowed:
						admitted++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		ra, rc, rd := peek(t, b, a.Key, a.Policy), peek(t, b, c.Key, c.Policy), peek(t, b, d.Key, d.Policy)
		if admitted != 20 || ra.Remaining != 0 || rc.Remaining != 5 || plain != 30 || rd.Remaining != 70 {
			t.Fatalf("admitted %d, plain %d; remaining a %d, c %d, d %d; want 20, 30; 0, 5, 70", admitted, plain, ra.Remaining, rc.Remaining, rd.Remaining)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		b := newBackend(t)
		p := keyPrefix(t)
		a := core.Item{Key: p + "a", Policy: core.MustParsePolicy("40/1h;algorithm=fixed_window;name=a")}
		c := core.Item{Key: p + "c", Policy: core.MustParsePolicy("25/1h;algorithm=fixed_window;name=c")}
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted := 0
		for g := range 8 {
			wg.Go(func() {
				out := make([]core.Decision, 2)
				for range 10 {
					items := []core.Item{a, c}
					if g%2 == 1 {
						items = []core.Item{c, a} // either order
					}
					if err := b.Do(ctx, withCost(items, 1), now, out); err != nil {
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

// withCost returns a copy of items in which every item without a Cost of
// its own consumes cost.
func withCost(items []core.Item, cost int) []core.Item {
	c := append([]core.Item(nil), items...)
	for i := range c {
		if c[i].Cost == 0 {
			c[i].Cost = cost
		}
	}
	return c
}
