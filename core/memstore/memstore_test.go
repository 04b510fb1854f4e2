package memstore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newStore returns a store without background sweeping, closed at the end
// of the test.
func newStore(t *testing.T, opts ...memstore.Option) *memstore.Store {
	t.Helper()
	s := must.Do(memstore.New(opts...))
	return s
}

// hundred is a policy of capacity 100 that refills nothing while the clock
// stands still.
func hundred(a core.Algorithm) core.Policy {
	return core.Policy{Name: "hundred", Limit: 100, Window: time.Hour, Algorithm: a}
}

func TestConcurrentChecksOnOneKeyAdmitExactlyTheLimit(t *testing.T) {
	t.Parallel()
	for _, a := range core.Algorithms() {
		t.Run(string(a), func(t *testing.T) {
			s := newStore(t)
			lim := core.NewLimiter(s, core.WithClock(core.NewManualClock(t0)))
			p := hundred(a)
			var admitted, denied atomic.Int64
			var wg sync.WaitGroup
			for range 32 {
				wg.Go(func() {
					for range 20 {
						d, err := lim.Allow(context.Background(), "hot", p)
						if err != nil {
							t.Error(err)
							return
						}
						if d.Allowed {
							admitted.Add(1)
						} else {
							denied.Add(1)
						}
					}
				})
			}
			wg.Wait()
			if admitted.Load() != 100 || denied.Load() != 540 {
				t.Fatalf("admitted %d, denied %d; want 100 and 540", admitted.Load(), denied.Load())
			}
		})
	}
}

