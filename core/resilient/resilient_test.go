package resilient_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/sink"
)

var (
	perSecond = core.Policy{Name: "per-second", Limit: 3, Window: time.Second, Algorithm: core.FixedWindow}
	perMinute = core.Policy{Name: "per-minute", Limit: 5, Window: time.Minute, Algorithm: core.SlidingWindow}
)

// TestHealthyMatchesPrimary: while the primary answers, the wrapper's
// decisions are the primary's, for single and multi-policy checks.
func TestHealthyMatchesPrimary(t *testing.T) {
	t.Parallel()
	ref := core.NewLimiter(newMem(t), core.WithClock(core.NewManualClock(t0)))
	clk := core.NewManualClock(t0)
	b := must.Do(resilient.New(newMem(t), resilient.WithClock(clk)))
	lim := core.NewLimiter(b, core.WithClock(clk))
	refClk := ref.Clock().(*core.ManualClock)
	ctx := context.Background()
	for i := range 40 {
		key := []string{"a", "b"}[i%2]
		want, err := ref.AllowN(ctx, key, perSecond, 1+i%2)
		if err != nil {
			t.Fatal(err)
		}
		got, err := lim.AllowN(ctx, key, perSecond, 1+i%2)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("check %d: got %+v, want %+v", i, got, want)
		}
		wantR, err := ref.Check(ctx, key, []core.Policy{perSecond, perMinute}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		gotR, err := lim.Check(ctx, key, []core.Policy{perSecond, perMinute}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gotR.Decisions, wantR.Decisions) {
			t.Fatalf("multi check %d: got %+v, want %+v", i, gotR.Decisions, wantR.Decisions)
		}
		clk.Advance(150 * time.Millisecond)
		refClk.Advance(150 * time.Millisecond)
	}
	if s := b.Stats(); s.Failures != 0 || s.State != "closed" || s.PrimaryCalls != 80 {
		t.Fatalf("stats after healthy run: %+v", s)
	}
}

// TestValidationErrorsPassThrough: the core's typed errors reach the caller
// unchanged, never touch the primary, and never trip the breaker.
func TestValidationErrorsPassThrough(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	b := must.Do(resilient.New(f, resilient.WithBreaker(2, time.Second), resilient.WithFailOpen()))
	ctx := context.Background()
	cases := []struct {
		name string
		key  string
		p    core.Policy
		cost int
		want error
	}{
		{"empty key", "", perSecond, 1, core.ErrInvalidKey},
		{"bad limit", "k", core.Policy{Limit: 0, Window: time.Second}, 1, core.ErrInvalidPolicy},
		{"bad algorithm", "k", core.Policy{Limit: 1, Window: time.Second, Algorithm: "nope"}, 1, core.ErrUnknownAlgorithm},
		{"zero cost", "k", perSecond, 0, core.ErrInvalidCost},
		{"cost above capacity", "k", perSecond, 4, core.ErrCostExceedsCapacity},
	}
	for range 3 {
		for _, c := range cases {
			if _, err := backendtest.CheckOne(ctx, b, c.key, c.p, c.cost, t0); !errors.Is(err, c.want) || errors.Is(err, resilient.ErrUnavailable) {
				t.Fatalf("%s: CheckOne error %v, want %v", c.name, err, c.want)
			}
			out := make([]core.Decision, 1)
			if err := core.Check(ctx, b, c.key, []core.Policy{c.p}, c.cost, t0, out); !errors.Is(err, c.want) {
				t.Fatalf("%s: Check error %v, want %v", c.name, err, c.want)
			}
		}
	}
	if err := core.Check(ctx, b, "k", nil, 1, t0, nil); !errors.Is(err, core.ErrNoPolicy) {
		t.Fatalf("no policy: %v", err)
	}
	if err := core.NewLimiter(b).Reset(ctx, "k"); !errors.Is(err, core.ErrNoPolicy) {
		t.Fatalf("reset without policy: %v", err)
	}
	if err := core.Peek(ctx, b, "", []core.Policy{perSecond}, t0, make([]core.Decision, 1)); !errors.Is(err, core.ErrInvalidKey) {
		t.Fatalf("peek with empty key: %v", err)
	}
	if f.calls.Load() != 0 {
		t.Fatalf("primary called %d times for invalid input", f.calls.Load())
	}

	// A typed validation error from the primary itself passes through too.
	f.set(callerErr)
	for range 5 {
		if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, t0); !errors.Is(err, core.ErrInvalidKey) || errors.Is(err, resilient.ErrUnavailable) {
			t.Fatalf("primary's validation error came back as %v", err)
		}
	}
	if s := b.Stats(); s.Failures != 0 || s.State != "closed" || s.FailedOpen != 0 {
		t.Fatalf("validation errors counted as failures: %+v", s)
	}
}

