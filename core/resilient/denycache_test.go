package resilient_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

// recorder is a primary that records every check it answers.
type recorder struct {
	inner core.Backend
	mu    sync.Mutex
	log   []recorded
}

type recorded struct {
	now time.Time
	ds  []core.Decision
}

func newRecorder(t testing.TB) *recorder { return &recorder{inner: newMem(t)} }

func (r *recorder) add(now time.Time, ds []core.Decision) {
	r.mu.Lock()
	r.log = append(r.log, recorded{now, append([]core.Decision(nil), ds...)})
	r.mu.Unlock()
}

func (r *recorder) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.log)
}

func (r *recorder) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	err := r.inner.Do(ctx, items, now, out)
	if err == nil && items[0].Op == core.OpConsume {
		r.add(now, out[:len(items)])
	}
	return err
}

// TestDenyCacheHammer: one client hammers one key at 10,000 requests per
// second (the clock advances 100 µs per request). With the deny cache the
// decisions are exactly those of the primary alone, and the primary sees at
// most one call per RetryAfter period while the key is denied.
func TestDenyCacheHammer(t *testing.T) {
	t.Parallel()
	for _, alg := range core.Algorithms() {
		t.Run(string(alg), func(t *testing.T) {
			p := core.Policy{Name: "hammer", Limit: 10, Window: time.Second, Algorithm: alg}
			rec := newRecorder(t)
			clk := core.NewManualClock(t0)
			b := must.Do(resilient.New(rec, resilient.WithDenyCache(0), resilient.WithClock(clk)))
			lim := core.NewLimiter(b, core.WithClock(clk))
			refClk := core.NewManualClock(t0)
			ref := core.NewLimiter(newMem(t), core.WithClock(refClk))
			ctx := context.Background()
			const requests = 30_000 // three seconds
			admitted := 0
			for i := range requests {
				got, err := lim.Allow(ctx, "abuser", p)
				if err != nil {
					t.Fatal(err)
				}
				want, err := ref.Allow(ctx, "abuser", p)
				if err != nil {
					t.Fatal(err)
				}
				if got.Allowed != want.Allowed || got.RetryAfter != want.RetryAfter || got.Remaining > want.Remaining || got.Delay != want.Delay {
					t.Fatalf("request %d: got %+v, primary alone %+v", i, got, want)
				}
				if got.Allowed {
					admitted++
				}
				clk.Advance(100 * time.Microsecond)
				refClk.Advance(100 * time.Microsecond)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			denials := 0
			for i, c := range rec.log[:len(rec.log)-1] {
				if d := c.ds[0]; !d.Allowed {
					denials++
					if next := rec.log[i+1].now; next.Sub(c.now) < d.RetryAfter {
						t.Fatalf("primary asked again %v after a denial with RetryAfter %v", next.Sub(c.now), d.RetryAfter)
					}
				}
			}
			if s := b.Stats(); s.DenyCacheHits+uint64(len(rec.log)) != requests {
				t.Fatalf("%d cache hits + %d primary calls != %d requests", s.DenyCacheHits, len(rec.log), requests)
			}
			t.Logf("%s: %d requests, %d admitted, %d primary calls (%d denials)", alg, requests, admitted, len(rec.log), denials)
		})
	}
}

// TestDenyCacheCost: a denial answers the same or a larger cost, never a
// smaller one.
func TestDenyCacheCost(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 10, Window: time.Minute, Algorithm: core.FixedWindow}
	rec := newRecorder(t)
	b := must.Do(resilient.New(rec, resilient.WithDenyCache(16)))
	ctx := context.Background()
	check := func(cost int) core.Decision {
		t.Helper()
		d, err := backendtest.CheckOne(ctx, b, "k", p, cost, t0)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if !check(8).Allowed {
		t.Fatal("cost 8 denied on a fresh key")
	}
	if check(5).Allowed {
		t.Fatal("cost 5 admitted with 2 left")
	}
	calls := rec.calls()
	for _, cost := range []int{5, 7, 10} {
		if d := check(cost); d.Allowed || d.Remaining != 2 {
			t.Fatalf("cost %d: %+v", cost, d)
		}
	}
	if rec.calls() != calls {
		t.Fatalf("denials of the same or a larger cost reached the primary")
	}
	if !check(2).Allowed {
		t.Fatal("cost 2 with 2 left: the cache denied a smaller cost")
	}
	if rec.calls() != calls+1 {
		t.Fatal("a smaller cost did not reach the primary")
	}
}

// TestDenyCacheExactRetryAfter: under an algorithm that refills, a denial
// of one cost says nothing exact about another (a larger cost waits longer,
// and Remaining grows before a denied larger cost fits), so those checks
// reach the primary and get its exact answer: the case the conformance
// suite caught, RetryAfter 11h44m from the cache where 23h44m was right.
func TestDenyCacheExactRetryAfter(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 2, Window: 24 * time.Hour, Algorithm: core.GCRA}
	rec := newRecorder(t)
	b := must.Do(resilient.New(rec, resilient.WithDenyCache(16)))
	plain := newMem(t)
	ctx := context.Background()
	both := func(cost int, at time.Time) core.Decision {
		t.Helper()
		got, err := backendtest.CheckOne(ctx, b, "k", p, cost, at)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := backendtest.CheckOne(ctx, plain, "k", p, cost, at)
		got.Source = want.Source
		if got != want {
			t.Fatalf("cost %d at %v: cache %+v, store %+v", cost, at, got, want)
		}
		return got
	}
	both(2, t0) // both units used
	if d := both(1, t0.Add(16*time.Minute)); d.Allowed {
		t.Fatal("admitted with no unit left")
	}
	calls := rec.calls()
	if d := both(2, t0.Add(16*time.Minute)); d.Allowed || d.RetryAfter != 23*time.Hour+44*time.Minute {
		t.Fatalf("cost 2: %+v", d)
	}
	if rec.calls() != calls+1 {
		t.Fatal("a larger cost under GCRA was answered from a cost-1 denial")
	}
	calls = rec.calls()
	both(2, t0.Add(17*time.Minute)) // not cached either: cost 2 under GCRA
	if rec.calls() != calls+1 {
		t.Fatal("a cost-2 GCRA denial was cached")
	}
	calls = rec.calls()
	both(1, t0.Add(17*time.Minute)) // the cost-1 denial still answers
	if rec.calls() != calls {
		t.Fatal("a cost-1 denial was not answered from the cache")
	}
}

