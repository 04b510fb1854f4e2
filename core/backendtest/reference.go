package backendtest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/algo"
)

// reference is the model backend: one mutex, one plain map, and the pure
// functions of core/algo called as documented. It never expires anything,
// so it is for tests only. It is safe for concurrent use.
type reference struct {
	mu     sync.Mutex
	states map[stateKey]any // algo.FixedWindowState, algo.SlidingWindowState, *algo.Log, algo.TokenBucketState, algo.GCRAState, algo.LeakyBucketState
}

// stateKey identifies one key's state under one policy identity
// (core.Identity): a named policy whose limit or burst changed finds the
// same state.
type stateKey struct {
	key    string
	policy core.Identity
}

var _ core.Backend = (*reference)(nil)

// NewReference returns an empty Reference as a core.Backend, the model that
// differential tests compare other backends with.
func NewReference() core.Backend { return new(reference) }

// Do implements core.Backend.
func (r *reference) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	return r.decide(ctx, items, now, out)
}

// decide evaluates every item on the stored states and, for an admitted
// batch, stores all new states; a denied batch or a peek stores nothing.
func (r *reference) decide(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := core.ValidateItems(items); err != nil {
		return err
	}
	if len(out) < len(items) {
		return fmt.Errorf("backendtest: out has %d elements for %d items", len(out), len(items))
	}
	if items[0].Op == core.OpReset {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i := range items {
			delete(r.states, stateKey{items[i].Key, items[i].Policy.Identity()}) // a no-op on a nil map
		}
		clear(out[:len(items)])
		return nil
	}
	params := make([]core.Params, len(items))
	keys := make([]stateKey, len(items))
	for i := range items {
		params[i], _ = items[i].Policy.Params() // validated above
		keys[i] = stateKey{items[i].Key, items[i].Policy.Identity()}
	}
	us := now.UnixMicro()

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.states == nil {
		r.states = make(map[stateKey]any)
	}
	if op := items[0].Op; op == core.OpRefund || op == core.OpCharge {
		done := make(map[stateKey]bool, len(items))
		for i := range items {
			if done[keys[i]] {
				continue
			}
			done[keys[i]] = true
			units, at := int64(items[i].Cost), us
			if op == core.OpRefund {
				units = -units
			}
			if !items[i].At.IsZero() {
				at = items[i].At.UnixMicro()
			}
			r.adjust(&params[i], keys[i], units, at, us)
		}
	}
	if items[0].Op != core.OpConsume {
		for i := range items {
			stand, _ := r.eval(&params[i], keys[i], 0, us)
			one, _ := r.eval(&params[i], keys[i], 1, us)
			var d core.Decision
			one.Fill(&d, &items[i].Policy) // whether a cost of 1 fits, and when
			d.Remaining, d.ResetAfter, d.Delay = int(stand.Remaining), time.Duration(stand.ResetAfter)*time.Microsecond, 0
			out[i] = d
		}
		return nil
	}
	commits := make([]func(), len(items))
	allowed := true
	for i := range items {
		o, commit := r.eval(&params[i], keys[i], int64(items[i].Cost), us)
		o.Fill(&out[i], &items[i].Policy)
		commits[i] = commit
		allowed = allowed && o.Allowed
	}
	if allowed {
		// A state shared by several items of the batch (the same key and
		// policy twice, or one identity) consumes once, with the first.
		done := make(map[stateKey]bool, len(items))
		for i, c := range commits {
			if !done[keys[i]] {
				done[keys[i]] = true
				c()
			}
		}
		return nil
	}
	// Denied: items that had room report the state as it stands.
	for i := range items {
		if out[i].Allowed {
			stand, _ := r.eval(&params[i], keys[i], 0, us)
			stand.Fill(&out[i], &items[i].Policy)
			out[i].Delay = 0
		}
	}
	return nil
}

// adjust applies a refund (units < 0) or a charge with algo.Adjust. r.mu is held.
func (r *reference) adjust(p *core.Params, k stateKey, units, at, now int64) {
	switch p.Algorithm {
	case core.FixedWindow:
		adjustValue[algo.FixedWindowState](r, k, p, units, at, now)
	case core.SlidingWindow:
		adjustValue[algo.SlidingWindowState](r, k, p, units, at, now)
	case core.SlidingLog:
		l, _ := r.states[k].(*algo.Log)
		if l == nil {
			l = new(algo.Log)
		}
		algo.Adjust(p, l, units, at, now)
		r.states[k] = l
	case core.TokenBucket:
		adjustValue[algo.TokenBucketState](r, k, p, units, at, now)
	case core.GCRA:
		adjustValue[algo.GCRAState](r, k, p, units, at, now)
	case core.LeakyBucket:
		adjustValue[algo.LeakyBucketState](r, k, p, units, at, now)
	}
}

// eval runs the policy's algorithm on the stored state and returns the
// outcome and a function that stores the new state. r.mu is held.
func (r *reference) eval(p *core.Params, k stateKey, cost, now int64) (algo.Answer, func()) {
	switch p.Algorithm {
	case core.FixedWindow:
		return evalValue(r, k, algo.FixedWindow, p, cost, now)
	case core.SlidingWindow:
		return evalValue(r, k, algo.SlidingWindow, p, cost, now)
	case core.SlidingLog:
		l, _ := r.states[k].(*algo.Log)
		if l == nil {
			l = new(algo.Log)
		}
		o, ts := algo.SlidingLog(p, l, cost, now)
		return o, func() {
			algo.CommitSlidingLog(p, l, cost, ts, now)
			r.states[k] = l
		}
	case core.TokenBucket:
		return evalValue(r, k, algo.TokenBucket, p, cost, now)
	case core.GCRA:
		return evalValue(r, k, algo.GCRA, p, cost, now)
	case core.LeakyBucket:
		return evalValue(r, k, algo.LeakyBucket, p, cost, now)
	}
	panic("backendtest: unreachable algorithm " + string(p.Algorithm)) // Params resolves to one of the six
}

// evalValue is eval for an algorithm whose state is a value.
func evalValue[S any](r *reference, k stateKey, fn func(*core.Params, S, int64, int64) (algo.Answer, S), p *core.Params, cost, now int64) (algo.Answer, func()) {
	s, _ := r.states[k].(S)
	o, next := fn(p, s, cost, now)
	return o, func() { r.states[k] = next }
}

// adjustValue is adjust for an algorithm whose state is a value.
func adjustValue[S any](r *reference, k stateKey, p *core.Params, units, at, now int64) {
	s, _ := r.states[k].(S)
	r.states[k] = algo.Adjust(p, s, units, at, now)
}

// CheckOne is core.Check of one policy, returning its decision: a shorthand
// for tests of a backend.
func CheckOne(ctx context.Context, b core.Backend, key string, p core.Policy, cost int, now time.Time) (core.Decision, error) {
	var out [1]core.Decision
	err := core.Check(ctx, b, key, []core.Policy{p}, cost, now, out[:])
	return out[0], err
}
