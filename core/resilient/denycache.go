package resilient

import (
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// Bounds on what the deny cache stores, so that its memory stays bounded by
// its capacity whatever the callers send.
const (
	denyWays        = 4   // entries per bucket
	denyMaxKeyLen   = 512 // longer keys are not cached
	denyMaxPolicies = 8   // checks with more policies are not cached
	denyShards      = 16
)

// denyCache remembers checks the primary denied, until the earliest moment
// one of the denying policies could admit them: a fixed set-associative
// table where a key's entries share one bucket.
type denyCache struct {
	seed   maphash.Seed
	shards [denyShards]denyShard
}

type denyShard struct {
	mu      sync.Mutex
	buckets [][denyWays]denyEntry
}

// denyEntry is one denied check. An entry with until == 0 is empty.
type denyEntry struct {
	key       string
	policies  []core.Policy
	decisions []core.Decision // as the primary returned them, at instant at
	cost      int
	at        int64 // the check's instant, in microseconds
	until     int64 // the denial holds before this instant, in microseconds
	// windowed is set when every policy is a fixed window: a larger cost
	// is then answered too (see exactDenial).
	windowed bool
}

func newDenyCache(entries int) *denyCache {
	perShard := (entries + denyShards*denyWays - 1) / (denyShards * denyWays)
	c := &denyCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].buckets = make([][denyWays]denyEntry, perShard)
	}
	return c
}

// bucket returns the shard and bucket of key.
func (c *denyCache) bucket(key string) (*denyShard, *[denyWays]denyEntry) {
	h := maphash.String(c.seed, key)
	s := &c.shards[h%denyShards]
	return s, &s.buckets[(h/denyShards)%uint64(len(s.buckets))]
}

// samePolicies reports whether a holds the policies of items, in order.
func samePolicies(a []core.Policy, items []core.Item) bool {
	if len(a) != len(items) {
		return false
	}
	for i := range a {
		if a[i] != items[i].Policy {
			return false
		}
	}
	return true
}

func micros(t time.Time) int64 { return t.UnixMicro() }

// answer serves a check locally when the primary denied the same key,
// policies and cost (for fixed windows, a cost no larger) and the denial
// still holds at now, with durations counted down; it reports whether it
// did.
func (c *denyCache) answer(items []core.Item, now time.Time, out []core.Decision) bool {
	key, cost := items[0].Key, items[0].Cost
	if len(key) > denyMaxKeyLen || len(items) > denyMaxPolicies {
		return false
	}
	t := micros(now)
	s, bk := c.bucket(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range bk {
		e := &bk[i]
		if e.until > t && t >= e.at && (e.cost == cost || e.windowed && e.cost < cost) && e.key == key && samePolicies(e.policies, items) {
			elapsed := time.Duration(t-e.at) * time.Microsecond
			for j, d := range e.decisions {
				d.RetryAfter -= elapsed
				d.ResetAfter = max(d.ResetAfter-elapsed, d.RetryAfter)
				out[j] = d
			}
			return true
		}
	}
	return false
}

// exactDenial reports whether the primary's denial ds can be replayed,
// shifted by the time elapsed, and still be exactly the primary's answer
// (and whether larger costs can use it): every policy denied, and the cost
// is 1 or every policy is a fixed window. A concurrency limit's denial is
// never kept: another instance may give back a slot at any time.
func exactDenial(items []core.Item, cost int, ds []core.Decision) (ok, windowed bool) {
	windowed = true
	for i := range ds {
		if ds[i].Allowed || items[i].Policy.Algorithm == core.Concurrency {
			return false, false
		}
		if items[i].Policy.Algorithm != core.FixedWindow {
			windowed = false
		}
	}
	return cost == 1 || windowed, windowed
}

// record stores what the primary answered a check at now: a denial is
// remembered, an admission forgets the denials it proves stale.
func (c *denyCache) record(items []core.Item, now time.Time, out []core.Decision) {
	key, cost := items[0].Key, items[0].Cost
	if len(key) > denyMaxKeyLen || len(items) > denyMaxPolicies {
		return
	}
	var hold time.Duration // the earliest RetryAfter of the denying policies
	for _, d := range out[:len(items)] {
		if !d.Allowed && (hold == 0 || d.RetryAfter < hold) {
			hold = d.RetryAfter
		}
	}
	t := micros(now)
	until := t + int64(hold/time.Microsecond)
	s, bk := c.bucket(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if hold < time.Microsecond {
		// Admitted (or nothing to hold on to): denials of this set for a
		// cost up to this one no longer hold.
		for i := range bk {
			e := &bk[i]
			if e.until != 0 && e.cost <= cost && e.key == key && samePolicies(e.policies, items) {
				e.clear()
			}
		}
		return
	}
	exact, windowed := exactDenial(items, cost, out[:len(items)])
	if !exact {
		return
	}
	// The entry of the same check if there is one, else an empty or
	// expired one, else the one that expires first.
	victim := 0
	for i := range bk {
		e := &bk[i]
		if e.until != 0 && e.cost == cost && e.key == key && samePolicies(e.policies, items) {
			victim = i
			break
		}
		if bk[victim].until > t && e.until < bk[victim].until {
			victim = i
		}
	}
	e := &bk[victim]
	e.key, e.cost, e.at, e.until, e.windowed = key, cost, t, until, windowed
	e.policies = e.policies[:0]
	for i := range items {
		e.policies = append(e.policies, items[i].Policy)
	}
	e.decisions = append(e.decisions[:0], out[:len(items)]...)
}

// forget drops every denial of key that involves p.
func (c *denyCache) forget(key string, p core.Policy) {
	if len(key) > denyMaxKeyLen {
		return
	}
	s, bk := c.bucket(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range bk {
		e := &bk[i]
		if e.until == 0 || e.key != key {
			continue
		}
		if slices.Contains(e.policies, p) {
			e.clear()
		}
	}
}

// clear empties the entry, keeping its slices' capacity.
func (e *denyEntry) clear() {
	clear(e.policies)
	clear(e.decisions)
	*e = denyEntry{policies: e.policies[:0], decisions: e.decisions[:0]}
}