func TestMultiPolicyCheckIsAllOrNothing(t *testing.T) {
	t.Parallel()
	for _, a := range core.Algorithms() {
		t.Run(string(a), func(t *testing.T) {
			s := newStore(t)
			lim := core.NewLimiter(s, core.WithClock(core.NewManualClock(t0)))
			ctx := context.Background()
			wide := core.Policy{Name: "wide", Limit: 5, Window: time.Hour, Algorithm: a}
			narrow := core.Policy{Name: "narrow", Limit: 2, Window: time.Hour, Algorithm: a}
			both := []core.Policy{wide, narrow}
			for i := range 2 {
				r, err := lim.Check(ctx, "k", both, 1, nil)
				if err != nil || !r.Allowed {
					t.Fatalf("check %d: %+v, %v; want admitted", i, r, err)
				}
			}
			r, err := lim.Check(ctx, "k", both, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Allowed || r.Binding != 1 {
				t.Fatalf("third check: allowed %v, binding %d; want denied by narrow", r.Allowed, r.Binding)
			}
			w := r.Decisions[0]
			if !w.Allowed || w.Remaining != 3 || w.RetryAfter != 0 || w.Delay != 0 {
				t.Fatalf("wide in a denied check: %+v; want allowed with 3 remaining as they stand", w)
			}
			if n := r.Decisions[1]; n.Allowed || n.Remaining != 0 || n.RetryAfter <= 0 {
				t.Fatalf("narrow: %+v; want denied with a RetryAfter", n)
			}
			// Nothing was consumed from wide: three more fit alone.
			for i := range 3 {
				if d, err := lim.Allow(ctx, "k", wide); err != nil || !d.Allowed {
					t.Fatalf("wide alone, %d: %+v, %v; want admitted", i, d, err)
				}
			}
			if d, _ := lim.Allow(ctx, "k", wide); d.Allowed {
				t.Fatal("wide admitted a sixth unit")
			}
		})
	}
}

func TestDuplicatePolicyIsConsumedOnce(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	lim := core.NewLimiter(s, core.WithClock(core.NewManualClock(t0)))
	p := core.Policy{Limit: 4, Window: time.Minute, Algorithm: core.SlidingLog}
	r, err := lim.Check(context.Background(), "k", []core.Policy{p, p}, 1, nil)
	if err != nil || !r.Allowed {
		t.Fatalf("%+v, %v", r, err)
	}
	if r.Decisions[0] != r.Decisions[1] || r.Decisions[0].Remaining != 3 {
		t.Fatalf("decisions %+v; want two equal ones with 3 remaining", r.Decisions)
	}
	if d, _ := lim.Peek(context.Background(), "k", p); d.Remaining != 3 {
		t.Fatalf("after the check: %d remaining, want 3", d.Remaining)
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
}

func TestMaxKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, memstore.WithShards(1), memstore.WithMaxKeys(3))
	clock := core.NewManualClock(t0)
	lim := core.NewLimiter(s, core.WithClock(clock))
	short := core.Policy{Name: "short", Limit: 1, Window: time.Second}
	long := core.Policy{Name: "long", Limit: 1, Window: time.Hour}

	for _, k := range []string{"a", "b"} {
		if d, err := lim.Allow(ctx, k, long); err != nil || !d.Allowed {
			t.Fatalf("%s: %+v, %v", k, d, err)
		}
	}
	if d, err := lim.Allow(ctx, "c", short); err != nil || !d.Allowed {
		t.Fatalf("c: %+v, %v", d, err)
	}
	// Full: a new key is refused and nothing changes.
	if _, err := lim.Allow(ctx, "d", long); !errors.Is(err, memstore.ErrStoreFull) {
		t.Fatalf("d in a full store: %v, want ErrStoreFull", err)
	}
	if s.Len() != 3 {
		t.Fatalf("Len = %d, want 3", s.Len())
	}
	if d, _ := lim.Peek(ctx, "d", long); d.Remaining != 1 {
		t.Fatalf("d after the refusal: %+v; want untouched", d)
	}
	// Keys with state keep working, and keep their state: no refund.
	if d, err := lim.Allow(ctx, "a", long); err != nil || d.Allowed {
		t.Fatalf("a again: %+v, %v; want denied, not evicted", d, err)
	}
	// A key with state still gets no new state under another policy.
	if _, err := lim.Check(ctx, "b", []core.Policy{long, short}, 1, nil); err != nil {
		t.Fatalf("b denied under long: %v; a denied check needs no room", err)
	}
	if _, err := lim.Check(ctx, "b", []core.Policy{short}, 1, nil); !errors.Is(err, memstore.ErrStoreFull) {
		t.Fatalf("b under a new policy: %v, want ErrStoreFull", err)
	}
	if s.Refused() != 2 {
		t.Fatalf("Refused = %d, want 2", s.Refused())
	}
	// Once c's state has expired, a new key reclaims it and fits.
	clock.Advance(time.Second)
	if d, err := lim.Allow(ctx, "d", long); err != nil || !d.Allowed {
		t.Fatalf("d after c expired: %+v, %v; want admitted", d, err)
	}
	if s.Len() != 3 {
		t.Fatalf("Len = %d, want 3", s.Len())
	}
	// Reset makes room too.
	if err := lim.Reset(ctx, "a", long); err != nil {
		t.Fatal(err)
	}
	// A multi-policy check needing two new states, with room for one, is
	// refused whole; with one state it fits.
	if _, err := lim.Check(ctx, "e", []core.Policy{long, short}, 1, nil); !errors.Is(err, memstore.ErrStoreFull) {
		t.Fatalf("e under two policies: %v, want ErrStoreFull", err)
	}
	if s.Len() != 2 {
		t.Fatalf("Len = %d after a refused check, want 2", s.Len())
	}
	if d, err := lim.Allow(ctx, "e", long); err != nil || !d.Allowed {
		t.Fatalf("e after a reset: %+v, %v; want admitted", d, err)
	}
	// Full again: a check of two new keys is refused whole and clears its
	// decisions; one that a key of it denies needs no room.
	out := []core.Decision{{Allowed: true, Limit: 9}, {Allowed: true, Limit: 9}}
	if _, err := lim.Do(ctx, []core.Item{{Key: "f", Policy: long, Cost: 1}, {Key: "g", Policy: long, Cost: 1}}, out); !errors.Is(err, memstore.ErrStoreFull) || out[0] != (core.Decision{}) || out[1] != (core.Decision{}) {
		t.Fatalf("two new keys in a full store: %v, decisions %+v; want ErrStoreFull and none", err, out)
	}
	if s.Len() != 3 || s.Refused() != 4 {
		t.Fatalf("Len = %d, Refused = %d after a refused multi-key check; want 3 and 4", s.Len(), s.Refused())
	}
	if r, err := lim.Do(ctx, []core.Item{{Key: "f", Policy: long, Cost: 1}, {Key: "e", Policy: long, Cost: 1}}, out); err != nil || r.Allowed || !out[0].Allowed || out[1].Allowed {
		t.Fatalf("a new key beside a denied one: %+v %v, decisions %+v; want a denial and no error", r, err, out)
	}
}

func TestBadInputIsATypedErrorAndChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	good := core.Policy{Name: "good", Limit: 3, Window: time.Minute, Algorithm: core.TokenBucket}
	if _, err := backendtest.CheckOne(ctx, s, "k", good, 2, t0); err != nil {
		t.Fatal(err)
	}
	// A peek registers wide and stores nothing: checks of good and wide
	// together then take the path of registered policies.
	wide := core.Policy{Name: "wide", Limit: 100, Window: time.Hour}
	if err := core.Peek(ctx, s, "k", []core.Policy{wide}, t0, make([]core.Decision, 1)); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cases := []struct {
		name     string
		ctx      context.Context
		key      string
		policies []core.Policy
		cost     int
		out      int
		want     error
	}{
		{"empty key", ctx, "", []core.Policy{good}, 1, 1, core.ErrInvalidKey},
		{"no policy", ctx, "k", nil, 1, 1, core.ErrNoPolicy},
		{"zero limit", ctx, "k", []core.Policy{good, {Limit: 0, Window: time.Second}}, 1, 2, core.ErrInvalidPolicy},
		{"unknown algorithm", ctx, "k", []core.Policy{{Limit: 1, Window: time.Second, Algorithm: "lottery"}}, 1, 1, core.ErrUnknownAlgorithm},
		{"zero cost", ctx, "k", []core.Policy{good}, 0, 1, core.ErrInvalidCost},
		{"negative cost", ctx, "k", []core.Policy{good}, -1, 1, core.ErrInvalidCost},
		{"cost above capacity", ctx, "k", []core.Policy{good}, 4, 1, core.ErrCostExceedsCapacity},
		{"cancelled", cancelled, "k", []core.Policy{good}, 1, 1, context.Canceled},
		{"registered policies, empty key", ctx, "", []core.Policy{good, wide}, 1, 2, core.ErrInvalidKey},
		{"registered policies, zero cost", ctx, "k", []core.Policy{good, wide}, 0, 2, core.ErrInvalidCost},
		{"registered policies, cost above one capacity", ctx, "k", []core.Policy{wide, good}, 4, 2, core.ErrCostExceedsCapacity},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := make([]core.Decision, c.out)
			out[0].Allowed = true
			if err := core.Check(c.ctx, s, c.key, c.policies, c.cost, t0, out); !errors.Is(err, c.want) {
				t.Errorf("Check: %v, want %v", err, c.want)
			}
			if len(c.policies) > 0 && out[0].Allowed {
				t.Error("Check left a decision in out after an error")
			}
			if len(c.policies) == 1 {
				if _, err := backendtest.CheckOne(c.ctx, s, c.key, c.policies[0], c.cost, t0); !errors.Is(err, c.want) {
					t.Errorf("CheckOne: %v, want %v", err, c.want)
				}
			}
		})
	}
	var perr *core.PolicyError
	if _, err := backendtest.CheckOne(ctx, s, "k", core.Policy{Limit: 1, Window: -time.Second}, 1, t0); !errors.As(err, &perr) || perr.Field != "window" {
		t.Errorf("negative window: %v, want a *core.PolicyError on window", err)
	}
	var cerr *core.CostError
	if _, err := backendtest.CheckOne(ctx, s, "k", good, 9, t0); !errors.As(err, &cerr) || cerr.Capacity != 3 {
		t.Errorf("cost 9: %v, want a *core.CostError with capacity 3", err)
	}
	if err := core.Check(ctx, s, "k", []core.Policy{good, good}, 1, t0, make([]core.Decision, 1)); err == nil {
		t.Error("Check with a short out: no error")
	}
	if err := core.Peek(ctx, s, "", []core.Policy{good}, t0, make([]core.Decision, 1)); !errors.Is(err, core.ErrInvalidKey) {
		t.Errorf("Peek with an empty key: %v", err)
	}
	if err := core.NewLimiter(s).Reset(ctx, "k", core.Policy{Limit: -1, Window: time.Second}); !errors.Is(err, core.ErrInvalidPolicy) {
		t.Errorf("Reset with an invalid policy: %v", err)
	}
	if err := core.NewLimiter(s).Reset(ctx, "k"); !errors.Is(err, core.ErrNoPolicy) {
		t.Errorf("Reset without a policy: %v", err)
	}
	// The state is as the one good check left it.
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
	out := make([]core.Decision, 1)
	if err := core.Peek(ctx, s, "k", []core.Policy{good}, t0, out); err != nil || out[0].Remaining != 1 {
		t.Fatalf("peek after bad input: %+v, %v; want 1 remaining", out[0], err)
	}
}

func TestPeekWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	p := core.Policy{Limit: 2, Window: time.Second, Algorithm: core.LeakyBucket}
	out := make([]core.Decision, 1)
	if err := core.Peek(ctx, s, "k", []core.Policy{p}, t0, out); err != nil {
		t.Fatal(err)
	}
	if d := out[0]; !d.Allowed || d.Remaining != 2 || d.ResetAfter != 0 || s.Len() != 0 {
		t.Fatalf("peek at a new key: %+v, Len %d; want full and nothing stored", d, s.Len())
	}
	for range 2 {
		if _, err := backendtest.CheckOne(ctx, s, "k", p, 1, t0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if err := core.Peek(ctx, s, "k", []core.Policy{p}, t0, out); err != nil {
			t.Fatal(err)
		}
		d := out[0]
		if d.Allowed || d.Remaining != 0 || d.RetryAfter != 500*time.Millisecond || d.ResetAfter != time.Second || d.Delay != 0 {
			t.Fatalf("peek %d at a full queue: %+v", i, d)
		}
	}
}

func TestResetForgetsOnlyTheGivenPolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	lim := core.NewLimiter(s, core.WithClock(core.NewManualClock(t0)))
	a := core.Policy{Name: "a", Limit: 1, Window: time.Minute}
	b := core.Policy{Name: "b", Limit: 1, Window: time.Minute, Algorithm: core.FixedWindow}
	if _, err := lim.Check(ctx, "k", []core.Policy{a, b}, 1, nil); err != nil {
		t.Fatal(err)
	}
	never := core.Policy{Name: "never used", Limit: 1, Window: time.Second}
	if err := lim.Reset(ctx, "k", a, never); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
	if d, _ := lim.Allow(ctx, "k", a); !d.Allowed {
		t.Fatal("a is still exhausted after its reset")
	}
	if d, _ := lim.Allow(ctx, "k", b); d.Allowed {
		t.Fatal("b was reset too")
	}
}

