package memstore

import (
	"github.com/ratelimit-go/ratelimit/core/algo"
)

// apply decides a check of cost units for key under pi at now (µs) with the
// algorithm of core/algo, and stores the new state when m allows it and the
// check is admitted with a positive cost. It reports the outcome and whether
// key had no state under pi. The only error is ErrStoreFull, from mode
// commit. Requires sh.mu.
func (s *Store) apply(sh *shard, pi *policyInfo, key string, cost, now int64, m mode) (algo.Outcome, bool, error) {
	p := &pi.params
	write := m != evaluate
	switch pi.kind {
	case kindGCRA:
		t := tableOf[gcraTat](sh, pi, write)
		cur, ok := t.get(key)
		o, next := algo.GCRA(p, int64(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := s.room(sh, m, ok, key); err != nil {
				return o, !ok, err
			}
			t.put(key, gcraTat(next), !ok)
		}
		return o, !ok, nil
	case kindFixedWindow:
		t := tableOf[fixedState](sh, pi, write)
		cur, ok := t.get(key)
		o, next := algo.FixedWindow(p, algo.FixedWindowState(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := s.room(sh, m, ok, key); err != nil {
				return o, !ok, err
			}
			t.put(key, fixedState(next), !ok)
		}
		return o, !ok, nil
	case kindSlidingWindow:
		t := tableOf[slidingState](sh, pi, write)
		cur, ok := t.get(key)
		o, next := algo.SlidingWindow(p, algo.SlidingWindowState(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := s.room(sh, m, ok, key); err != nil {
				return o, !ok, err
			}
			t.put(key, slidingState(next), !ok)
		}
		return o, !ok, nil
	case kindTokenBucket:
		t := tableOf[tokenState](sh, pi, write)
		cur, ok := t.get(key)
		o, next := algo.TokenBucket(p, algo.TokenBucketState(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := s.room(sh, m, ok, key); err != nil {
				return o, !ok, err
			}
			t.put(key, tokenState(next), !ok)
		}
		return o, !ok, nil
	case kindLeakyBucket:
		t := tableOf[leakyState](sh, pi, write)
		cur, ok := t.get(key)
		o, next := algo.LeakyBucket(p, algo.LeakyBucketState(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := s.room(sh, m, ok, key); err != nil {
				return o, !ok, err
			}
			t.put(key, leakyState(next), !ok)
		}
		return o, !ok, nil
	case kindSlidingLog:
		t := tableOf[*logState](sh, pi, write)
		cur, ok := t.get(key)
		var empty algo.Log // a new key: evaluate against an empty log
		l := &empty
		if ok {
			l = &cur.Log
		}
		o, ts := algo.SlidingLog(p, l, cost, now)
		if write && o.Allowed && cost > 0 {
			if err := s.room(sh, m, ok, key); err != nil {
				return o, !ok, err
			}
			if !ok {
				cur = new(logState)
			}
			algo.CommitSlidingLog(p, &cur.Log, cost, ts, now)
			t.put(key, cur, !ok)
		}
		return o, !ok, nil
	}
	// Unreachable: kindOf admits only the six kinds above.
	return algo.Outcome{}, false, nil
}

// room reserves a slot for a new state in mode commit; existing states and
// mode commitReserved need none.
func (s *Store) room(sh *shard, m mode, exists bool, key string) error {
	if exists || m != commit {
		return nil
	}
	return s.reserve(sh, 1, key)
}

// tableOf returns the table of pi in sh, creating it when create is set, and
// nil otherwise when there is none (a nil table reads as empty). Requires
// sh.mu.
func tableOf[S state](sh *shard, pi *policyInfo, create bool) *table[S] {
	if pi.id < len(sh.tabs) {
		if t := sh.tabs[pi.id]; t != nil {
			return t.(*table[S])
		}
	}
	if !create {
		return nil
	}
	for len(sh.tabs) <= pi.id {
		sh.tabs = append(sh.tabs, nil)
	}
	t := newTable[S](&pi.params)
	sh.tabs[pi.id] = t
	return t
}