// TestBudgetHardStop: a primary that ignores its context is abandoned at the
// budget; its late result is discarded and its goroutine ends when it
// returns.
func TestBudgetHardStop(t *testing.T) {
	f := newFaulty(t)
	f.set(hang)
	var ev eventLog
	// 50 ms: long enough that the healthy check at the end, on a goroutine
	// of its own, does not miss it on a loaded machine under the race
	// detector (at 5 ms it did, about once in a thousand runs).
	b := must.Do(resilient.New(f, resilient.WithBudget(50*time.Millisecond), resilient.WithEvents(ev.add)))
	_, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, t0)
	if !errors.Is(err, resilient.ErrUnavailable) || !errors.Is(err, resilient.ErrBudgetExceeded) {
		t.Fatalf("hung primary: error %v, want ErrBudgetExceeded", err)
	}
	if !strings.Contains(err.Error(), "unavailable: check: ") {
		t.Fatalf("error %q does not name the check", err)
	}
	if s := b.Stats(); s.Abandoned != 1 || s.Timeouts != 1 {
		t.Fatalf("after one abandoned call: %+v", s)
	}
	f.set(healthy)
	f.unblock()
	waitFor(t, "the abandoned call to finish", func() bool { return b.Stats().Abandoned == 0 })
	if s := b.Stats(); s.LateResults != 1 || ev.count("late_result") != 1 {
		t.Fatalf("late result not reported: %+v", s)
	}
	// The late result changed nothing visible: the next check is answered
	// by the primary normally.
	d, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, t0)
	if err != nil || !d.Allowed {
		t.Fatalf("after recovery: %+v, %v", d, err)
	}
}

// TestBudgetDeadlineOnContext: every primary call carries the budget as its
// context deadline, and a primary honouring it fails with ErrBudgetExceeded.
func TestBudgetDeadlineOnContext(t *testing.T) {
	f := newFaulty(t)
	budget := 30 * time.Millisecond
	b := must.Do(resilient.New(f, resilient.WithBudget(budget)))
	ctx := context.Background()
	if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, t0); err != nil {
		t.Fatal(err)
	}
	if err := core.Peek(ctx, b, "k", []core.Policy{perSecond}, t0, make([]core.Decision, 1)); err != nil {
		t.Fatal(err)
	}
	if err := core.NewLimiter(b).Reset(ctx, "k", perSecond); err != nil {
		t.Fatal(err)
	}
	f.set(hangCtx)
	if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, t0); !errors.Is(err, resilient.ErrBudgetExceeded) {
		t.Fatalf("primary honouring the deadline: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.deadlines) != 4 {
		t.Fatalf("%d calls recorded, want 4", len(f.deadlines))
	}
	for i, left := range f.deadlines {
		if left <= 0 || left > budget {
			t.Fatalf("call %d: %v left on its context, want within (0, %v]", i, left, budget)
		}
	}
}

