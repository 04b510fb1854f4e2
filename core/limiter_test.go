package core_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
)

// recorder is a Backend that records its calls and answers from a script:
// answer(key, policy index, cost) gives each decision.
type recorder struct {
	mu     sync.Mutex
	checks []call
	peeks  []call
	resets []call
	err    error
	answer func(key string, i int, p core.Policy, cost int) core.Decision
}

type call struct {
	key      string
	policies []core.Policy
	cost     int
	now      time.Time
}

func (r *recorder) decide(key string, policies []core.Policy, cost int, out []core.Decision) {
	for i, p := range policies {
		if r.answer != nil {
			out[i] = r.answer(key, i, p, cost)
		} else {
			out[i] = core.Decision{Allowed: true, Limit: p.Limit, Remaining: p.Limit - cost}
		}
	}
}

// Do records a batch of one key as a check (or a peek) of its policies.
func (r *recorder) Do(_ context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := call{key: items[0].Key, cost: items[0].Cost, now: now}
	for _, it := range items {
		c.policies = append(c.policies, it.Policy)
	}
	switch items[0].Op {
	case core.OpReset:
		r.resets = append(r.resets, call{key: c.key, policies: c.policies})
		return r.err
	case core.OpPeek:
		c.cost = 0
		r.peeks = append(r.peeks, c)
	default:
		r.checks = append(r.checks, c)
	}
	if len(out) != len(items) {
		return errors.New("out has the wrong length")
	}
	if r.err != nil {
		return r.err
	}
	r.decide(c.key, c.policies, c.cost, out)
	return nil
}

var (
	t0       = time.Unix(1_700_000_000, 0).UTC()
	perSec   = core.Policy{Name: "per-second", Limit: 10, Window: time.Second}
	perMin   = core.Policy{Name: "per-minute", Limit: 100, Window: time.Minute, Algorithm: core.FixedWindow}
	errStore = errors.New("store is down")
)

func TestLimiterAllow(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	clk := core.NewManualClock(t0)
	l := core.NewLimiter(rec, core.WithClock(clk))
	d, err := l.Allow(context.Background(), "k", perSec)
	if err != nil || !d.Allowed || d.Remaining != 9 {
		t.Fatalf("Allow = %+v, %v", d, err)
	}
	clk.Advance(time.Second)
	if d, err = l.AllowN(context.Background(), "k2", perMin, 7); err != nil || d.Remaining != 93 {
		t.Fatalf("AllowN = %+v, %v", d, err)
	}
	if len(rec.checks) != 2 {
		t.Fatalf("backend saw %d checks, want 2", len(rec.checks))
	}
	want := []call{{"k", []core.Policy{perSec}, 1, t0}, {"k2", []core.Policy{perMin}, 7, t0.Add(time.Second)}}
	for i, c := range rec.checks {
		w := want[i]
		if c.key != w.key || len(c.policies) != 1 || c.policies[0] != w.policies[0] || c.cost != w.cost || !c.now.Equal(w.now) {
			t.Errorf("check %d = %+v, want %+v", i, c, w)
		}
	}
	rec.err = errStore
	d, err = l.Allow(context.Background(), "k", perSec)
	if !errors.Is(err, errStore) || d != (core.Decision{}) {
		t.Fatalf("Allow on a failing backend = %+v, %v; want the zero Decision and the error", d, err)
	}
}

