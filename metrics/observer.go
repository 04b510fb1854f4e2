package metrics

import (
	"context"
	"maps"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/obs"
)

// Observer returns the observer to install with ratelimit.WithObserver: it
// counts ratelimit_checks_total per policy and outcome (shadow policies:
// allowed or shadow_denied), ratelimit_denials_total per denying policy and
// ratelimit_decisions_total per source. It allocates nothing once every
// policy name has been seen.
func (c *Collector) Observer() ratelimit.Observer { return c.observe }

func (c *Collector) observe(_ context.Context, e ratelimit.Event) {
	cs := c.cache.Load()
	obs.Walk(&e, func(p *core.Policy, kind uint8) {
		name := noPolicy
		if p != nil {
			name = c.name(cs, p)
		}
		c.counter(cs, name, kind).Inc()
	}, func(s int) { c.decisions[s].Inc() })
}

// counters caches, copy on write, the counter of every (policy name,
// outcome) seen, so that the observer neither builds labels nor allocates.
type counters struct {
	byKey  map[checkKey]prometheus.Counter
	names  map[core.Policy]string // display names of unnamed policies
	labels int                    // distinct policy labels given out
}

type checkKey struct {
	policy string
	kind   uint8 // an outcome, or obs.Denial
}

// name returns the display name of p: its Name, or the String form of an
// unnamed policy (core.Policy.Name), cached.
func (c *Collector) name(cs *counters, p *core.Policy) string {
	if p.Name != "" {
		return p.Name
	}
	if n, ok := cs.names[*p]; ok {
		return n
	}
	n := fields.PolicyName(*p)
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cache.Load()
	if len(old.names) < 4*c.cfg.maxPolicies {
		next := *old
		next.names = maps.Clone(old.names)
		next.names[*p] = n
		c.cache.Store(&next)
	}
	return n
}

// counter returns the counter of policy name and kind.
func (c *Collector) counter(cs *counters, name string, kind uint8) prometheus.Counter {
	if ctr, ok := cs.byKey[checkKey{name, kind}]; ok {
		return ctr
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cache.Load()
	if ctr, ok := old.byKey[checkKey{name, kind}]; ok {
		return ctr
	}
	label, fresh := name, true
	for k := range old.byKey {
		if k.policy == name {
			fresh = false
			break
		}
	}
	if fresh && old.labels >= c.cfg.maxPolicies {
		// Past the limit of distinct names: counted as "other", and not
		// cached, so that names made on the fly cannot grow the cache.
		return c.vecCounter(otherPolicy, kind)
	}
	next := *old
	next.byKey = maps.Clone(old.byKey)
	if fresh {
		next.labels++
	}
	ctr := c.vecCounter(label, kind)
	next.byKey[checkKey{name, kind}] = ctr
	c.cache.Store(&next)
	return ctr
}

func (c *Collector) vecCounter(policy string, kind uint8) prometheus.Counter {
	if kind == obs.Denial {
		return c.denials.WithLabelValues(policy)
	}
	return c.checks.WithLabelValues(policy, obs.Outcomes[kind])
}
