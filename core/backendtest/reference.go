package backendtest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/algo"
)

// Reference is the model backend: one mutex, one plain map, and the pure
// functions of core/algo called exactly as their documentation says. It never
// expires anything (a stale state means the same as an absent one for a clock
// that moves forward), so it is meant for tests, not for production.
//
// The zero value is an empty Reference, ready to use; NewReference returns
// one as a core.Backend. A Reference is safe for concurrent use.
type Reference struct {
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

var _ core.Backend = (*Reference)(nil)

// NewReference returns an empty Reference as a core.Backend, the model that
// differential tests compare other backends with.
func NewReference() core.Backend {
	return new(Reference)
}

// Check implements core.Backend.
func (r *Reference) Check(ctx context.Context, key string, policies []core.Policy, cost int, now time.Time, out []core.Decision) error {
	return r.decide(ctx, key, policies, cost, now, out, false)
}

// Peek implements core.Backend.
func (r *Reference) Peek(ctx context.Context, key string, policies []core.Policy, now time.Time, out []core.Decision) error {
	return r.decide(ctx, key, policies, 0, now, out, true)
}

// Reset implements core.Backend.
func (r *Reference) Reset(ctx context.Context, key string, policies []core.Policy) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := core.ValidateCheck(key, policies, 0, true); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range policies {
		delete(r.states, stateKey{key, p.Identity()}) // a no-op on a nil map
	}
	return nil
}

// decide evaluates every policy on the stored states and, for an admitted
// check, stores all new states; a denied check or a peek stores nothing.
func (r *Reference) decide(ctx context.Context, key string, policies []core.Policy, cost int, now time.Time, out []core.Decision, peek bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := core.ValidateCheck(key, policies, cost, peek); err != nil {
		return err
	}
	if len(out) < len(policies) {
		return fmt.Errorf("backendtest: out has %d elements for %d policies", len(out), len(policies))
	}
	params := make([]core.Params, len(policies))
	for i, p := range policies {
		params[i], _ = p.Params() // validated above
	}
	us := now.UnixMicro()

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.states == nil {
		r.states = make(map[stateKey]any)
	}
	if peek {
		for i, p := range policies {
			stand, _ := r.eval(&params[i], stateKey{key, p.Identity()}, 0, us)
			one, _ := r.eval(&params[i], stateKey{key, p.Identity()}, 1, us)
			d := stand.Decision(p)
			d.Allowed, d.RetryAfter, d.Delay = one.Allowed, time.Duration(one.RetryAfter())*time.Microsecond, 0
			out[i] = d
		}
		return nil
	}
	commits := make([]func(), len(policies))
	allowed := true
	for i, p := range policies {
		o, commit := r.eval(&params[i], stateKey{key, p.Identity()}, int64(cost), us)
		out[i], commits[i] = o.Decision(p), commit
		allowed = allowed && o.Allowed
	}
	if allowed {
		// A state shared by several policies of the check (the same policy
		// twice, or one identity) consumes once, with the first of them.
		done := make(map[core.Identity]bool, len(policies))
		for i, c := range commits {
			if id := policies[i].Identity(); !done[id] {
				done[id] = true
				c()
			}
		}
		return nil
	}
	// Denied: policies that had room report the state as it stands.
	for i, p := range policies {
		if out[i].Allowed {
			stand, _ := r.eval(&params[i], stateKey{key, p.Identity()}, 0, us)
			out[i] = stand.Decision(p)
			out[i].Delay = 0
		}
	}
	return nil
}

// eval runs the policy's algorithm on the stored state and returns the
// outcome and a function that stores the new state. r.mu is held.
func (r *Reference) eval(p *core.Params, k stateKey, cost, now int64) (algo.Answer, func()) {
	st := r.states[k]
	switch p.Algorithm {
	case core.FixedWindow:
		s, _ := st.(algo.FixedWindowState)
		o, next := algo.FixedWindow(p, s, cost, now)
		return o, func() { r.states[k] = next }
	case core.SlidingWindow:
		s, _ := st.(algo.SlidingWindowState)
		o, next := algo.SlidingWindow(p, s, cost, now)
		return o, func() { r.states[k] = next }
	case core.SlidingLog:
		l, _ := st.(*algo.Log)
		if l == nil {
			l = new(algo.Log)
		}
		o, ts := algo.SlidingLog(p, l, cost, now)
		return o, func() {
			algo.CommitSlidingLog(p, l, cost, ts, now)
			r.states[k] = l
		}
	case core.TokenBucket:
		s, _ := st.(algo.TokenBucketState)
		o, next := algo.TokenBucket(p, s, cost, now)
		return o, func() { r.states[k] = next }
	case core.GCRA:
		s, _ := st.(algo.GCRAState)
		o, next := algo.GCRA(p, s, cost, now)
		return o, func() { r.states[k] = next }
	case core.LeakyBucket:
		s, _ := st.(algo.LeakyBucketState)
		o, next := algo.LeakyBucket(p, s, cost, now)
		return o, func() { r.states[k] = next }
	}
	panic("backendtest: unreachable algorithm " + string(p.Algorithm)) // Params resolves to one of the six
}
