package memstore

import (
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/algo"
)

// apply decides a check of cost units for key (hash h) under pi at now
// (µs) and stores the new state when m allows it and the check is admitted
// with a positive cost. It reports whether key had no state under pi. The
// only error is ErrStoreFull. Requires sh.mu.
func (s *Store) apply(sh *shard, pi *policyInfo, key string, h uint64, cost, now int64, m mode) (algo.Answer, bool, error) {
	switch pi.kind {
	case kindGCRA:
		return applyValue(s, sh, pi, key, h, cost, now, m, algo.GCRA)
	case kindFixedWindow:
		return applyValue(s, sh, pi, key, h, cost, now, m, algo.FixedWindow)
	case kindSlidingWindow:
		return applyValue(s, sh, pi, key, h, cost, now, m, algo.SlidingWindow)
	case kindTokenBucket:
		return applyValue(s, sh, pi, key, h, cost, now, m, algo.TokenBucket)
	case kindLeakyBucket:
		return applyValue(s, sh, pi, key, h, cost, now, m, algo.LeakyBucket)
	case kindSlidingLog:
		return s.applyLog(sh, pi, key, h, cost, now, m)
	}
	// Unreachable: kindOf admits only the six kinds above.
	return algo.Answer{}, false, nil
}

// applyValue is apply for the algorithms whose state is a value (decide is
// one of core/algo's, such as algo.GCRA): the key's state, or the zero value for a new key, goes in, and
// the next state is stored in its slot.
func applyValue[S state](s *Store, sh *shard, pi *policyInfo, key string, h uint64, cost, now int64, m mode, decide func(p *core.Params, st S, cost, now int64) (algo.Answer, S)) (algo.Answer, bool, error) {
	write := m.writes()
	t := tableOf[S](s, sh, pi, write)
	i := t.find(key, h)
	var cur S
	if i >= 0 {
		cur = t.slots[i].st
	}
	o, next := decide(&pi.params, cur, cost, now)
	if m == stage {
		if o.Allowed && cost > 0 {
			if t == nil {
				t = tableOf[S](s, sh, pi, true)
			}
			t.staged, t.hasStaged = next, true
		}
		return o, i < 0, nil
	}
	if write && o.Allowed && cost > 0 {
		if err := store(s, sh, t, m, key, h, i, next); err != nil {
			return o, i < 0, err
		}
	}
	return o, i < 0, nil
}

// commitStaged stores the state that mode stage kept for key in pi's table
// and reports whether there was one. Requires sh.mu.
func (s *Store) commitStaged(sh *shard, pi *policyInfo, key string, h uint64) bool {
	switch pi.kind {
	case kindGCRA:
		return keepStaged(s, sh, tableOf[algo.GCRAState](s, sh, pi, false), key, h)
	case kindFixedWindow:
		return keepStaged(s, sh, tableOf[algo.FixedWindowState](s, sh, pi, false), key, h)
	case kindSlidingWindow:
		return keepStaged(s, sh, tableOf[algo.SlidingWindowState](s, sh, pi, false), key, h)
	case kindTokenBucket:
		return keepStaged(s, sh, tableOf[algo.TokenBucketState](s, sh, pi, false), key, h)
	case kindLeakyBucket:
		return keepStaged(s, sh, tableOf[algo.LeakyBucketState](s, sh, pi, false), key, h)
	}
	return false
}

// keepStaged writes t's staged state for key, if any, and clears it.
func keepStaged[S state](s *Store, sh *shard, t *table[S], key string, h uint64) bool {
	if t == nil || !t.hasStaged {
		return false
	}
	st := t.staged
	var zero S
	t.staged, t.hasStaged = zero, false
	_ = store(s, sh, t, commitReserved, key, h, t.find(key, h), st) // room reserved: no error
	return true
}

// applyLog is apply for the sliding log, whose buffer is updated in place:
// decided first (algo.SlidingLog), written only when admitted
// (algo.CommitSlidingLog).
func (s *Store) applyLog(sh *shard, pi *policyInfo, key string, h uint64, cost, now int64, m mode) (algo.Answer, bool, error) {
	p := &pi.params
	write := m.writes()
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

// adjustValue applies a refund or a charge (algo.Adjust) to key's state
// under pi, deleting the state when it is empty again. Requires sh.mu.
func adjustValue[S interface {
	state
	comparable
}](s *Store, sh *shard, pi *policyInfo, key string, h uint64, units, at, now int64) error {
	t := tableOf[S](s, sh, pi, units > 0)
	i := t.find(key, h)
	var cur, zero S
	if i >= 0 {
		cur = t.slots[i].st
	} else if units < 0 {
		return nil // nothing to refund
	}
	next := algo.Adjust(&pi.params, cur, units, at, now)
	if next == zero {
		if i >= 0 && t.drop(key, h) {
			s.keys.Add(-1)
		}
		return nil
	}
	return store(s, sh, t, commit, key, h, i, next)
}

// adjustLog is adjustValue for the sliding log. Requires sh.mu.
func (s *Store) adjustLog(sh *shard, pi *policyInfo, key string, h uint64, units, at, now int64) error {
	t := tableOf[*logState](s, sh, pi, units > 0)
	i := t.find(key, h)
	if i >= 0 {
		l := &t.slots[i].st.Log
		algo.Adjust(&pi.params, l, units, at, now)
		if l.Len() == 0 && t.drop(key, h) {
			s.keys.Add(-1)
		}
		return nil
	}
	if units < 0 {
		return nil
	}
	nl := new(logState)
	algo.Adjust(&pi.params, &nl.Log, units, at, now)
	return store(s, sh, t, commit, key, h, i, nl)
}

// adjust is apply for OpRefund (units < 0) and OpCharge. Requires sh.mu.
func (s *Store) adjust(sh *shard, pi *policyInfo, key string, h uint64, units, at, now int64) error {
	switch pi.kind {
	case kindGCRA:
		return adjustValue[algo.GCRAState](s, sh, pi, key, h, units, at, now)
	case kindFixedWindow:
		return adjustValue[algo.FixedWindowState](s, sh, pi, key, h, units, at, now)
	case kindSlidingWindow:
		return adjustValue[algo.SlidingWindowState](s, sh, pi, key, h, units, at, now)
	case kindTokenBucket:
		return adjustValue[algo.TokenBucketState](s, sh, pi, key, h, units, at, now)
	case kindLeakyBucket:
		return adjustValue[algo.LeakyBucketState](s, sh, pi, key, h, units, at, now)
	case kindSlidingLog:
		return s.adjustLog(sh, pi, key, h, units, at, now)
	}
	return nil
}
