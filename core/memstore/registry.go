package memstore

import (
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/policymap"
)

// policyInfo is a validated policy, its computed parameters, and its index
// into every shard's table list. It is immutable once registered.
type policyInfo struct {
	policy core.Policy
	params core.Params
	kind   kind // params.Algorithm as a small integer, cheap to switch on
	id     int
}

// kind numbers the algorithms.
type kind uint8

const (
	kindGCRA kind = iota
	kindFixedWindow
	kindSlidingWindow
	kindTokenBucket
	kindLeakyBucket
	kindSlidingLog
)

// kinds is the algorithm of each kind.
var kinds = [...]core.Algorithm{kindGCRA: core.GCRA, kindFixedWindow: core.FixedWindow, kindSlidingWindow: core.SlidingWindow,
	kindTokenBucket: core.TokenBucket, kindLeakyBucket: core.LeakyBucket, kindSlidingLog: core.SlidingLog}

// kindOf returns the kind of a resolved algorithm; ok is false for anything
// else.
func kindOf(a core.Algorithm) (k kind, ok bool) {
	for k, ka := range kinds {
		if ka == a {
			return kind(k), true
		}
	}
	return 0, false
}

// registry holds the validated parameters of every distinct Policy value
// the store has seen, and the table index of every identity.
type registry struct {
	m   policymap.Map[*policyInfo]
	ids map[core.Identity]int // under m's lock
}

// lookup returns the registered policy equal to p, or nil. It never
// registers anything.
func (r *registry) lookup(p *core.Policy) *policyInfo {
	pi, _ := r.m.Load(p)
	return pi
}

// get returns the registered policy equal to p, registering it if it is
// valid. An invalid policy yields its *core.PolicyError, found without the
// map's lock, and is not cached.
func (r *registry) get(p *core.Policy) (*policyInfo, error) {
	if pi := r.lookup(p); pi != nil {
		return pi, nil
	}
	params, err := p.Params()
	if err != nil {
		return nil, err
	}
	k, ok := kindOf(params.Algorithm)
	if !ok { // Params resolves and validates the algorithm: cannot happen
		return nil, &core.PolicyError{Policy: p.Name, Field: "algorithm", Value: string(params.Algorithm), Reason: "not supported by the memory store", Err: core.ErrUnknownAlgorithm}
	}
	return r.m.LoadOrAdd(p, 0, func() (*policyInfo, error) {
		// Policies of one identity (a named policy whose limit or burst
		// changed) share one table index, and so their state.
		if r.ids == nil {
			r.ids = make(map[core.Identity]int)
		}
		id, seen := r.ids[p.Identity()]
		if !seen {
			id = len(r.ids)
			r.ids[p.Identity()] = id
		}
		return &policyInfo{policy: *p, params: params, kind: k, id: id}, nil
	})
}