func TestNoAllocationsOnAnExistingKey(t *testing.T) {
	ctx := context.Background()
	for _, a := range core.Algorithms() {
		s := newStore(t)
		p := core.Policy{Limit: 50, Window: time.Second, Algorithm: a}
		now := t0
		for range 200 { // grow the sliding log to its full size
			now = now.Add(time.Millisecond)
			if _, err := backendtest.CheckOne(ctx, s, "k", p, 1, now); err != nil {
				t.Fatal(err)
			}
		}
		items, out := []core.Item{{Key: "k", Policy: p, Cost: 1}}, make([]core.Decision, 1)
		allocs := testing.AllocsPerRun(1000, func() {
			now = now.Add(time.Millisecond)
			if err := s.Do(ctx, items, now, out); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per check, want 0", a, allocs)
		}
	}
}

func TestNoAllocationsForMultiPolicyChecksAndPeeks(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	ps := []core.Policy{hundred(core.GCRA), hundred(core.SlidingWindow), hundred(core.LeakyBucket)}
	out := make([]core.Decision, len(ps))
	now := t0
	if err := core.Check(ctx, s, "k", ps, 1, now, out); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		now = now.Add(time.Minute)
		if err := core.Check(ctx, s, "k", ps, 1, now, out); err != nil {
			t.Fatal(err)
		}
		if err := core.Peek(ctx, s, "k", ps, now, out); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Check and Peek, want 0", allocs)
	}
}

// TestSweepReclaims: a sweep removes every expired state, by the time of the
// store's most recent check, while checks run on other goroutines.
func TestSweepReclaims(t *testing.T) {
	t.Parallel()
	s := must.Do(memstore.New())
	sweeping(t, s)
	p := core.Policy{Limit: 10, Window: time.Second}
	for i := range 100 {
		if _, err := backendtest.CheckOne(context.Background(), s, "k"+strconv.Itoa(i), p, 1, t0); err != nil {
			t.Fatal(err)
		}
	}
	// The store learns the time from checks; this one is the last left.
	if _, err := backendtest.CheckOne(context.Background(), s, "late", p, 1, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.Sweep()
	if s.Len() != 1 {
		t.Fatalf("Len = %d after a sweep, want 1", s.Len())
	}
}

func TestLenCountsStatesPerPolicy(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	lim := core.NewLimiter(s, core.WithClock(core.NewManualClock(t0)))
	ps := []core.Policy{hundred(core.GCRA), hundred(core.FixedWindow), hundred(core.SlidingLog)}
	for _, k := range []string{"a", "b"} {
		if _, err := lim.Check(context.Background(), k, ps, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if s.Len() != 6 {
		t.Fatalf("Len = %d, want 6 (2 keys x 3 policies)", s.Len())
	}
}

// distinctPolicies returns n unnamed policies of limits 1 to n per minute,
// the algorithms in turn.
func distinctPolicies(n int) []core.Policy {
	ps := make([]core.Policy, n)
	for i := range ps {
		ps[i] = core.Policy{Limit: i + 1, Window: time.Minute, Algorithm: core.Algorithms()[(i+1)%6]}
	}
	return ps
}

func TestManyPoliciesKeepSeparateState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	lim := core.NewLimiter(s, core.WithClock(core.NewManualClock(t0)))
	ps := distinctPolicies(20)
	for round := range 2 {
		for i, p := range ps {
			d, err := lim.AllowN(ctx, "k", p, p.Limit)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != (round == 0) {
				t.Fatalf("round %d, policy %d (%v): allowed %v", round, i, p, d.Allowed)
			}
		}
	}
	if s.Len() != len(ps) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(ps))
	}
}

