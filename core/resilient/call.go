package resilient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// Call states: a call is running until its goroutine finishes (done) or its
// caller gives up (abandoned); the loser of that race leaves the call to
// the other side.
const (
	callRunning uint32 = iota
	callDone
	callAbandoned
)

// call is one primary operation run on its own goroutine, owning copies of
// what the primary reads or writes, so that a late result never lands in
// the caller's memory. Exactly one side returns it to the pool.
type call struct {
	b     *Backend
	op    string // "check", "peek", "adjust" or "reset"
	ctx   context.Context
	items []core.Item
	now   time.Time
	out   []core.Decision
	err   error
	state atomic.Uint32
	done  chan struct{} // buffered; receives once when the goroutine finishes first
}

var callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

// run executes the call on the primary; it is the goroutine's body.
func (c *call) run() {
	b := c.b
	c.invoke()
	if c.state.CompareAndSwap(callRunning, callDone) {
		c.done <- struct{}{}
		return
	}
	// The caller gave up at the budget: the result is discarded. It is
	// counted and reported before the call stops counting as abandoned, so
	// that whoever sees Stats.Abandoned fall also sees its LateResults.
	b.stats.lateResults.Add(1)
	b.emit(PrimaryEvent{Kind: "late_result", Op: c.op, Err: c.err, Time: b.clock.Now()})
	b.abandoned.Add(-1)
	c.recycle()
}

// invoke calls the primary with the call's arguments.
func (c *call) invoke() {
	c.err = c.b.invoke(c.ctx, c.items, c.now, c.out)
}

// invoke runs items on the primary, turning a panic into an error.
func (b *Backend) invoke(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("resilient: primary backend panicked: %v", r)
		}
	}()
	return b.primary.Do(ctx, items, now, out)
}

// recycle clears the call and returns it to the pool.
func (c *call) recycle() {
	out, items := c.out[:0], c.items[:0]
	clear(c.out)
	clear(c.items)
	done := c.done
	*c = call{out: out, items: items, done: done}
	callPool.Put(c)
}

// result classifies how a primary call ended.
type result uint8

const (
	// resOK: the primary answered.
	resOK result = iota
	// resCaller: the call ended for the caller's reasons (its context ended,
	// or its arguments were invalid); nothing is known about the primary.
	resCaller
	// resFailed: the primary returned an error, or could not be called.
	resFailed
	// resTimeout: the primary did not answer within the budget.
	resTimeout
)

// callPrimary runs o on the primary within the budget, copying the
// decisions into out on success. The error is the primary's own,
// ErrBudgetExceeded, ErrOverloaded, or the caller's context error.
func (b *Backend) callPrimary(ctx context.Context, o string, items []core.Item, now time.Time, out []core.Decision) (result, error) {
	if b.abandoned.Load() >= b.maxAbandoned {
		return resFailed, ErrOverloaded
	}
	b.stats.primaryCalls.Add(1)
	// The call ends at the caller's deadline when it comes within the
	// budget, at the budget otherwise, or sooner at the caller's wait limit.
	cctx := ctx
	start := time.Now()
	end, own := ctx.Deadline()
	if !own || end.Sub(start) > b.budget {
		end, own = start.Add(b.budget), false
	}
	if limit, ok := core.WaitLimit(ctx); ok && limit.Before(end) {
		end, own = limit, false
	}
	if !own {
		if b.inline {
			// The primary stops waiting at the limit (core.Bounded): no
			// timer and no context of our own per call.
			cctx = core.WithWaitLimit(ctx, end)
		} else {
			var cancel context.CancelFunc
			cctx, cancel = context.WithDeadline(ctx, end)
			defer cancel()
		}
	}
	if b.inline {
		// A core.Bounded primary returns once cctx is done or its wait
		// limit has passed, and never writes out after returning.
		err := b.invoke(cctx, items, now, out)
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(end) {
			return resTimeout, ErrBudgetExceeded // as when a call's goroutine is left behind
		}
		return classify(ctx, end, err)
	}

	c := callPool.Get().(*call)
	c.b, c.op, c.ctx, c.now = b, o, cctx, now
	c.items = append(c.items[:0], items...)
	if n := len(items); cap(c.out) >= n {
		c.out = c.out[:n]
	} else {
		c.out = make([]core.Decision, n)
	}
	go c.run()

	select {
	case <-c.done:
	case <-cctx.Done():
		if c.state.CompareAndSwap(callRunning, callAbandoned) {
			b.abandoned.Add(1)
			if err := ctx.Err(); err != nil {
				return resCaller, err
			}
			return resTimeout, ErrBudgetExceeded
		}
		<-c.done // finished just in time
	}
	err := c.err
	if err == nil {
		copy(out, c.out)
	}
	c.recycle()
	return classify(ctx, end, err)
}

// classify says how a primary call that returned err ended; ctx is the
// caller's context, and end the call's: the budget's, or ctx's own deadline
// when it came first.
func classify(ctx context.Context, end time.Time, err error) (result, error) {
	switch {
	case err == nil:
		return resOK, nil
	case callerError(err):
		return resCaller, err
	case ctx.Err() != nil:
		// The primary gave up because the caller did.
		return resCaller, ctx.Err()
	case !time.Now().Before(end):
		// The primary returned at the deadline, maybe a moment before the
		// context's own timer fired.
		return resTimeout, fmt.Errorf("%w: %w", ErrBudgetExceeded, err)
	}
	return resFailed, err
}