// TestCallerContextIsNotAFailure: a caller that gives up gets its own
// context error, and the breaker learns nothing from it.
func TestCallerContextIsNotAFailure(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	f.set(hangCtx)
	b := must.Do(resilient.New(f, resilient.WithBreaker(1, time.Second), resilient.WithFailOpen()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, t0); !errors.Is(err, context.Canceled) || errors.Is(err, resilient.ErrUnavailable) {
		t.Fatalf("cancelled caller: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, t0); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, resilient.ErrUnavailable) {
		t.Fatalf("caller deadline shorter than the budget: %v", err)
	}
	if s := b.Stats(); s.Failures != 0 || s.State != "closed" || s.FailedOpen != 0 {
		t.Fatalf("caller's context counted against the primary: %+v", s)
	}
}

// TestBreaker: consecutive failures open the breaker; while open no call
// reaches the primary; probes go one per cooldown; a successful probe closes
// it.
func TestBreaker(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	clk := core.NewManualClock(t0)
	var ev eventLog
	b := must.Do(resilient.New(f, resilient.WithClock(clk), resilient.WithBreaker(3, time.Second), resilient.WithEvents(ev.add)))
	ctx := context.Background()
	check := func() error {
		_, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now())
		return err
	}
	f.set(failing)
	for i := range 3 {
		if err := check(); !errors.Is(err, errBroken) || !errors.Is(err, resilient.ErrUnavailable) {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	if b.Stats().State != "open" {
		t.Fatalf("after 3 failures the breaker is %v", b.Stats().State)
	}
	calls := f.calls.Load()
	for range 100 {
		if err := check(); !errors.Is(err, resilient.ErrCircuitOpen) {
			t.Fatalf("open breaker: %v", err)
		}
		clk.Advance(9 * time.Millisecond)
	}
	if f.calls.Load() != calls {
		t.Fatalf("open breaker let %d calls through", f.calls.Load()-calls)
	}
	clk.Advance(100 * time.Millisecond) // 1 s after opening: a probe is due
	if err := check(); !errors.Is(err, errBroken) {
		t.Fatalf("failed probe: %v", err)
	}
	if f.calls.Load() != calls+1 || b.Stats().State != "open" {
		t.Fatalf("probe: %d calls, state %v", f.calls.Load()-calls, b.Stats().State)
	}
	clk.Advance(999 * time.Millisecond)
	if err := check(); !errors.Is(err, resilient.ErrCircuitOpen) {
		t.Fatalf("before the next probe: %v", err)
	}
	f.set(healthy)
	clk.Advance(time.Millisecond)
	if err := check(); err != nil {
		t.Fatalf("successful probe: %v", err)
	}
	if b.Stats().State != "closed" {
		t.Fatalf("after a successful probe the breaker is %v", b.Stats().State)
	}
	want := []string{"closed>open", "open>half_open", "half_open>open", "open>half_open", "half_open>closed"}
	if got := ev.transitions(); !slices.Equal(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
	s := b.Stats()
	if s.Opens != 1 || s.Probes != 2 || s.ShortCircuits != 101 || s.Failures != 4 {
		t.Fatalf("stats %+v", s)
	}
	if n := ev.count("failure"); n != 4 {
		t.Fatalf("%d failure events, want 4", n)
	}

	// A success resets the count of consecutive failures.
	f.set(failing)
	_ = check()
	_ = check()
	f.set(healthy)
	_ = check()
	f.set(failing)
	_ = check()
	_ = check()
	if b.Stats().State != "closed" {
		t.Fatal("non-consecutive failures opened the breaker")
	}
}

// TestProbeOneAtATime: while a probe is in flight every other check goes to
// the failure mode without touching the primary.
func TestProbeOneAtATime(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	clk := core.NewManualClock(t0)
	b := must.Do(resilient.New(f, resilient.WithClock(clk), resilient.WithBreaker(1, time.Second),
		resilient.WithBudget(time.Minute), resilient.WithFailClosed()))
	ctx := context.Background()
	f.set(failing)
	if d, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now()); err != nil || d.Allowed {
		t.Fatalf("fail closed: %+v, %v", d, err)
	}
	clk.Advance(time.Second)
	f.reblock()
	f.entered = make(chan struct{})
	f.set(hang)
	probeDone := make(chan core.Decision)
	go func() {
		d, _ := backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now())
		probeDone <- d
	}()
	<-f.entered
	calls := f.calls.Load()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				d, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now())
				if err != nil || d.Allowed || d.RetryAfter != time.Second {
					t.Errorf("during the probe: %+v, %v", d, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if f.calls.Load() != calls {
		t.Fatalf("%d calls reached the primary while a probe was in flight", f.calls.Load()-calls)
	}
	if b.Stats().State != "half_open" {
		t.Fatalf("state during the probe: %v", b.Stats().State)
	}
	f.set(healthy)
	f.unblock()
	<-probeDone
	if b.Stats().State != "open" {
		t.Fatalf("probe that failed left the breaker %v", b.Stats().State)
	}
}

// TestCancelledProbe: a probe whose caller gives up tells nothing about the
// primary. The breaker goes back to open with a probe due at once, so the
// next check probes, instead of staying half-open with every check
// short-circuited.
func TestCancelledProbe(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	clk := core.NewManualClock(t0)
	var ev eventLog
	b := must.Do(resilient.New(f, resilient.WithClock(clk), resilient.WithBreaker(1, time.Second),
		resilient.WithBudget(time.Minute), resilient.WithFailClosed(), resilient.WithEvents(ev.add)))
	f.set(failing)
	_, _ = backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, clk.Now())
	clk.Advance(time.Second)
	f.set(hangCtx)
	calls := f.calls.Load()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now())
		done <- err
	}()
	waitFor(t, "the probe to reach the primary", func() bool { return f.calls.Load() == calls+1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled probe: %v", err)
	}
	if s := b.Stats(); s.State != "open" || s.Failures != 1 {
		t.Fatalf("after a cancelled probe: %+v; want open, and no failure counted", s)
	}
	f.set(healthy)
	if d, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, clk.Now()); err != nil || !d.Allowed || f.calls.Load() != calls+2 {
		t.Fatalf("the next check, at the same instant: %+v, %v, %d calls; want a probe that closes the breaker", d, err, f.calls.Load()-calls)
	}
	want := []string{"closed>open", "open>half_open", "half_open>open", "open>half_open", "half_open>closed"}
	if got := ev.transitions(); !slices.Equal(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
}

// TestFailOpen: an unavailable primary admits, and the Report says so.
func TestFailOpen(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	f.set(failing)
	b := must.Do(resilient.New(f, resilient.WithFailOpen(), resilient.WithBreaker(2, time.Second)))
	for i := range 10 {
		var r resilient.Report
		ctx := resilient.WithReport(context.Background(), &r)
		d, err := backendtest.CheckOne(ctx, b, "k", perSecond, 3, t0)
		if err != nil || !d.Allowed || d.Remaining != 0 || d.Limit != 3 || d.Source != core.SourceFailOpen {
			t.Fatalf("check %d: %+v, %v", i, d, err)
		}
		if r.Source != core.SourceFailOpen || !errors.Is(r.Err, errBroken) && !errors.Is(r.Err, resilient.ErrCircuitOpen) {
			t.Fatalf("check %d: report %+v", i, r)
		}
	}
	out := make([]core.Decision, 2)
	if err := core.Check(context.Background(), b, "k", []core.Policy{perSecond, perMinute}, 1, t0, out); err != nil || !out[0].Allowed || !out[1].Allowed {
		t.Fatalf("multi-policy fail open: %+v, %v", out, err)
	}
	if s := b.Stats(); s.FailedOpen != 11 {
		t.Fatalf("FailedOpen = %d, want 11", s.FailedOpen)
	}
	// Peek has no state to report while failing open.
	if err := core.Peek(context.Background(), b, "k", []core.Policy{perSecond}, t0, out[:1]); !errors.Is(err, resilient.ErrUnavailable) {
		t.Fatalf("peek while failing open: %v", err)
	}
}

// TestFailClosed: an unavailable primary denies, with a RetryAfter that is
// the time until the next probe.
func TestFailClosed(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	f.set(failing)
	clk := core.NewManualClock(t0)
	b := must.Do(resilient.New(f, resilient.WithFailClosed(), resilient.WithClock(clk), resilient.WithBreaker(1, 2*time.Second)))
	var r resilient.Report
	ctx := resilient.WithReport(context.Background(), &r)
	d, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now())
	if err != nil || d.Allowed || d.RetryAfter != 2*time.Second || d.Remaining != 0 || d.Source != core.SourceFailClosed {
		t.Fatalf("first failure: %+v, %v", d, err)
	}
	if r.Source != core.SourceFailClosed || !errors.Is(r.Err, errBroken) {
		t.Fatalf("report %+v", r)
	}
	clk.Advance(1500*time.Millisecond + 3*time.Microsecond)
	d, err = backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now())
	if err != nil || d.Allowed || d.RetryAfter != 500*time.Millisecond-3*time.Microsecond {
		t.Fatalf("while open: %+v, %v", d, err)
	}
	if !errors.Is(r.Err, resilient.ErrCircuitOpen) {
		t.Fatalf("report while open: %+v", r)
	}
	out := make([]core.Decision, 2)
	if err := core.Check(ctx, b, "k", []core.Policy{perSecond, perMinute}, 1, clk.Now(), out); err != nil || out[0].Allowed || out[1].Allowed {
		t.Fatalf("multi-policy fail closed: %+v, %v", out, err)
	}
}

