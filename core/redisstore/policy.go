package redisstore

import (
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/policymap"
)

// maxCachedPolicies bounds the policy cache, so that policies made on the
// fly cannot grow a Store without bound.
const maxCachedPolicies = 1024

// policyInfo is what a check needs of a validated policy: its id in Redis
// keys and its script arguments, boxed once. Immutable once built.
type policyInfo struct {
	id   string
	args [argsPerPolicy]any // code, limit, window, interval, tolerance, max delay
	// params and window are set for a calendar policy only: params finds
	// a check's window, and window caches the info of the last one found.
	params *core.Params
	window atomic.Pointer[calendarWindow]
}

// calendarWindow is the info of a calendar policy for checks in
// [start, end), whose bounds Go computes, where the zone data is.
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

// policyCache maps core.Policy values to their policyInfo, at most
// maxCachedPolicies of them. The zero value is an empty cache.
type policyCache struct{ m policymap.Map[*policyInfo] }

// get returns the info of p, which the caller has validated.
func (c *policyCache) get(p core.Policy) *policyInfo {
	pi, _ := c.m.LoadOrAdd(&p, maxCachedPolicies, func() (*policyInfo, error) { return newPolicyInfo(p), nil })
	return pi
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