// TestManyPoliciesRegisteredConcurrently: goroutines meeting thousands of
// new policies at once, in different orders, all find one state per
// policy (and one per identity: a named policy's limit can change): every
// policy admits its whole capacity exactly once over all goroutines, and
// the registry's index rebuilds, and the policies registered between
// them, lose none.
func TestManyPoliciesRegisteredConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	lim := core.NewLimiter(s, core.WithClock(core.NewManualClock(t0)))
	ps := distinctPolicies(3000)
	// Named: two limits of one name and algorithm are one identity, so
	// of each pair only one admits its capacity.
	for i := 1; i <= 200; i++ {
		for _, l := range []int{5, 6} {
			ps = append(ps, core.Policy{Name: "n" + strconv.Itoa(i), Limit: l, Window: time.Minute, Algorithm: core.GCRA})
		}
	}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		order := rand.New(rand.NewPCG(uint64(g), 9)).Perm(len(ps))
		wg.Go(func() {
			for _, i := range order {
				// Capacity 5 at most for the named pair: cost 5 fits either limit.
				cost := min(ps[i].Limit, 5)
				if ps[i].Name == "" {
					cost = ps[i].Capacity()
				}
				d, err := lim.AllowN(ctx, "k", ps[i], cost)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if want := int64(3000 + 200); admitted.Load() != want {
		t.Fatalf("%d checks admitted, want %d: one per policy identity", admitted.Load(), want)
	}
	if s.Len() != 3000+200 {
		t.Fatalf("Len = %d, want %d", s.Len(), 3000+200)
	}
}

// TestBatchOfOneMatchesBatchOfOneKey: a batch of one item, which takes its
// own path (checkOne), answers every step of a random trace exactly as a
// batch of that item twice (one state, the one-key path that decides the
// whole batch under the lock) does on a twin store: every algorithm, costs
// up to the capacity, steps that stay in a window, cross one or jump
// several, and a clock that sometimes goes back.
func TestBatchOfOneMatchesBatchOfOneKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, a := range core.Algorithms() {
		t.Run(string(a), func(t *testing.T) {
			one, many := newStore(t), newStore(t)
			p := core.Policy{Name: "p", Limit: 7, Window: 10 * time.Second, Algorithm: a}
			r := rand.New(rand.NewPCG(3, uint64(len(a))))
			now := t0
			out := make([]core.Decision, 2)
			for step := range 20_000 {
				switch r.IntN(10) {
				case 0:
					now = now.Add(time.Duration(r.Int64N(int64(3 * p.Window))))
				case 1:
					now = now.Add(-time.Duration(r.Int64N(int64(time.Second))))
				default:
					now = now.Add(time.Duration(r.Int64N(int64(300 * time.Millisecond))))
				}
				key := "k" + strconv.Itoa(r.IntN(3))
				cost := 1 + r.IntN(p.Limit)
				got, err := backendtest.CheckOne(ctx, one, key, p, cost, now)
				if err != nil {
					t.Fatal(err)
				}
				if err := core.Check(ctx, many, key, []core.Policy{p, p}, cost, now, out); err != nil {
					t.Fatal(err)
				}
				if got != out[0] || got != out[1] {
					t.Fatalf("step %d, %s cost %d at %v: one item %+v, the item twice %+v", step, key, cost, now, got, out)
				}
			}
		})
	}
}

// TestConcurrentSlidingWindowDenialsAreExact: two goroutines hammer one key
// under a sliding window, the clock standing still, so nearly every check is
// denied; every denial names the wait the algorithm gives for the state it
// was decided on, which is the final state, since nothing is admitted once
// the limit is reached.
func TestConcurrentSlidingWindowDenialsAreExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	p := core.Policy{Name: "p", Limit: 50, Window: time.Minute, Algorithm: core.SlidingWindow}
	now := t0.Add(17 * time.Second)
	var wg sync.WaitGroup
	results := make([][]core.Decision, 2)
	for g := range results {
		wg.Go(func() {
			for range 5_000 {
				d, err := backendtest.CheckOne(ctx, s, "hot", p, 1, now)
				if err != nil {
					t.Error(err)
					return
				}
				results[g] = append(results[g], d)
			}
		})
	}
	wg.Wait()
	// What a denial must say: a twin store brought to the same full state.
	twin := newStore(t)
	for range p.Limit {
		if _, err := backendtest.CheckOne(ctx, twin, "hot", p, 1, now); err != nil {
			t.Fatal(err)
		}
	}
	want, err := backendtest.CheckOne(ctx, twin, "hot", p, 1, now)
	if err != nil || want.Allowed || want.RetryAfter <= 0 {
		t.Fatalf("twin: %+v, %v", want, err)
	}
	admitted := 0
	for _, ds := range results {
		for _, d := range ds {
			if d.Allowed {
				admitted++
			} else if d != want {
				t.Fatalf("denial %+v, want %+v", d, want)
			}
		}
	}
	if admitted != p.Limit {
		t.Fatalf("admitted %d, want %d", admitted, p.Limit)
	}
}