// TestFallback: while the primary is down the fallback limits with the same
// policies; once a probe succeeds checks return to the primary.
func TestFallback(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	clk := core.NewManualClock(t0)
	fb := newMem(t)
	b := must.Do(resilient.New(f, resilient.WithFallback(fb), resilient.WithClock(clk), resilient.WithBreaker(2, time.Second)))
	lim := core.NewLimiter(b, core.WithClock(clk))
	f.set(failing)
	admitted := 0
	for range 10 {
		var r resilient.Report
		d, err := lim.Allow(resilient.WithReport(context.Background(), &r), "k", perSecond)
		if err != nil {
			t.Fatal(err)
		}
		if r.Source != core.SourceFallback {
			t.Fatalf("source %v, want fallback", r.Source)
		}
		if d.Allowed {
			admitted++
		}
	}
	if admitted != perSecond.Limit {
		t.Fatalf("fallback admitted %d in one window, want %d", admitted, perSecond.Limit)
	}
	// Peek goes to the fallback too.
	out := make([]core.Decision, 1)
	if err := core.Peek(context.Background(), b, "k", []core.Policy{perSecond}, clk.Now(), out); err != nil || out[0].Remaining != 0 {
		t.Fatalf("fallback peek: %+v, %v", out, err)
	}
	f.set(healthy)
	clk.Advance(time.Second)
	var r resilient.Report
	d, err := lim.Allow(resilient.WithReport(context.Background(), &r), "k", perSecond)
	if err != nil || !d.Allowed || r.Source != core.SourcePrimary || b.Stats().State != "closed" {
		t.Fatalf("after recovery: %+v, %v, source %v, state %v", d, err, r.Source, b.Stats().State)
	}
	if s := b.Stats(); s.FallbackChecks != 11 {
		t.Fatalf("FallbackChecks = %d, want 11", s.FallbackChecks)
	}
}

// TestResetWhileDown: Reset clears the fallback and reports that the primary
// was not reached.
func TestResetWhileDown(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	fb := newMem(t)
	b := must.Do(resilient.New(f, resilient.WithFallback(fb)))
	f.set(failing)
	for range 3 {
		if _, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, t0); err != nil {
			t.Fatal(err)
		}
	}
	err := core.NewLimiter(b).Reset(context.Background(), "k", perSecond)
	if !errors.Is(err, resilient.ErrUnavailable) || !strings.Contains(err.Error(), "unavailable: reset: ") || !errors.Is(err, errBroken) {
		t.Fatalf("reset while down: %v", err)
	}
	if d, err := backendtest.CheckOne(context.Background(), fb, "k", perSecond, 3, t0); err != nil || !d.Allowed {
		t.Fatalf("fallback not reset: %+v, %v", d, err)
	}
}