// TestDenyCacheIdentity: only the exact key and policy set are answered.
func TestDenyCacheIdentity(t *testing.T) {
	t.Parallel()
	p := core.Policy{Name: "a", Limit: 1, Window: time.Minute, Algorithm: core.GCRA}
	q := core.Policy{Name: "b", Limit: 5, Window: time.Minute, Algorithm: core.GCRA}
	rec := newRecorder(t)
	b := must.Do(resilient.New(rec, resilient.WithDenyCache(16)))
	ctx := context.Background()
	_, _ = backendtest.CheckOne(ctx, b, "k", p, 1, t0)
	if d, _ := backendtest.CheckOne(ctx, b, "k", p, 1, t0); d.Allowed {
		t.Fatal("second unit of a limit of 1 admitted")
	}
	calls := rec.calls()
	// Another key, another policy, and a set containing the policy all go
	// to the primary.
	_, _ = backendtest.CheckOne(ctx, b, "k2", p, 1, t0)
	renamed := p
	renamed.Name = "a2"
	_, _ = backendtest.CheckOne(ctx, b, "k", renamed, 1, t0)
	out := make([]core.Decision, 2)
	_ = core.Check(ctx, b, "k", []core.Policy{p, q}, 1, t0, out)
	if rec.calls() != calls+3 {
		t.Fatalf("%d of 3 distinct checks reached the primary", rec.calls()-calls)
	}
	// A clock behind the denial is not answered from the cache.
	_, _ = backendtest.CheckOne(ctx, b, "k", p, 1, t0.Add(-time.Millisecond))
	if rec.calls() != calls+4 {
		t.Fatal("a check from before the cached denial was answered locally")
	}
}

