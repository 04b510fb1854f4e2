package memstore

import (
	"slices"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// checkMany decides a validated batch of consuming items of several keys,
// all or nothing, pis their registered policies, their shards locked in
// ascending order. A full store (WithMaxKeys) fails such a check with
// ErrStoreFull, reclaiming nothing.
func (s *Store) checkMany(items []core.Item, pis []*policyInfo, now time.Time, out []core.Decision) error {
	type located struct {
		sh *shard
		h  uint64
	}
	var locBuf [8]located
	loc := locBuf[:0]
	var shardBuf [8]int
	shards := shardBuf[:0]
	for i := range items {
		sh, h := s.locate(items[i].Key)
		loc = append(loc, located{sh, h})
		if idx := int(h & s.mask); !slices.Contains(shards, idx) {
			shards = append(shards, idx)
		}
	}
	slices.Sort(shards)
	for _, idx := range shards {
		s.shards[idx].mu.Lock()
	}
	defer func() {
		for _, idx := range shards {
			s.shards[idx].mu.Unlock()
		}
	}()
	n := now.UnixMicro()
	for _, idx := range shards {
		s.observe(&s.shards[idx], n)
	}
	allowed, fresh := true, int64(0)
	for i, l := range loc {
		o, isNew, _ := s.apply(l.sh, pis[i], items[i].Key, l.h, int64(items[i].Cost), n, evaluate)
		o.Fill(&out[i], &pis[i].policy)
		allowed = allowed && o.Allowed
		if isNew && !sameKeyBefore(items, pis, i) {
			fresh++
		}
	}
	if !allowed {
		for i, l := range loc {
			if out[i].Allowed { // had room: report the state as it stands
				o, _, _ := s.apply(l.sh, pis[i], items[i].Key, l.h, 0, n, evaluate)
				o.Fill(&out[i], &pis[i].policy)
				out[i].Delay = 0
			}
		}
		return nil
	}
	if fresh > 0 {
		if s.maxKeys == 0 {
			s.keys.Add(fresh)
		} else if !s.tryReserve(fresh) {
			s.refused.Add(1)
			clear(out)
			return ErrStoreFull
		}
	}
	for i, l := range loc {
		if !sameKeyBefore(items, pis, i) {
			s.apply(l.sh, pis[i], items[i].Key, l.h, int64(items[i].Cost), n, commitMany)
		}
	}
	return nil
}
