package resilient_test

import (
	"context"
	"errors"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

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