// TestMaxAbandoned: once the bound of abandoned calls is reached, calls fail
// at once without starting another goroutine.
func TestMaxAbandoned(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	f.set(hang)
	b := must.Do(resilient.New(f, resilient.WithBudget(time.Millisecond), resilient.WithMaxAbandoned(2), resilient.WithBreaker(100, time.Second)))
	for range 2 {
		if _, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, t0); !errors.Is(err, resilient.ErrBudgetExceeded) {
			t.Fatal(err)
		}
	}
	for range 5 {
		if _, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, t0); !errors.Is(err, resilient.ErrOverloaded) || !errors.Is(err, resilient.ErrUnavailable) {
			t.Fatalf("beyond the bound: %v", err)
		}
	}
	// An abandoned call counts from the moment it is started, but its
	// goroutine may reach the primary only after the budget: wait for both,
	// then check that the refused calls started none. They are refused
	// before any goroutine starts, so none can arrive later.
	waitFor(t, "the two abandoned calls to reach the primary", func() bool { return f.calls.Load() >= 2 })
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("%d calls started, want 2", n)
	}
	f.unblock()
	waitFor(t, "abandoned calls to finish", func() bool { return b.Stats().Abandoned == 0 })
}

// TestNilPrimaryPanics documents the programming error.
func TestNilPrimaryPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("New(nil) did not panic")
		}
	}()
	must.Do(resilient.New(nil))
}

// panicky is a primary that panics on every call.
type panicky struct{}

func (panicky) Do(context.Context, []core.Item, time.Time, []core.Decision) error {
	panic("bug in the primary")
}

// boundedPanicky is panicky saying it is bounded by its context: the
// wrapper calls it on the caller's goroutine.
type boundedPanicky struct{ panicky }

func (boundedPanicky) Bounded() bool { return true }

// TestPrimaryPanic: a panic in the primary, on the wrapper's own goroutine
// or on the caller's, becomes a failure instead of ending the process.
func TestPrimaryPanic(t *testing.T) {
	t.Parallel()
	for _, p := range []core.Backend{panicky{}, boundedPanicky{}} {
		b := must.Do(resilient.New(p, resilient.WithFailClosed()))
		d, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, t0)
		if err != nil || d.Allowed {
			t.Fatalf("panicking %T, failing closed: %+v, %v", p, d, err)
		}
		err = core.NewLimiter(b).Reset(context.Background(), "k", perSecond)
		if err == nil || !strings.Contains(err.Error(), "primary backend panicked: bug in the primary") || !errors.Is(err, resilient.ErrUnavailable) {
			t.Fatalf("reset on a panicking %T: %v", p, err)
		}
		if s := b.Stats(); s.Failures != 2 {
			t.Fatalf("%T: %d failures counted, want 2", p, s.Failures)
		}
	}
}

// TestShortOut: an out slice shorter than the policies is an error, not a
// panic.
func TestShortOut(t *testing.T) {
	t.Parallel()
	b := must.Do(resilient.New(newMem(t)))
	ps := []core.Policy{perSecond, perMinute}
	if err := core.Check(context.Background(), b, "k", ps, 1, t0, make([]core.Decision, 1)); err == nil {
		t.Fatal("check with a short out succeeded")
	}
	if err := core.Peek(context.Background(), b, "k", ps, t0, nil); err == nil {
		t.Fatal("peek with a short out succeeded")
	}
}

// TestDecisionSource: every decision says what made it, so that an observer
// can tell the primary's "allowed" from the fallback's.
func TestDecisionSource(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	b := must.Do(resilient.New(f, resilient.WithFallback(newMem(t)), resilient.WithBreaker(100, time.Second), resilient.WithDenyCache(0)))
	d, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, t0)
	if err != nil || d.Source != core.SourcePrimary {
		t.Fatalf("healthy: %+v %v", d, err)
	}
	f.set(failing)
	out := make([]core.Decision, 2)
	if err := core.Check(context.Background(), b, "k", []core.Policy{perSecond, perMinute}, 1, t0, out); err != nil || out[0].Source != core.SourceFallback || out[1].Source != core.SourceFallback {
		t.Fatalf("primary failing: %+v %v", out, err)
	}
	f.set(healthy)
	for range 3 { // perSecond allows 3 in a second
		if _, err := backendtest.CheckOne(context.Background(), b, "d", perSecond, 1, t0); err != nil {
			t.Fatal(err)
		}
	}
	if d, _ := backendtest.CheckOne(context.Background(), b, "d", perSecond, 1, t0); d.Allowed || d.Source != core.SourcePrimary {
		t.Fatalf("primary's denial: %+v", d)
	}
	if d, _ := backendtest.CheckOne(context.Background(), b, "d", perSecond, 1, t0); d.Allowed || d.Source != core.SourceDenyCache {
		t.Fatalf("cached denial: %+v", d)
	}
	if core.SourceDenyCache.String() != "deny_cache" || core.SourceFailOpen.String() != "fail_open" {
		t.Fatal("source names are snake case")
	}
}