// The pooled scratch space must never leak one caller's decision into
// another's. Run with -race.
func TestLimiterPooledPathConcurrent(t *testing.T) {
	t.Parallel()
	rec := &recorder{answer: func(key string, _ int, p core.Policy, cost int) core.Decision {
		return core.Decision{Allowed: true, Limit: p.Limit, Remaining: cost}
	}}
	l := core.NewLimiter(rec, core.WithClock(core.NewManualClock(t0)))
	var wg sync.WaitGroup
	for g := 1; g <= 8; g++ {
		wg.Go(func() {
			p := core.Policy{Limit: 100 + g, Window: time.Second}
			for range 200 {
				d, err := l.AllowN(context.Background(), "k", p, g)
				if err != nil || d.Remaining != g {
					t.Errorf("goroutine %d got %+v, %v", g, d, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestLimiterCheckBinding(t *testing.T) {
	t.Parallel()
	type spec struct {
		allowed       bool
		remaining     int
		retry, resets time.Duration
	}
	tests := []struct {
		name    string
		ds      []spec
		allowed bool
		binding int
	}{
		{"one admitted", []spec{{true, 4, 0, time.Second}}, true, 0},
		{"one denied", []spec{{false, 0, time.Second, time.Second}}, false, 0},
		{"admitted: fewest remaining", []spec{{true, 9, 0, time.Second}, {true, 2, 0, time.Minute}, {true, 5, 0, time.Hour}}, true, 1},
		{"admitted: tie broken by longer reset", []spec{{true, 2, 0, time.Second}, {true, 2, 0, time.Hour}, {true, 2, 0, time.Minute}}, true, 1},
		{"admitted: full tie keeps the first", []spec{{true, 2, 0, time.Second}, {true, 2, 0, time.Second}}, true, 0},
		{"denied beats fewer remaining", []spec{{true, 0, 0, time.Hour}, {false, 3, time.Second, time.Second}}, false, 1},
		{"denied: longest retry", []spec{{false, 0, time.Second, time.Hour}, {true, 1, 0, 0}, {false, 0, time.Minute, time.Minute}, {false, 0, 2 * time.Second, time.Hour}}, false, 2},
		{"denied: equal retry keeps the first", []spec{{true, 5, 0, 0}, {false, 0, time.Minute, 0}, {false, 0, time.Minute, time.Hour}}, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{answer: func(_ string, i int, p core.Policy, _ int) core.Decision {
				s := tt.ds[i]
				return core.Decision{Allowed: s.allowed, Remaining: s.remaining, RetryAfter: s.retry, ResetAfter: s.resets, Limit: p.Limit}
			}}
			l := core.NewLimiter(rec, core.WithClock(core.NewManualClock(t0)))
			ps := make([]core.Policy, len(tt.ds))
			for i := range ps {
				ps[i] = core.Policy{Limit: 10 + i, Window: time.Second}
			}
			r, err := l.Check(context.Background(), "k", ps, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Allowed != tt.allowed || r.Binding != tt.binding {
				t.Fatalf("Allowed %v Binding %d, want %v %d", r.Allowed, r.Binding, tt.allowed, tt.binding)
			}
			if len(r.Decisions) != len(ps) || r.Decision() != r.Decisions[tt.binding] || r.Policies[r.Binding] != ps[tt.binding] {
				t.Fatalf("Decisions %+v, binding decision %+v", r.Decisions, r.Decision())
			}
		})
	}
}

func TestLimiterCheckOutSlice(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	l := core.NewLimiter(rec, core.WithClock(core.NewManualClock(t0)))
	ctx := context.Background()
	ps := []core.Policy{perSec, perMin}

	buf := make([]core.Decision, 0, 4)
	r, err := l.Check(ctx, "k", ps, 2, buf)
	if err != nil || len(r.Decisions) != 2 || &r.Decisions[0] != &buf[:1][0] {
		t.Fatalf("with room in out: Decisions %p, buf %p, err %v; want the same backing array", r.Decisions, buf, err)
	}
	if r.Decisions[1].Remaining != perMin.Limit-2 || !rec.checks[0].now.Equal(t0) || rec.checks[0].cost != 2 {
		t.Fatalf("Check passed %+v, got %+v", rec.checks[0], r.Decisions)
	}

	small := make([]core.Decision, 1)
	r, err = l.Check(ctx, "k", ps, 1, small)
	if err != nil || len(r.Decisions) != 2 || &r.Decisions[0] == &small[0] {
		t.Fatalf("with too small an out: err %v, reused %v", err, &r.Decisions[0] == &small[0])
	}
	if small[0] != (core.Decision{}) {
		t.Fatalf("a too-small out was written: %+v", small[0])
	}

	r, err = l.Check(ctx, "k", ps, 1, nil)
	if err != nil || len(r.Decisions) != 2 {
		t.Fatalf("nil out: %+v, %v", r, err)
	}

	rec.err = errStore
	r, err = l.Check(ctx, "k", ps, 1, buf)
	if !errors.Is(err, errStore) || r.Allowed || r.Decisions != nil {
		t.Fatalf("failing backend: %+v, %v; want the zero Result", r, err)
	}
}

func TestLimiterPeek(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	clk := core.NewManualClock(t0)
	l := core.NewLimiter(rec, core.WithClock(clk))
	clk.Advance(time.Minute)
	d, err := l.Peek(context.Background(), "k", perMin)
	if err != nil || d.Remaining != perMin.Limit {
		t.Fatalf("Peek = %+v, %v", d, err)
	}
	if len(rec.peeks) != 1 || len(rec.checks) != 0 {
		t.Fatalf("Peek made %d peeks and %d checks", len(rec.peeks), len(rec.checks))
	}
	if c := rec.peeks[0]; c.key != "k" || len(c.policies) != 1 || c.policies[0] != perMin || !c.now.Equal(t0.Add(time.Minute)) {
		t.Fatalf("backend Peek got %+v", c)
	}
	rec.err = errStore
	if d, err := l.Peek(context.Background(), "k", perMin); !errors.Is(err, errStore) || d != (core.Decision{}) {
		t.Fatalf("failing Peek = %+v, %v", d, err)
	}
}

// A concurrency slot taken by Allow or Wait could never be given back (the
// check's instant names it, and only Check's Result carries it), so they
// refuse such a policy before reaching the backend; Peek and Check take it.
func TestLimiterAllowRefusesConcurrency(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	l := core.NewLimiter(rec, core.WithClock(core.NewManualClock(t0)))
	slots := core.MustParsePolicy("2;algorithm=concurrency;name=inflight")
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"Allow":  func() error { _, err := l.Allow(ctx, "k", slots); return err },
		"AllowN": func() error { _, err := l.AllowN(ctx, "k", slots, 1); return err },
		"Wait":   func() error { _, err := l.Wait(ctx, "k", slots); return err },
	} {
		var pe *core.PolicyError
		if err := call(); !errors.As(err, &pe) || !errors.Is(err, core.ErrInvalidPolicy) || pe.Field != "algorithm" || pe.Policy != "inflight" {
			t.Errorf("%s with a concurrency policy: %v", name, err)
		}
	}
	if len(rec.checks) != 0 {
		t.Fatalf("the backend saw %d checks", len(rec.checks))
	}
	if _, err := l.Peek(ctx, "k", slots); err != nil {
		t.Fatal(err)
	}
	if res, err := l.Check(ctx, "k", []core.Policy{slots}, 1, nil); err != nil || !res.Allowed || !res.At.Equal(t0) {
		t.Fatalf("Check = %+v, %v", res, err)
	}
}

func TestLimiterResetValidates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		key      string
		policies []core.Policy
		sentinel error
	}{
		{"empty key", "", []core.Policy{perSec}, core.ErrInvalidKey},
		{"key too long", string(make([]byte, core.MaxKeyLen+1)), []core.Policy{perSec}, core.ErrInvalidKey},
		{"no policy", "k", nil, core.ErrNoPolicy},
		{"invalid policy", "k", []core.Policy{perSec, {Limit: -1, Window: time.Second}}, core.ErrInvalidPolicy},
		{"unknown algorithm", "k", []core.Policy{{Limit: 1, Window: time.Second, Algorithm: "x"}}, core.ErrUnknownAlgorithm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := core.NewLimiter(backendtest.NewReference())
			if err := l.Reset(context.Background(), tt.key, tt.policies...); !errors.Is(err, tt.sentinel) {
				t.Fatalf("Reset = %v, want %v", err, tt.sentinel)
			}
		})
	}
	rec := &recorder{}
	l := core.NewLimiter(rec)
	maxKey := string(make([]byte, core.MaxKeyLen))
	if err := l.Reset(context.Background(), maxKey, perSec, perMin); err != nil {
		t.Fatal(err)
	}
	if len(rec.resets) != 1 || rec.resets[0].key != maxKey || len(rec.resets[0].policies) != 2 {
		t.Fatalf("backend Reset got %+v", rec.resets)
	}
	rec.err = errStore
	if err := l.Reset(context.Background(), "k", perSec); !errors.Is(err, errStore) {
		t.Fatalf("Reset error %v not passed through", err)
	}
}

func TestLimiterConstruction(t *testing.T) {
	rec := &recorder{}
	l := core.NewLimiter(rec, core.WithClock(nil))
	if l.Clock() != core.SystemClock() {
		t.Fatalf("WithClock(nil) replaced the default clock with %T", l.Clock())
	}
	clk := core.NewManualClock(t0)
	if core.NewLimiter(rec, nil, core.WithClock(clk)).Clock() != clk { // a nil option is passed over
		t.Fatal("WithClock ignored")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("NewLimiter(nil) did not panic")
		}
	}()
	core.NewLimiter(nil)
}

func TestResultDecisionOutOfRange(t *testing.T) {
	t.Parallel()
	for _, r := range []core.Result{{}, {Binding: 2, Decisions: make([]core.Decision, 2)}, {Binding: -1, Decisions: make([]core.Decision, 1)}} {
		if d := r.Decision(); d != (core.Decision{}) {
			t.Errorf("%+v.Decision() = %+v, want zero", r, d)
		}
	}
}

func TestValidateItems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		items    []core.Item
		sentinel error
	}{
		{[]core.Item{{Key: "k", Policy: perSec, Cost: 1}}, nil},
		{[]core.Item{{Key: "k", Policy: perSec, Op: core.OpPeek}}, nil},
		{[]core.Item{{Key: "k", Policy: perSec}}, core.ErrInvalidCost},
		{[]core.Item{{Key: "k", Policy: perSec, Cost: 11}, {Key: "k", Policy: perMin, Cost: 11}}, core.ErrCostExceedsCapacity},
		{[]core.Item{{Key: "", Policy: perSec, Cost: 1}}, core.ErrInvalidKey},
		{nil, core.ErrNoPolicy},
		{[]core.Item{{Key: "k", Policy: core.Policy{Limit: 1}, Op: core.OpPeek}}, core.ErrInvalidPolicy},
		{[]core.Item{{Key: "k", Policy: perSec, Cost: 1}, {Key: "k", Policy: perSec, Cost: 2}}, core.ErrInvalidCost},
		{[]core.Item{{Key: "k", Policy: perSec, Cost: 1}, {Key: "k", Policy: perMin, Op: core.OpPeek}}, core.ErrUnsupported},
		{[]core.Item{{Key: "k", Policy: perSec, Cost: 1, Op: 9}}, core.ErrUnsupported},
	}
	for i, tt := range tests {
		err := core.ValidateItems(tt.items)
		if (tt.sentinel == nil) != (err == nil) || (tt.sentinel != nil && !errors.Is(err, tt.sentinel)) {
			t.Errorf("case %d: ValidateItems = %v, want %v", i, err, tt.sentinel)
		}
	}
	if err := core.ValidateKey(""); !errors.Is(err, core.ErrInvalidKey) || err.Error() != "ratelimit: invalid key: key is empty" {
		t.Errorf("ValidateKey(\"\") = %v, want ErrInvalidKey", err)
	}
}

