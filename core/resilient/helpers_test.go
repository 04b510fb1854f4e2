package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newMem returns a memory store.
func newMem(testing.TB) *memstore.Store { return must.Do(memstore.New()) }

// fault is what a faultyBackend does instead of answering.
type fault uint8

const (
	healthy   fault = iota
	failing         // returns errBroken at once
	hang            // blocks until released, ignoring its context
	hangCtx         // blocks until its context ends, or its wait limit passes (core.WithWaitLimit), and returns the error
	callerErr       // returns a typed core validation error
)

var errBroken = errors.New("connection refused")

// faultyBackend is a primary whose behaviour a test switches at will. When
// healthy it delegates to a memory store. It records every call.
type faultyBackend struct {
	inner   core.Backend
	fault   atomic.Uint32
	calls   atomic.Int64
	entered chan struct{} // receives when a call starts hanging, if non-nil

	mu        sync.Mutex
	release   chan struct{}
	deadlines []time.Duration // time left on each call's context
}

func newFaulty(t testing.TB) *faultyBackend {
	f := &faultyBackend{inner: newMem(t), release: make(chan struct{})}
	t.Cleanup(f.unblock)
	return f
}

func (f *faultyBackend) set(x fault) { f.fault.Store(uint32(x)) }

// lastDeadline is the time that was left on the most recent call's context
// when it started, -1 for a context without a deadline.
func (f *faultyBackend) lastDeadline() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deadlines[len(f.deadlines)-1]
}

// unblock releases every hanging call, now and later, until set is called
// with hang again after reblock.
func (f *faultyBackend) unblock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.release:
	default:
		close(f.release)
	}
}

func (f *faultyBackend) reblock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.release = make(chan struct{})
}

func (f *faultyBackend) before(ctx context.Context) error {
	f.calls.Add(1)
	f.mu.Lock()
	if dl, ok := ctx.Deadline(); ok {
		f.deadlines = append(f.deadlines, time.Until(dl))
	} else {
		f.deadlines = append(f.deadlines, -1)
	}
	release := f.release
	f.mu.Unlock()
	switch fault(f.fault.Load()) {
	case failing:
		return errBroken
	case hang:
		if f.entered != nil {
			f.entered <- struct{}{}
		}
		<-release
		return errBroken
	case hangCtx:
		var expired <-chan time.Time // nil, which never fires, without a wait limit
		if limit, ok := core.WaitLimit(ctx); ok {
			t := time.NewTimer(time.Until(limit))
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-expired:
			return context.DeadlineExceeded
		}
	case callerErr:
		return fmt.Errorf("%w: rejected by the primary", core.ErrInvalidKey)
	}
	return nil
}

func (f *faultyBackend) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	if err := f.before(ctx); err != nil {
		return err
	}
	return f.inner.Do(ctx, items, now, out)
}

// eventLog collects the events of a Backend.
type eventLog struct {
	mu sync.Mutex
	ev []resilient.PrimaryEvent
}

func (l *eventLog) add(e resilient.PrimaryEvent) {
	l.mu.Lock()
	l.ev = append(l.ev, e)
	l.mu.Unlock()
}

// transitions lists the breaker's state changes as "from>to".
func (l *eventLog) transitions() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s []string
	for _, e := range l.ev {
		if e.Kind == "state_change" {
			s = append(s, e.From+">"+e.To)
		}
	}
	return s
}

func (l *eventLog) count(k string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.ev {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds or a generous deadline passes; it is for
// goroutines finishing in the background, never for time to pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
