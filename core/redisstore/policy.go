package redisstore

import (
	"sync"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/policyeq"
)

// maxCachedPolicies bounds the policy cache; policies beyond it are computed
// on every check, so a program that makes policies on the fly cannot grow a
// Store without bound.
const maxCachedPolicies = 1024

// policyInfo is what a check needs of a validated policy that does not
// depend on the key or the time: its id in Redis keys and its script
// arguments, boxed once. Immutable once built.
type policyInfo struct {
	id   string
	args [argsPerPolicy]any // code, limit, window, interval, tolerance, max delay
	// params and window are set for a calendar policy (core.Policy.Calendar)
	// only, whose arguments depend on the window a check falls in: params
	// finds the window, and window caches the info of the last one found.
	params *core.Params
	window atomic.Pointer[calendarWindow]
}

// calendarWindow is the info of a calendar policy for checks in
// [start, end): the script's arguments carry the window's bounds, computed
// in Go, where the zone data is.
type calendarWindow struct {
	start, end int64
	pi         *policyInfo
}

// at returns the info to send for a check at now: pi itself, or for a
// calendar policy that of the window holding now.
func (pi *policyInfo) at(now int64) *policyInfo {
	if pi.params == nil {
		return pi
	}
	if w := pi.window.Load(); w != nil && now >= w.start && now < w.end {
		return w.pi
	}
	start, end := pi.params.Bounds(now)
	_, next := pi.params.Bounds(end)
	code, prev := calendarCode, int64(0)
	if pi.params.Algorithm == core.SlidingWindow {
		p, _ := pi.params.Bounds(start - 1)
		code, prev = slidingCalendarCode, start-p
	}
	w := &calendarWindow{start: start, end: end, pi: &policyInfo{id: pi.id,
		args: [argsPerPolicy]any{code, pi.args[1], end - start, start, next - end, prev}}}
	pi.window.Store(w)
	return w.pi
}

// policyCache maps core.Policy values to their policyInfo. The zero value is
// an empty cache, safe for concurrent use.
type policyCache struct {
	// hot holds the first hotPolicies policies seen, found by comparing
	// fields without hashing the whole Policy; a program has a handful of
	// policies. Replaced, never changed, under mu.
	hot atomic.Pointer[[]hotPolicy]
	mu  sync.Mutex
	m   sync.Map // the policies beyond hot: core.Policy -> *policyInfo
	n   atomic.Int64
}

// hotPolicies is how many policies policyCache finds by comparing fields.
const hotPolicies = 8

// hotPolicy is one entry of policyCache.hot.
type hotPolicy struct {
	p  core.Policy
	pi *policyInfo
}

// get returns the info of p, which the caller has validated.
func (c *policyCache) get(p core.Policy) *policyInfo {
	hot := c.hot.Load()
	if hot != nil {
		for i := range *hot {
			if policyeq.Equal(&(*hot)[i].p, &p) {
				return (*hot)[i].pi
			}
		}
	}
	if hot == nil || len(*hot) < hotPolicies {
		if pi, ok := c.addHot(p, newPolicyInfo(p)); ok {
			return pi
		}
	}
	if v, ok := c.m.Load(p); ok {
		return v.(*policyInfo)
	}
	pi := newPolicyInfo(p)
	if c.n.Load() < maxCachedPolicies {
		if v, loaded := c.m.LoadOrStore(p, pi); loaded {
			return v.(*policyInfo)
		}
		c.n.Add(1)
	}
	return pi
}

// addHot adds p to the hot policies if they have room and returns the info
// cached for p; false when they are full.
func (c *policyCache) addHot(p core.Policy, pi *policyInfo) (*policyInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var hot []hotPolicy
	if cur := c.hot.Load(); cur != nil {
		hot = *cur
	}
	for i := range hot {
		if policyeq.Equal(&hot[i].p, &p) {
			return hot[i].pi, true
		}
	}
	if len(hot) == hotPolicies {
		return nil, false
	}
	next := append(append(make([]hotPolicy, 0, len(hot)+1), hot...), hotPolicy{p: p, pi: pi})
	c.hot.Store(&next)
	return pi, true
}

// newPolicyInfo computes the info of p, which the caller has validated.
func newPolicyInfo(p core.Policy) *policyInfo {
	pr, _ := p.Params() // validated by the caller
	pi := &policyInfo{
		id:   string(appendPolicyID(make([]byte, 0, policyIDLen), p)),
		args: [argsPerPolicy]any{algorithmCode(pr.Algorithm), pr.Limit, pr.Window, pr.Interval, pr.Tolerance, pr.MaxDelay},
	}
	if p.Calendar != "" {
		pi.params = &pr
	}
	return pi
}