// TestInvalidOptionsAreAnErrorAtNew: an option out of its range stops New
// with an error naming it, instead of being ignored or clamped; so does a
// nil primary.
func TestInvalidOptionsAreAnErrorAtNew(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]resilient.Option{
		"WithBudget(-1ms)":     resilient.WithBudget(-time.Millisecond),
		"WithBreaker(-1, 0s)":  resilient.WithBreaker(-1, 0),
		"WithBreaker(0, -1s)":  resilient.WithBreaker(0, -time.Second),
		"WithLogger(-1s)":      resilient.WithLogger(nil, -time.Second),
		"WithMaxAbandoned(-1)": resilient.WithMaxAbandoned(-1),
		"WithDenyCache(-1)":    resilient.WithDenyCache(-1),
	} {
		if b, err := resilient.New(newMem(t), opt); err == nil || b != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: New = %v, %v; want an error naming the option", name, b, err)
		}
	}
	if _, err := resilient.New(nil); err == nil {
		t.Error("New(nil) built a Backend")
	}
	// Zero values are the defaults, not errors.
	must.Do(resilient.New(newMem(t), resilient.WithBudget(0), resilient.WithBreaker(0, 0), resilient.WithMaxAbandoned(0), resilient.WithDenyCache(0), resilient.WithLogger(nil, 0)))
}

// TestConcurrencyWhenThePrimaryFails: a concurrency limit follows the
// failure modes. With the primary hung, the fallback counts the slots of
// this instance (the limit per instance) and gives them back; failing
// closed, every acquire is denied.
func TestConcurrencyWhenThePrimaryFails(t *testing.T) {
	t.Parallel()
	slots := core.MustParsePolicy("2;algorithm=concurrency")
	for _, tc := range []struct {
		name string
		opt  resilient.Option
		want []bool
	}{
		{"fallback", resilient.WithFallback(newMem(t)), []bool{true, true, false}},
		{"fail closed", resilient.WithFailClosed(), []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaulty(t)
			f.set(hangCtx)
			clk := core.NewManualClock(t0)
			b := must.Do(resilient.New(f, tc.opt, resilient.WithClock(clk), resilient.WithBudget(time.Millisecond)))
			lim := core.NewLimiter(b, core.WithClock(clk))
			acquire := func() core.Result {
				res, err := lim.Check(context.Background(), "k", []core.Policy{slots}, 1, nil)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			var first core.Result
			for i, want := range tc.want {
				res := acquire()
				if res.Allowed != want {
					t.Fatalf("acquire %d: %+v, want allowed %v", i+1, res, want)
				}
				if i == 0 {
					first = res
				}
			}
			if tc.want[0] {
				release := []core.Item{{Key: "k", Policy: slots, Cost: 1, Op: core.OpRefund, At: first.At}}
				if _, err := lim.Do(context.Background(), release, nil); err != nil {
					t.Fatal(err)
				}
				if res := acquire(); !res.Allowed {
					t.Fatalf("after a release through the fallback: %+v", res)
				}
			}
		})
	}
}

// TestLogRateLimited: an outage writes at most one line per interval, the
// next line counts the suppressed ones, and recovery is always logged.
func TestLogRateLimited(t *testing.T) {
	t.Parallel()
	var buf sink.Log
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	f := newFaulty(t)
	clk := core.NewManualClock(t0)
	b := must.Do(resilient.New(f, resilient.WithClock(clk), resilient.WithFailOpen(),
		resilient.WithBreaker(2, time.Second), resilient.WithLogger(logger, 10*time.Second)))
	ctx := context.Background()
	f.set(failing)
	for range 1000 { // 5 s of outage, a check every 5 ms
		if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now()); err != nil {
			t.Fatal(err)
		}
		clk.Advance(5 * time.Millisecond)
	}
	if got := buf.Lines(); len(got) != 1 || !strings.Contains(got[0], "primary backend failed") {
		t.Fatalf("5 s of outage logged %d lines: %q", len(got), got)
	}
	clk.Advance(5 * time.Second)
	_, _ = backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now()) // a probe that fails
	got := buf.Lines()
	if len(got) != 2 || !strings.Contains(got[1], "suppressed=") {
		t.Fatalf("after the interval: %q", got)
	}
	f.set(healthy)
	clk.Advance(time.Second)
	_, _ = backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now())
	got = buf.Lines()
	if len(got) != 3 || !strings.Contains(got[2], "breaker closed") {
		t.Fatalf("recovery not logged: %q", got)
	}
	if s := b.Stats(); s.LogSuppressed == 0 {
		t.Fatalf("suppressed lines not counted: %+v", s)
	}
	t.Logf("log lines: %q; stats %+v", got, b.Stats())
}

// bounded is a faultyBackend that says, through core.Bounded, whether its
// calls return once their context is done or their wait limit has passed,
// and records the stack of each call: it shows on which goroutine the
// wrapper ran it.
type bounded struct {
	*faultyBackend
	says bool

	mu     sync.Mutex
	stacks []string
}