// TestDenyCacheMultiPolicy: a multi-policy denial holds until the earliest
// RetryAfter of the denying policies, with consistent decisions.
func TestDenyCacheMultiPolicy(t *testing.T) {
	t.Parallel()
	fast := core.Policy{Name: "fast", Limit: 2, Window: time.Second, Algorithm: core.FixedWindow}
	slow := core.Policy{Name: "slow", Limit: 2, Window: 10 * time.Second, Algorithm: core.FixedWindow}
	rec := newRecorder(t)
	clk := core.NewManualClock(t0)
	b := must.Do(resilient.New(rec, resilient.WithDenyCache(16)))
	lim := core.NewLimiter(b, core.WithClock(clk))
	ctx := context.Background()
	set := []core.Policy{fast, slow}
	for range 2 {
		if r, _ := lim.Check(ctx, "k", set, 1, nil); !r.Allowed {
			t.Fatal("denied within both limits")
		}
	}
	// t0 is on a whole second, 5 s into a 10 s window.
	r, _ := lim.Check(ctx, "k", set, 1, nil)
	if r.Allowed || r.Decisions[0].RetryAfter != time.Second || r.Decisions[1].RetryAfter != 5*time.Second {
		t.Fatalf("third check: %+v", r)
	}
	calls := rec.calls()
	clk.Advance(400 * time.Millisecond)
	r, _ = lim.Check(ctx, "k", set, 1, nil)
	if rec.calls() != calls || r.Allowed || r.Decisions[0].RetryAfter != 600*time.Millisecond || r.Decisions[1].RetryAfter != 4600*time.Millisecond {
		t.Fatalf("from the cache: %+v", r.Decisions)
	}
	clk.Advance(600 * time.Millisecond) // fast's RetryAfter passed: ask the primary
	r, _ = lim.Check(ctx, "k", set, 1, nil)
	if rec.calls() != calls+1 || r.Allowed || r.Binding != 1 {
		t.Fatalf("after the first RetryAfter: %d calls, %+v", rec.calls()-calls, r)
	}
}

// TestDenyCacheReset: Reset through the wrapper drops the key's denials.
func TestDenyCacheReset(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 1, Window: time.Hour, Algorithm: core.SlidingLog}
	rec := newRecorder(t)
	b := must.Do(resilient.New(rec, resilient.WithDenyCache(16)))
	lim := core.NewLimiter(b, core.WithClock(core.NewManualClock(t0)))
	ctx := context.Background()
	_, _ = lim.Allow(ctx, "k", p)
	if d, _ := lim.Allow(ctx, "k", p); d.Allowed {
		t.Fatal("over the limit")
	}
	if err := lim.Reset(ctx, "k", p); err != nil {
		t.Fatal(err)
	}
	if d, _ := lim.Allow(ctx, "k", p); !d.Allowed {
		t.Fatal("denied after Reset: the deny cache kept a stale denial")
	}
}