// TestLimiterPassesTheWholePolicy: Allow, AllowN, Peek and Check copy each
// policy into their pooled items field by field (Item.set); every field
// must reach the backend, and a field added to Policy must be added to
// that copy too.
func TestLimiterPassesTheWholePolicy(t *testing.T) {
	t.Parallel()
	if n := reflect.TypeFor[core.Policy]().NumField(); n != 9 {
		t.Fatalf("core.Policy has %d fields; Item.set copies 9: copy the new one too, then update this count", n)
	}
	p := core.Policy{Name: "all", Limit: 10, Window: time.Second, Burst: 20, Algorithm: core.LeakyBucket, MaxDelay: time.Millisecond, Shadow: true,
		Calendar: "week", Zone: "Asia/Tokyo"} // not a valid policy: the recorder does not validate
	rec := &recorder{}
	l := core.NewLimiter(rec, core.WithClock(core.NewManualClock(t0)))
	ctx := context.Background()
	_, _ = l.Allow(ctx, "k", p)
	_, _ = l.AllowN(ctx, "k", p, 2)
	_, _ = l.Peek(ctx, "k", p)
	two := []core.Policy{p, {Name: "other", Limit: 3, Window: time.Minute}}
	_, _ = l.Check(ctx, "k", two, 1, nil)
	for _, c := range append(rec.checks, rec.peeks...) {
		want := []core.Policy{p}
		if len(c.policies) == 2 {
			want = two
		}
		if !slices.Equal(c.policies, want) {
			t.Fatalf("the backend got %+v, want %+v", c.policies, want)
		}
	}
	if len(rec.checks) != 3 || len(rec.peeks) != 1 {
		t.Fatalf("%d checks and %d peeks, want 3 and 1", len(rec.checks), len(rec.peeks))
	}
}

// A Decision is three 16-byte words: Go copies a larger struct whose size
// is not a multiple of 16 with an overlapping last move, and a copy that
// follows another copy of it then waits on the overlap (Source after
// Delay made it 56 bytes).
func TestDecisionSize(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(core.Decision{}); n != 48 {
		t.Errorf("core.Decision is %d bytes, want 48: keep its two one-byte fields together", n)
	}
}

// A Limiter fills a 128-byte block of its own: every check on every CPU
// reads it, and a smaller one shares a cache line with whatever the heap
// puts beside it (docs/benchmarks.md, "Before #13 and now").
func TestLimiterSize(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(core.Limiter{}); n != 128 {
		t.Errorf("core.Limiter is %d bytes, want 128: shrink its padding by what a new field takes", n)
	}
}
