package memstore

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/policyeq"
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

// kindOf returns the kind of a resolved algorithm; ok is false for anything
// else.
func kindOf(a core.Algorithm) (k kind, ok bool) {
	switch a {
	case core.GCRA:
		return kindGCRA, true
	case core.FixedWindow:
		return kindFixedWindow, true
	case core.SlidingWindow:
		return kindSlidingWindow, true
	case core.TokenBucket:
		return kindTokenBucket, true
	case core.LeakyBucket:
		return kindLeakyBucket, true
	case core.SlidingLog:
		return kindSlidingLog, true
	}
	return 0, false
}

// registry caches the validated parameters of every distinct Policy value
// the store has seen. Reads are lock-free: a snapshot of up to linearMax
// policies compared one by one, then a sync.Map.
type registry struct {
	snap atomic.Pointer[regSnapshot]
	mu   sync.Mutex
	// Under mu: every policy in order of registration, and the table index
	// of every identity.
	all []*policyInfo
	ids map[core.Identity]int
}

// regSnapshot is one version of the registry: immutable, but for many,
// which only grows.
type regSnapshot struct {
	few  []*policyInfo // every policy while there are at most linearMax; nil beyond
	many *sync.Map     // beyond linearMax: core.Policy -> *policyInfo
}

// linearMax is the number of policies below which a lookup compares Policy
// values one by one, which beats hashing two strings for the usual handful.
const linearMax = 8

func (s *regSnapshot) find(p *core.Policy) *policyInfo {
	if s == nil {
		return nil
	}
	return s.search(p)
}

// search is find's search, apart so that find inlines.
func (s *regSnapshot) search(p *core.Policy) *policyInfo {
	if s.many != nil {
		if v, ok := s.many.Load(*p); ok {
			return v.(*policyInfo)
		}
		return nil
	}
	for _, pi := range s.few {
		if policyeq.Equal(&pi.policy, p) {
			return pi
		}
	}
	return nil
}

// lookup returns the registered policy equal to p, or nil. It never
// registers anything.
func (r *registry) lookup(p *core.Policy) *policyInfo {
	return r.snap.Load().find(p)
}

// get returns the registered policy equal to p, registering it if it is
// valid. An invalid policy yields its *core.PolicyError and is not cached.
func (r *registry) get(p *core.Policy) (*policyInfo, error) {
	if pi := r.snap.Load().find(p); pi != nil {
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
	r.mu.Lock()
	defer r.mu.Unlock()
	snap := r.snap.Load()
	if pi := snap.find(p); pi != nil {
		return pi, nil
	}
	// Policies of one identity (a named policy whose limit or burst
	// changed) share one table index, and so their state.
	if r.ids == nil {
		r.ids = make(map[core.Identity]int)
	}
	ident := p.Identity()
	id, seen := r.ids[ident]
	if !seen {
		id = len(r.ids)
		r.ids[ident] = id
	}
	pi := &policyInfo{policy: *p, params: params, kind: k, id: id}
	r.all = append(r.all, pi)
	switch {
	case len(r.all) <= linearMax:
		r.snap.Store(&regSnapshot{few: slices.Clone(r.all)})
	case snap.many == nil:
		next := &regSnapshot{many: new(sync.Map)}
		for _, x := range r.all {
			next.many.Store(x.policy, x)
		}
		r.snap.Store(next)
	default:
		snap.many.Store(pi.policy, pi)
	}
	return pi, nil
}