// TestDenyCacheHitAllocs: a denial served from the cache allocates nothing.
func TestDenyCacheHitAllocs(t *testing.T) {
	p := core.Policy{Limit: 1, Window: time.Hour}
	b := must.Do(resilient.New(newMem(t), resilient.WithDenyCache(16)))
	ctx := context.Background()
	_, _ = backendtest.CheckOne(ctx, b, "k", p, 1, t0)
	_, _ = backendtest.CheckOne(ctx, b, "k", p, 1, t0)
	items, out := []core.Item{{Key: "k", Policy: p, Cost: 1}}, make([]core.Decision, 1)
	allocs := testing.AllocsPerRun(1000, func() {
		_ = b.Do(ctx, items, t0, out)
		if out[0].Allowed {
			t.Fatal("admitted")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per cached denial", allocs)
	}
	if b.Stats().DenyCacheHits < 1000 {
		t.Fatal("denials were not served from the cache")
	}
}

// manyRecorder is a recorder that counts batches of several keys apart,
// and passes them to its store unrecorded.
type manyRecorder struct {
	*recorder
	mu   sync.Mutex
	many int
}

func (r *manyRecorder) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	if !slices.ContainsFunc(items, func(it core.Item) bool { return it.Key != items[0].Key }) {
		return r.recorder.Do(ctx, items, now, out)
	}
	r.mu.Lock()
	r.many++
	r.mu.Unlock()
	return r.inner.Do(ctx, items, now, out)
}

// TestDenyCacheOneItem: a batch of one item (Envoy's request of one
// descriptor) is answered by the deny cache, with the decisions of a
// primary alone; batches of two keys always reach the primary.
func TestDenyCacheOneItem(t *testing.T) {
	t.Parallel()
	p := core.Policy{Name: "one", Limit: 3, Window: time.Minute, Algorithm: core.GCRA}
	rec := &manyRecorder{recorder: newRecorder(t)}
	clk := core.NewManualClock(t0)
	lim := core.NewLimiter(must.Do(resilient.New(rec, resilient.WithDenyCache(0), resilient.WithClock(clk))), core.WithClock(clk))
	ref := core.NewLimiter(newMem(t), core.WithClock(clk))
	ctx := context.Background()
	// both checks items through the cache and through a primary alone.
	both := func(items []core.Item) (got, want core.Decision) {
		t.Helper()
		g, err := lim.Do(ctx, items, nil)
		if err != nil {
			t.Fatal(err)
		}
		w, err := ref.Do(ctx, items, nil)
		if err != nil {
			t.Fatal(err)
		}
		return g.Decisions[0], w.Decisions[0]
	}
	one := []core.Item{{Key: "k", Policy: p, Cost: 1}}
	for i := range 10 {
		g, w := both(one)
		if g.Allowed != w.Allowed || g.Remaining != w.Remaining || g.RetryAfter != w.RetryAfter || g.ResetAfter != w.ResetAfter {
			t.Fatalf("check %d: %+v, a primary alone said %+v", i+1, g, w)
		}
		wantSource := core.SourcePrimary // three admissions, then the denial the cache keeps
		if i > 3 {
			wantSource = core.SourceDenyCache
		}
		if g.Source != wantSource {
			t.Fatalf("check %d decided by %v, want %v", i+1, g.Source, wantSource)
		}
		clk.Advance(time.Second)
	}
	// Three admissions and the first denial reached the primary; the cache
	// answered the other six.
	if n := rec.calls(); n != 4 || rec.many != 0 {
		t.Fatalf("the primary saw %d checks and %d multi-key checks, want 4 and 0", n, rec.many)
	}
	// The key denied, a second item that admits: the check of two items is
	// denied, by the primary each time.
	two := []core.Item{{Key: "k", Policy: p, Cost: 1}, {Key: "other", Policy: p, Cost: 1}}
	for range 3 {
		res, err := lim.Do(ctx, two, nil)
		if err != nil || res.Allowed || res.Decisions[0].Source != core.SourcePrimary {
			t.Fatalf("two items: %+v %v", res, err)
		}
	}
	if rec.many != 3 {
		t.Fatalf("%d multi-key checks reached the primary, want 3", rec.many)
	}
	// An item's own units are the check's, through the cache's path as
	// through the primary's.
	if g, w := both([]core.Item{{Key: "fresh", Policy: p, Cost: 2}}); g.Remaining != 1 || w.Remaining != 1 {
		t.Fatalf("an item of 2 units of 3: remaining %d (a primary alone: %d), want 1", g.Remaining, w.Remaining)
	}
	// A short out is an error, not a panic.
	if err := must.Do(resilient.New(rec, resilient.WithDenyCache(0))).Do(ctx, two, t0, make([]core.Decision, 1)); err == nil {
		t.Fatal("Do accepted an out shorter than its items")
	}
}

// TestDenyCacheSkipsConcurrency: a concurrency limit's denial is never
// served from the cache, since another instance may give a slot back at
// any moment: every check reaches the primary, and the check after a
// release passes.
func TestDenyCacheSkipsConcurrency(t *testing.T) {
	t.Parallel()
	p := core.MustParsePolicy("1;algorithm=concurrency")
	rec := newRecorder(t)
	b := must.Do(resilient.New(rec, resilient.WithDenyCache(16)))
	ctx := context.Background()
	if d, err := backendtest.CheckOne(ctx, b, "k", p, 1, t0); err != nil || !d.Allowed {
		t.Fatalf("first slot: %+v %v", d, err)
	}
	for i := range 3 {
		if d, err := backendtest.CheckOne(ctx, b, "k", p, 1, t0); err != nil || d.Allowed {
			t.Fatalf("check %d while the slot is held: %+v %v", i, d, err)
		}
	}
	if n := rec.calls(); n != 4 {
		t.Fatalf("the primary saw %d checks, want all 4", n)
	}
	// Another instance gives the slot back, straight to the primary.
	release := []core.Item{{Key: "k", Policy: p, Cost: 1, Op: core.OpRefund, At: t0}}
	if err := rec.Do(ctx, release, t0, make([]core.Decision, 1)); err != nil {
		t.Fatal(err)
	}
	if d, err := backendtest.CheckOne(ctx, b, "k", p, 1, t0); err != nil || !d.Allowed {
		t.Fatalf("after another instance's release: %+v %v", d, err)
	}
}