func (b *bounded) Bounded() bool { return b.says }

func (b *bounded) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	b.mu.Lock()
	b.stacks = append(b.stacks, string(debug.Stack()))
	b.mu.Unlock()
	return b.faultyBackend.Do(ctx, items, now, out)
}

// lastStack is the stack of the most recent call.
func (b *bounded) lastStack() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stacks[len(b.stacks)-1]
}

// callerFrame is a function on the caller's goroutine only: a primary
// call whose stack holds it ran on the caller's goroutine.
//
//go:noinline
func callerFrame(b *resilient.Backend) error {
	return core.Check(context.Background(), b, "k", []core.Policy{perSecond}, 1, t0, make([]core.Decision, 1))
}

// TestBoundedPrimaryRunsOnTheCallersGoroutine: a primary that returns once
// its context is done is called on the caller's goroutine; any other, on a
// goroutine of the wrapper's.
func TestBoundedPrimaryRunsOnTheCallersGoroutine(t *testing.T) {
	t.Parallel()
	for _, says := range []bool{true, false} {
		p := &bounded{faultyBackend: newFaulty(t), says: says}
		b := must.Do(resilient.New(p))
		if err := callerFrame(b); err != nil {
			t.Fatal(err)
		}
		if inline := strings.Contains(p.lastStack(), "resilient_test.callerFrame"); inline != says {
			t.Fatalf("primary saying Bounded %v: called on the caller's goroutine: %v\n%s", says, inline, p.lastStack())
		}
	}
}

// TestBoundedPrimaryBudget: a bounded primary is held to the budget through
// its context alone: a wait limit and no deadline. A call that runs out of
// budget is a timeout, as with a goroutine left behind, but nothing is left
// behind: no abandoned call, no late result, and so never ErrOverloaded.
func TestBoundedPrimaryBudget(t *testing.T) {
	t.Parallel()
	p := &bounded{faultyBackend: newFaulty(t), says: true}
	p.set(hangCtx)
	var ev eventLog
	b := must.Do(resilient.New(p, resilient.WithBudget(5*time.Millisecond), resilient.WithMaxAbandoned(1),
		resilient.WithBreaker(100, time.Second), resilient.WithEvents(ev.add)))
	for i := range 3 {
		_, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, t0)
		if !errors.Is(err, resilient.ErrBudgetExceeded) || !errors.Is(err, resilient.ErrUnavailable) || errors.Is(err, resilient.ErrOverloaded) {
			t.Fatalf("call %d on a primary hanging until its deadline: %v, want ErrBudgetExceeded", i, err)
		}
		// The primary's context has no deadline of its own (-1: none).
		if d := p.lastDeadline(); d >= 0 {
			t.Fatalf("call %d: the primary's context has a deadline %v away", i, d)
		}
	}
	if s := b.Stats(); s.Timeouts != 3 || s.Abandoned != 0 || s.LateResults != 0 || ev.count("late_result") != 0 {
		t.Fatalf("after three timeouts of a bounded primary: %+v", s)
	}
	p.set(healthy)
	if d, err := backendtest.CheckOne(context.Background(), b, "k", perSecond, 1, t0); err != nil || !d.Allowed {
		t.Fatalf("after recovery: %+v, %v", d, err)
	}
}

// TestBoundedPrimaryCallerContext: a caller that gives up (its deadline
// within the budget passes, or it cancels) gets its own context error, and
// the breaker learns nothing from it.
func TestBoundedPrimaryCallerContext(t *testing.T) {
	for _, limited := range []bool{true} {
		p := &bounded{faultyBackend: newFaulty(t), says: true}
		p.set(hangCtx)
		b := must.Do(resilient.New(p, resilient.WithBudget(time.Hour), resilient.WithBreaker(1, time.Second), resilient.WithFailOpen()))
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, t0); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, resilient.ErrUnavailable) {
			t.Fatalf("wait limit %v: caller deadline shorter than the budget: %v", limited, err)
		}
		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(time.Millisecond, cancel)
		if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, t0); !errors.Is(err, context.Canceled) || errors.Is(err, resilient.ErrUnavailable) {
			t.Fatalf("wait limit %v: caller canceled: %v", limited, err)
		}
		if s := b.Stats(); s.Failures != 0 || s.Timeouts != 0 || s.State != "closed" {
			t.Fatalf("wait limit %v: caller's context counted against the primary: %+v", limited, s)
		}
	}
}