// TestNewStartsNoGoroutine: a store reclaims on the request path and starts
// no goroutine.
func TestNewStartsNoGoroutine(t *testing.T) {
	// goleak rather than runtime.NumGoroutine, which also counts the
	// runtime's finalizer goroutine while it runs a finalizer.
	existing := goleak.IgnoreCurrent()
	stores := make([]*memstore.Store, 100)
	for i := range stores {
		stores[i] = must.Do(memstore.New())
	}
	goleak.VerifyNone(t, existing)
	runtime.KeepAlive(stores)
}

// TestIncrementalReclaimBoundsMemory floods every algorithm with distinct
// keys over a long stretch of (manual) time, with no sweeper and no cap: the
// states held stay bounded by those still live plus what the incremental
// walk has not reached yet, instead of growing with every key ever seen.
func TestIncrementalReclaimBoundsMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, a := range core.Algorithms() {
		t.Run(string(a), func(t *testing.T) {
			s := must.Do(memstore.New())
			p := core.Policy{Name: "p", Limit: 10, Window: time.Second, Algorithm: a}
			// 200,000 keys, one check each, 1 ms apart: about 1,000 live at
			// any moment under a 1 s window (2,000 for the sliding window,
			// whose state lasts two windows).
			now := t0
			maxLen := 0
			for i := range 200_000 {
				if _, err := backendtest.CheckOne(ctx, s, "k"+strconv.Itoa(i), p, 1, now); err != nil {
					t.Fatal(err)
				}
				now = now.Add(time.Millisecond)
				maxLen = max(maxLen, s.Len())
			}
			if maxLen > 5_000 {
				t.Fatalf("held up to %d states for about 2,000 live ones", maxLen)
			}
			t.Logf("%s: at most %d states held, %d at the end", a, maxLen, s.Len())
		})
	}
}

// TestHotKeyKeptThroughItsGrace: the walk that insertions take leaves a
// state 100 ms past its expiry, so that a key used again soon after is
// updated in place, and takes it after that.
func TestHotKeyKeptThroughItsGrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.Do(memstore.New())
	p := core.Policy{Name: "p", Limit: 10, Window: time.Second, Algorithm: core.GCRA} // one admission expires in 100 ms
	check := func(key string, at time.Time) {
		t.Helper()
		if _, err := backendtest.CheckOne(ctx, s, key, p, 1, at); err != nil {
			t.Fatal(err)
		}
	}
	flood := func(prefix string, at time.Time) { // enough insertions to walk the whole table
		for i := range 2000 {
			check(prefix+strconv.Itoa(i), at)
		}
	}
	check("hot", t0)
	flood("a", t0.Add(150*time.Millisecond)) // "hot" expired 50 ms ago
	if n := s.Len(); n != 2001 {
		t.Fatalf("%d states after the first flood, want 2,001: the hot key was taken within its grace", n)
	}
	flood("b", t0.Add(300*time.Millisecond)) // "hot" expired 200 ms ago; the "a" keys 50 ms ago
	if n := s.Len(); n != 4000 {
		t.Fatalf("%d states after the second flood, want 4,000: the hot key was kept past its grace", n)
	}
}
