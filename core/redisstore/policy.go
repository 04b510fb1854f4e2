package redisstore

import (
	"sync"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit/core"
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
}

// policyCache maps core.Policy values to their policyInfo. The zero value is
// an empty cache, safe for concurrent use.
type policyCache struct {
	m sync.Map // core.Policy -> *policyInfo
	n atomic.Int64
}

// get returns the info of p, which the caller has validated.
func (c *policyCache) get(p core.Policy) *policyInfo {
	if v, ok := c.m.Load(p); ok {
		return v.(*policyInfo)
	}
	pr, _ := p.Params() // validated by the caller
	pi := &policyInfo{
		id:   string(appendPolicyID(make([]byte, 0, policyIDLen), p)),
		args: [argsPerPolicy]any{algorithmCode(pr.Algorithm), pr.Limit, pr.Window, pr.Interval, pr.Tolerance, pr.MaxDelay},
	}
	if c.n.Load() < maxCachedPolicies {
		if v, loaded := c.m.LoadOrStore(p, pi); loaded {
			return v.(*policyInfo)
		}
		c.n.Add(1)
	}
	return pi
}
