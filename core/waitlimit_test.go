package core_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

type ctxKey struct{}

// TestWaitLimit: a context carries the earliest wait limit given to it, and
// is otherwise its parent: its values, its deadline, its end, and the
// cancellation its own children inherit, without a goroutine to watch it.
func TestWaitLimit(t *testing.T) {
	if _, ok := core.WaitLimit(context.Background()); ok {
		t.Fatal("a wait limit on context.Background")
	}
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), ctxKey{}, "v"), time.Now().Add(time.Hour))
	defer cancel()
	t1 := time.Now().Add(time.Second)
	ctx := core.WithWaitLimit(parent, t1)
	if got, ok := core.WaitLimit(ctx); !ok || !got.Equal(t1) {
		t.Fatalf("WaitLimit: %v %v, want %v", got, ok, t1)
	}
	if later := core.WithWaitLimit(ctx, t1.Add(time.Second)); later != ctx {
		t.Fatal("a later wait limit replaced an earlier one")
	}
	t0 := t1.Add(-time.Millisecond)
	if got, _ := core.WaitLimit(core.WithWaitLimit(ctx, t0)); !got.Equal(t0) {
		t.Fatalf("an earlier wait limit: %v, want %v", got, t0)
	}
	if ctx.Value(ctxKey{}) != "v" {
		t.Fatal("the parent's value is lost")
	}
	if dl, ok := ctx.Deadline(); !ok || dl != func() time.Time { d, _ := parent.Deadline(); return d }() {
		t.Fatal("the parent's deadline is lost")
	}
	if ctx.Done() != parent.Done() || ctx.Err() != nil {
		t.Fatal("not the parent's end")
	}
	before := runtime.NumGoroutine()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	if n := runtime.NumGoroutine(); n != before {
		t.Fatalf("%d goroutines after deriving a child, %d before: the parent's cancellation is watched by a goroutine", n, before)
	}
	cancel()
	<-child.Done()
	if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("after the parent's cancel: %v, %v", ctx.Err(), child.Err())
	}
}

// unbounded hides the store's Bounded method.
type unbounded struct{ core.Backend }

// saysNo is a backend whose Bounded method says no.
type saysNo struct{ core.Backend }

func (saysNo) Bounded() bool { return false }

// isBounded reports whether b is a core.Bounded that says yes.
func isBounded(b core.Backend) bool {
	bb, ok := b.(core.Bounded)
	return ok && bb.Bounded()
}

// TestBounded: a backend is bounded only when it implements core.Bounded
// and says yes.
func TestBounded(t *testing.T) {
	t.Parallel()
	if !isBounded(must.Do(memstore.New())) {
		t.Error("the memory store is not bounded")
	}
	if isBounded(unbounded{must.Do(memstore.New())}) || isBounded(saysNo{must.Do(memstore.New())}) {
		t.Error("a backend that does not say so is bounded")
	}
}