// TestCallerDeadlineWithinBudget: a caller whose own deadline comes no
// later than the budget has its context passed on as it is, no timer of
// the wrapper's added (so a check allocates nothing more than the store's);
// a later deadline, or none, still gets the budget's, as a wait limit for a
// bounded primary (the memory store here), with one allocation and the
// caller's context otherwise unchanged.
func TestCallerDeadlineWithinBudget(t *testing.T) {
	rec := &deadlineRecorder{Store: newMem(t)}
	lots := core.Policy{Limit: 1_000_000_000, Window: time.Hour}
	b := must.Do(resilient.New(rec, resilient.WithBudget(time.Hour)))
	within, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if _, err := backendtest.CheckOne(within, b, "k", perSecond, 1, t0); err != nil || rec.ctx != within {
		t.Fatalf("deadline within the budget: %v; the primary got %v, want the caller's context", err, rec.ctx)
	}
	items, out := []core.Item{{Key: "k", Policy: lots, Cost: 1}}, make([]core.Decision, 1)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := b.Do(within, items, t0, out); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per check with the caller's deadline within the budget, want 0", allocs)
	}
	later, cancel2 := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel2()
	for name, ctx := range map[string]context.Context{"a later deadline": later, "no deadline": context.Background()} {
		if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, t0); err != nil || rec.ctx == ctx {
			t.Fatalf("%s: %v; the primary got the caller's context, want the budget's", name, err)
		}
		if own, _ := ctx.Deadline(); rec.deadline != own {
			t.Fatalf("%s: the primary's deadline is %v, want the caller's own (%v)", name, rec.deadline, own)
		}
		if left := time.Until(rec.limit); left <= 59*time.Minute || left > time.Hour {
			t.Fatalf("%s: the call ends %v from now, want the budget's hour", name, left)
		}
	}
	allocs = testing.AllocsPerRun(1000, func() {
		if err := b.Do(context.Background(), items, t0, out); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations per check with a wait limit, want at most 1", allocs)
	}
}

// deadlineRecorder is the memory store (bounded), recording the context,
// the deadline and the wait limit of its last call.
type deadlineRecorder struct {
	*memstore.Store
	ctx             context.Context
	deadline, limit time.Time
}

func (r *deadlineRecorder) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	r.ctx = ctx
	r.deadline, _ = ctx.Deadline()
	r.limit, _ = core.WaitLimit(ctx)
	return r.Store.Do(ctx, items, now, out)
}

// TestBackendBoundedByContext: the wrapper is bounded whatever its primary
// does; with a fallback, as bounded as the fallback.
func TestBackendBoundedByContext(t *testing.T) {
	t.Parallel()
	unbounded := &bounded{faultyBackend: newFaulty(t)}
	for _, c := range []struct {
		name string
		b    *resilient.Backend
		want bool
	}{
		{"unbounded primary", must.Do(resilient.New(unbounded)), true},
		{"memory fallback", must.Do(resilient.New(unbounded, resilient.WithFallback(newMem(t)))), true},
		{"unbounded fallback", must.Do(resilient.New(newMem(t), resilient.WithFallback(unbounded))), false},
	} {
		if got := isBounded(c.b); got != c.want {
			t.Errorf("%s: bounded %v, want %v", c.name, got, c.want)
		}
	}
	if !isBounded(newMem(t)) {
		t.Error("the memory store is not bounded")
	}
}

// TestCallerWaitLimit: a wait limit on the caller's context that comes
// before the end of the budget is a tighter budget for that call: a primary
// still silent then has run out of time, so the failure mode answers, and
// the breaker counts a timeout. A caller's limit later than the budget
// changes nothing.
func TestCallerWaitLimit(t *testing.T) {
	for _, limited := range []bool{true} {
		p := &bounded{faultyBackend: newFaulty(t), says: true}
		p.set(hangCtx)
		b := must.Do(resilient.New(p, resilient.WithBudget(time.Hour), resilient.WithBreaker(100, time.Second), resilient.WithFailOpen()))
		start := time.Now()
		ctx := core.WithWaitLimit(context.Background(), start.Add(20*time.Millisecond))
		d, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, t0)
		if err != nil || !d.Allowed || d.Source != core.SourceFailOpen {
			t.Fatalf("wait limit %v: a primary silent past the caller's wait limit: %+v, %v; want the fail-open answer", limited, d, err)
		}
		if took := time.Since(start); took < 20*time.Millisecond || took > 10*time.Second {
			t.Fatalf("wait limit %v: answered after %v, want at the caller's 20 ms", limited, took)
		}
		if s := b.Stats(); s.Timeouts != 1 || s.Failures != 1 {
			t.Fatalf("wait limit %v: %+v, want one timeout counted", limited, s)
		}
	}
	p := &bounded{faultyBackend: newFaulty(t), says: true}
	p.set(hangCtx)
	b := must.Do(resilient.New(p, resilient.WithBudget(20*time.Millisecond), resilient.WithFailOpen()))
	start := time.Now()
	if d, err := backendtest.CheckOne(core.WithWaitLimit(context.Background(), start.Add(time.Hour)), b, "k", perSecond, 1, t0); err != nil || d.Source != core.SourceFailOpen {
		t.Fatalf("a caller's wait limit past the budget: %+v, %v", d, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("a caller's wait limit past the budget: answered after %v, want the budget's 20 ms", took)
	}
}

// isBounded reports whether b is a core.Bounded that says yes.
func isBounded(b core.Backend) bool {
	bb, ok := b.(core.Bounded)
	return ok && bb.Bounded()
}
