package memstore

import (
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
// the store has seen, so the hot path neither validates nor recomputes them.
// Reads are lock-free over an immutable snapshot; a new policy copies the
// snapshot under mu (copy on write). The zero value is an empty registry.
type registry struct {
	snap atomic.Pointer[regSnapshot]
	mu   sync.Mutex
}

// regSnapshot is one immutable version of the registry.
type regSnapshot struct {
	all   []*policyInfo               // in order of registration
	index map[core.Policy]*policyInfo // for many policies; nil while few
	ids   map[core.Identity]int       // table index of every identity
}

// linearMax is the number of policies below which a lookup compares Policy
// values one by one, which beats hashing two strings for the usual handful.
const linearMax = 8

func (s *regSnapshot) find(p *core.Policy) *policyInfo {
	if s == nil {
		return nil
	}
	if s.index != nil {
		return s.index[*p]
	}
	return s.scan(p)
}

// scan returns the policy of s.all equal to p, compared one by one, or nil:
// find's search while s has no index, apart so that find inlines.
func (s *regSnapshot) scan(p *core.Policy) *policyInfo {
	for _, pi := range s.all {
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
	old := r.snap.Load()
	if pi := old.find(p); pi != nil {
		return pi, nil
	}
	next := &regSnapshot{ids: make(map[core.Identity]int)}
	if old != nil {
		next.all = make([]*policyInfo, len(old.all), len(old.all)+1)
		copy(next.all, old.all)
		for k, v := range old.ids {
			next.ids[k] = v
		}
	}
	// Policies of one identity (a named policy whose limit or burst
	// changed) share one table index, and so their state.
	ident := p.Identity()
	id, seen := next.ids[ident]
	if !seen {
		id = len(next.ids)
		next.ids[ident] = id
	}
	pi := &policyInfo{policy: *p, params: params, kind: k, id: id}
	next.all = append(next.all, pi)
	if len(next.all) > linearMax {
		next.index = make(map[core.Policy]*policyInfo, len(next.all))
		for _, x := range next.all {
			next.index[x.policy] = x
		}
	}
	r.snap.Store(next)
	return pi, nil
}
