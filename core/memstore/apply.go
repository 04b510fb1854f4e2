package memstore

import (
	"github.com/ratelimit-go/ratelimit/core/algo"
)

// apply decides a check of cost units for key (whose hash is h) under pi at
// now (µs) with the algorithm of core/algo, and stores the new state when m
// allows it and the check is admitted with a positive cost. It reports the
// outcome and whether key had no state under pi. The only error is
// ErrStoreFull, from mode commit. Requires sh.mu.
func (s *Store) apply(sh *shard, pi *policyInfo, key string, h uint64, cost, now int64, m mode) (algo.Outcome, bool, error) {
	p := &pi.params
	write := m != evaluate
	switch pi.kind {
	case kindGCRA:
		t := tableOf[gcraTat](s, sh, pi, write)
		i := t.find(key, h)
		var cur gcraTat
		if i >= 0 {
			cur = t.slots[i].st
		}
		o, next := algo.GCRA(p, int64(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := store(s, sh, t, m, key, h, i, gcraTat(next)); err != nil {
				return o, i < 0, err
			}
		}
		return o, i < 0, nil
	case kindFixedWindow:
		t := tableOf[fixedState](s, sh, pi, write)
		i := t.find(key, h)
		var cur fixedState
		if i >= 0 {
			cur = t.slots[i].st
		}
		o, next := algo.FixedWindow(p, algo.FixedWindowState(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := store(s, sh, t, m, key, h, i, fixedState(next)); err != nil {
				return o, i < 0, err
			}
		}
		return o, i < 0, nil
	case kindSlidingWindow:
		t := tableOf[slidingState](s, sh, pi, write)
		i := t.find(key, h)
		var cur slidingState
		if i >= 0 {
			cur = t.slots[i].st
		}
		o, next := algo.SlidingWindow(p, algo.SlidingWindowState(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := store(s, sh, t, m, key, h, i, slidingState(next)); err != nil {
				return o, i < 0, err
			}
		}
		return o, i < 0, nil
	case kindTokenBucket:
		t := tableOf[tokenState](s, sh, pi, write)
		i := t.find(key, h)
		var cur tokenState
		if i >= 0 {
			cur = t.slots[i].st
		}
		o, next := algo.TokenBucket(p, algo.TokenBucketState(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := store(s, sh, t, m, key, h, i, tokenState(next)); err != nil {
				return o, i < 0, err
			}
		}
		return o, i < 0, nil
	case kindLeakyBucket:
		t := tableOf[leakyState](s, sh, pi, write)
		i := t.find(key, h)
		var cur leakyState
		if i >= 0 {
			cur = t.slots[i].st
		}
		o, next := algo.LeakyBucket(p, algo.LeakyBucketState(cur), cost, now)
		if write && o.Allowed && cost > 0 {
			if err := store(s, sh, t, m, key, h, i, leakyState(next)); err != nil {
				return o, i < 0, err
			}
		}
		return o, i < 0, nil
	case kindSlidingLog:
		t := tableOf[*logState](s, sh, pi, write)
		i := t.find(key, h)
		var empty algo.Log // a new key: evaluate against an empty log
		l := &empty
		if i >= 0 {
			l = &t.slots[i].st.Log
		}
		o, ts := algo.SlidingLog(p, l, cost, now)
		if write && o.Allowed && cost > 0 {
			if i >= 0 { // the log is updated in place
				algo.CommitSlidingLog(p, l, cost, ts, now)
				return o, false, nil
			}
			nl := new(logState)
			algo.CommitSlidingLog(p, &nl.Log, cost, ts, now)
			if err := store(s, sh, t, m, key, h, i, nl); err != nil {
				return o, true, err
			}
		}
		return o, i < 0, nil
	}
	// Unreachable: kindOf admits only the six kinds above.
	return algo.Outcome{}, false, nil
}

// store writes st to slot i of t, or inserts it when the key has no state
// (i < 0), reserving room for it first in mode commit. An insertion also
// reclaims a few expired states of t (table.step), which leave the count.
func store[S state](s *Store, sh *shard, t *table[S], m mode, key string, h uint64, i int, st S) error {
	if i >= 0 {
		t.slots[i].st = st
		return nil
	}
	if m == commit {
		if err := s.reserve(sh, 1, key, h); err != nil {
			return err
		}
	}
	if removed := t.insert(key, h, st, sh.now, m != commitMany); removed > 0 {
		s.keys.Add(-int64(removed))
	}
	return nil
}

// tableOf returns the table of pi in sh, creating it when create is set, and
// nil otherwise when there is none (a nil table reads as empty). Requires
// sh.mu.
func tableOf[S state](s *Store, sh *shard, pi *policyInfo, create bool) *table[S] {
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
	t := newTable[S](&pi.params, s.seed)
	sh.tabs[pi.id] = t
	return t
}
