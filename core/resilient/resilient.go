package resilient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/opt"
)

// Backend is a core.Backend that wraps a primary backend with a latency
// budget, a circuit breaker, a failure mode and an optional deny cache. It
// is safe for concurrent use and keeps no goroutine; create it with New.
type Backend struct {
	primary      core.Backend
	fallback     core.Backend
	mode         mode
	budget       time.Duration
	clock        core.Clock
	onEvent      func(PrimaryEvent)
	maxAbandoned int64
	inline       bool // the primary is core.Bounded: call it on the caller's goroutine, bounded by a wait limit

	br        breaker
	deny      *denyCache // nil when off
	log       logThrottle
	abandoned atomic.Int64
	stats     counters
}

// counters are the cumulative Stats.
type counters struct {
	primaryCalls, failures, timeouts, shortCircuits, opens, probes atomic.Uint64
	failedOpen, failedClosed, fallback, denyHits, lateResults      atomic.Uint64
}

var (
	_ core.Backend = (*Backend)(nil)
	_ core.Bounded = (*Backend)(nil)
)

// Bounded implements core.Bounded: a call returns at its budget, when its
// context is done or at its wait limit, whatever the primary does.
func (b *Backend) Bounded() bool { return b.fallback == nil || bounded(b.fallback) }

// New returns a Backend over primary. Without options it gives the primary
// a 50 ms budget per call, opens its breaker after 5 consecutive failures,
// probes once a second, and answers checks the primary cannot answer with
// an error matching ErrUnavailable. It fails for a nil primary or an
// option out of its range.
func New(primary core.Backend, opts ...Option) (*Backend, error) {
	if primary == nil {
		return nil, errors.New("resilient: New called with a nil primary Backend")
	}
	cfg := defaults()
	opt.Apply(&cfg, opts)
	if cfg.Err != nil {
		return nil, cfg.Err
	}
	b := &Backend{
		primary:      primary,
		fallback:     cfg.fallback,
		mode:         cfg.mode,
		budget:       cfg.budget,
		clock:        cfg.clock,
		onEvent:      cfg.onEvent,
		maxAbandoned: int64(cfg.maxAbandoned),
		br:           breaker{threshold: int64(cfg.threshold), cooldown: cfg.cooldown},
		log:          logThrottle{l: cfg.logger, every: cfg.logEvery},
	}
	b.inline = bounded(primary)
	if cfg.denyCache > 0 {
		b.deny = newDenyCache(cfg.denyCache)
	}
	return b, nil
}

// Do decides a batch as core.Backend requires; invalid arguments yield the
// core's typed errors. A consuming batch the primary cannot answer (or the
// deny cache denies) is answered by the failure mode, or fails with an
// error matching ErrUnavailable without one. A peek the primary cannot
// answer goes to the fallback, if any, else fails the same way.
func (b *Backend) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	if err := core.ValidateItems(items); err != nil {
		return err
	}
	if len(out) < len(items) {
		return fmt.Errorf("resilient: out has %d elements for %d items", len(out), len(items))
	}
	out = out[:len(items)]
	switch items[0].Op {
	case core.OpPeek:
		return b.peek(ctx, items, now, out, "peek")
	case core.OpRefund, core.OpCharge, core.OpReset:
		if b.deny != nil {
			for i := range items { // a refund or reset may end a cached denial early
				b.deny.forget(items[i].Key, items[i].Policy)
			}
		}
		if items[0].Op == core.OpReset {
			return b.reset(ctx, items, now, out)
		}
		return b.peek(ctx, items, now, out, "adjust")
	}
	return b.check(ctx, items, now, out)
}

func (b *Backend) check(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	cached := b.deny != nil && cacheable(items)
	if cached && b.deny.answer(items, now, out) {
		b.stats.denyHits.Add(1)
		answered(ctx, out, core.SourceDenyCache, nil)
		return nil
	}
	probe, cause := b.admit("check")
	if cause == nil {
		res, err := b.callPrimary(ctx, "check", items, now, out)
		if cause = b.settle("check", probe, res, err); cause == nil {
			if err != nil {
				return err // the caller's own error
			}
			if cached {
				b.deny.record(items, now, out)
			}
			return nil
		}
	}
	return b.degrade(ctx, items, now, out, cause)
}

// cacheable reports whether the deny cache can answer items: a check of one
// key under one or more policies, at one cost.
func cacheable(items []core.Item) bool {
	for i := 1; i < len(items); i++ {
		if items[i].Key != items[0].Key || items[i].Cost != items[0].Cost {
			return false
		}
	}
	return true
}

// peek runs a peek, or a refund or charge ("adjust"), on the primary, and
// on the fallback when the primary cannot answer.
func (b *Backend) peek(ctx context.Context, items []core.Item, now time.Time, out []core.Decision, o string) error {
	probe, cause := b.admit(o)
	if cause == nil {
		res, err := b.callPrimary(ctx, o, items, now, out)
		if cause = b.settle(o, probe, res, err); cause == nil {
			return err
		}
	}
	return b.viaFallback(ctx, o, out, cause, func() error { return b.fallback.Do(ctx, items, now, out) })
}

// reset forgets the items' states in the fallback and, within the budget,
// the primary; when the primary cannot be reached it fails with
// ErrUnavailable and the primary keeps its state.
func (b *Backend) reset(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	var ferr error
	if b.fallback != nil {
		ferr = b.fallback.Do(ctx, items, now, out)
	}
	clear(out)
	probe, cause := b.admit("reset")
	if cause == nil {
		res, err := b.callPrimary(ctx, "reset", items, now, out)
		if cause = b.settle("reset", probe, res, err); cause == nil {
			if err == nil && ferr != nil {
				return &unavailableError{Op: "reset", Cause: ferr}
			}
			return err
		}
	}
	return &unavailableError{Op: "reset", Cause: cause, Fallback: ferr}
}

// admit asks the breaker whether an operation may call the primary. It
// returns the cause to report when it may not.
func (b *Backend) admit(o string) (probe bool, cause error) {
	now := b.clock.Now()
	call, probe, t := b.br.allow(now)
	b.note(o, t, now)
	if !call {
		b.stats.shortCircuits.Add(1)
		return false, ErrCircuitOpen
	}
	if probe {
		b.stats.probes.Add(1)
	}
	return probe, nil
}

// settle updates the breaker with how a primary call ended. It returns the
// cause of a failure, or nil when the primary answered or the error is the
// caller's own.
func (b *Backend) settle(o string, probe bool, res result, err error) error {
	switch res {
	case resOK:
		if t := b.br.success(probe); t.ok {
			b.note(o, t, b.clock.Now())
		}
		return nil
	case resCaller:
		if t := b.br.abort(probe, b.clock.Now()); t.ok {
			b.note(o, t, b.clock.Now())
		}
		return nil
	case resTimeout:
		b.stats.timeouts.Add(1)
	}
	if err == ErrOverloaded {
		b.stats.shortCircuits.Add(1)
	}
	now := b.clock.Now()
	b.stats.failures.Add(1)
	t := b.br.failure(probe, now)
	b.emit(PrimaryEvent{Kind: "failure", Op: o, Err: err, Time: now})
	b.log.log(now, false, slog.LevelWarn, "ratelimit: primary backend failed",
		slog.String("op", o), slog.Any("error", err), slog.String("breaker", breakerState(b.br.state.Load()).String()))
	b.note(o, t, now)
	return err
}

// note reports a breaker transition.
func (b *Backend) note(o string, t transition, now time.Time) {
	if !t.ok {
		return
	}
	if t.to == breakerOpen && t.from == breakerClosed {
		b.stats.opens.Add(1)
	}
	b.emit(PrimaryEvent{Kind: "state_change", Op: o, From: t.from.String(), To: t.to.String(), Time: now})
	level := slog.LevelWarn
	if t.to == breakerClosed {
		level = slog.LevelInfo
	}
	b.log.log(now, t.to == breakerClosed, level, "ratelimit: primary backend breaker "+t.to.String(),
		slog.String("from", t.from.String()))
}

func (b *Backend) emit(e PrimaryEvent) {
	if b.onEvent != nil {
		b.onEvent(e)
	}
}

// degrade decides a consuming batch the primary could not as the failure
// mode says: admitted, denied until the next probe, or by the fallback.
func (b *Backend) degrade(ctx context.Context, items []core.Item, now time.Time, out []core.Decision, cause error) error {
	switch b.mode {
	case modeOpen:
		for i := range out {
			out[i] = core.Decision{Allowed: true, Limit: items[i].Policy.Limit}
		}
		b.stats.failedOpen.Add(1)
		answered(ctx, out, core.SourceFailOpen, cause)
		return nil
	case modeClosed:
		wait := b.br.retryIn(b.clock.Now())
		wait = (wait + time.Microsecond - 1).Truncate(time.Microsecond)
		for i := range out {
			out[i] = core.Decision{Limit: items[i].Policy.Limit, RetryAfter: wait, ResetAfter: wait}
		}
		b.stats.failedClosed.Add(1)
		answered(ctx, out, core.SourceFailClosed, cause)
		return nil
	}
	return b.viaFallback(ctx, "check", out, cause, func() error { return b.fallback.Do(ctx, items, now, out) })
}

// viaFallback answers an operation the primary could not with the fallback,
// through try, when the failure mode has one; otherwise, or when the
// fallback fails too, it returns the error matching ErrUnavailable (an
// error that is the caller's own passes unchanged).
func (b *Backend) viaFallback(ctx context.Context, op string, out []core.Decision, cause error, try func() error) error {
	if b.mode != modeFallback {
		report(ctx, sourceNone, cause)
		return &unavailableError{Op: op, Cause: cause}
	}
	err := try()
	if err == nil {
		b.stats.fallback.Add(1)
		answered(ctx, out, core.SourceFallback, cause)
		return nil
	}
	if callerError(err) {
		return err
	}
	report(ctx, sourceNone, cause)
	return &unavailableError{Op: op, Cause: cause, Fallback: err}
}

// Stats returns the wrapper's counters. The counts are read one by one, not
// as one atomic snapshot.
func (b *Backend) Stats() Stats {
	s := &b.stats
	return Stats{
		State:          breakerState(b.br.state.Load()).String(),
		PrimaryCalls:   s.primaryCalls.Load(),
		Failures:       s.failures.Load(),
		Timeouts:       s.timeouts.Load(),
		ShortCircuits:  s.shortCircuits.Load(),
		Opens:          s.opens.Load(),
		Probes:         s.probes.Load(),
		FailedOpen:     s.failedOpen.Load(),
		FailedClosed:   s.failedClosed.Load(),
		FallbackChecks: s.fallback.Load(),
		DenyCacheHits:  s.denyHits.Load(),
		Abandoned:      b.abandoned.Load(),
		LateResults:    s.lateResults.Load(),
		LogSuppressed:  b.log.total.Load(),
	}
}

// bounded reports whether b is a core.Bounded that says yes.
func bounded(b core.Backend) bool {
	bb, ok := b.(core.Bounded)
	return ok && bb.Bounded()
}
