package memstore

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// mode says what apply may write.
type mode uint8

const (
	// evaluate decides and writes nothing.
	evaluate mode = iota
	// commit decides and, when admitted, stores the new state, reserving
	// room for it if the key has none.
	commit
	// commitReserved is commit with the room already reserved by the caller.
	commitReserved
	// commitMany is commitReserved for a multi-key check: insertions take
	// no reclaim step, which could delete another key's expired state.
	commitMany
	// stage is evaluate that also keeps the next state of an admitted
	// value-state algorithm in the policy's table, for commitStaged, read
	// only by the commit of the same check under the same lock.
	stage
)

// writes reports whether apply may store a state in mode m.
func (m mode) writes() bool { return m != evaluate && m != stage }

// checkOne decides a batch of one consuming item, the common case, without
// the batch's bookkeeping, and fills out unless it fails. out is filled
// before the shard's lock is released: the unlock's atomic instruction
// commits those narrow stores, so the caller's 16-byte copy of out does not
// stall on them.
func (s *Store) checkOne(ctx context.Context, key string, p *core.Policy, cost int, now time.Time, out *core.Decision) (err error) {
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if err := core.ValidateKey(key); err != nil {
		return err
	}
	pi := s.reg.lookup(p) // get, below, only for a policy seen the first time
	if pi == nil {
		if pi, err = s.reg.get(p); err != nil {
			return err
		}
	}
	if cost <= 0 || int64(cost) > pi.params.Capacity {
		return p.CheckCost(cost)
	}
	n := now.UnixMicro()
	sh, h := s.locate(key)
	sh.mu.Lock()
	s.observe(sh, n)
	o, _, err := s.apply(sh, pi, key, h, int64(cost), n, commit)
	if err == nil {
		o.Fill(out, p)
	}
	sh.mu.Unlock()
	return err
}

// Do implements core.Backend. A batch of one key takes that key's shard
// lock once; a batch of several keys locks their shards in ascending order.
// Invalid arguments yield the typed errors of package core, and a new key
// in a full store ErrStoreFull; then out is zeroed and nothing changes.
func (s *Store) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	if len(out) < len(items) {
		return errShortOut
	}
	out = out[:len(items)]
	if len(items) == 1 && items[0].Op == core.OpConsume {
		it := &items[0]
		if err := s.checkOne(ctx, it.Key, &it.Policy, it.Cost, now, &out[0]); err != nil {
			out[0] = core.Decision{}
			return err
		}
		return nil
	}
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	var buf [8]*policyInfo
	pis, ok := s.registered(items, buf[:0])
	if !ok {
		if err := core.ValidateItems(items); err != nil {
			clear(out)
			return err
		}
		if items[0].Op == core.OpReset {
			return s.reset(items, out)
		}
		var err error
		if pis, err = s.register(items, buf[:0]); err != nil {
			clear(out)
			return err
		}
	}
	switch {
	case items[0].Op != core.OpConsume:
		return s.peek(items, pis, now, out)
	case oneKey(items):
		return s.check(items, pis, now, out)
	}
	return s.checkMany(items, pis, now, out)
}

// check decides a validated batch of consuming items of one key, all or
// nothing, under one lock, pis their registered policies. A policy given
// twice is consumed once.
func (s *Store) check(items []core.Item, pis []*policyInfo, now time.Time, out []core.Decision) error {
	key := items[0].Key
	c, n := int64(items[0].Cost), now.UnixMicro()
	sh, h := s.locate(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s.observe(sh, n)

	allowed, fresh := true, int64(0)
	for i, pi := range pis {
		m := stage
		if firstIndex(pis, i) != i { // one state, committed once, by its first policy
			m = evaluate
		}
		o, isNew, _ := s.apply(sh, pi, key, h, c, n, m)
		o.Fill(&out[i], &pi.policy)
		allowed = allowed && o.Allowed
		if isNew && firstIndex(pis, i) == i {
			fresh++
		}
	}
	if !allowed {
		for i, pi := range pis {
			if out[i].Allowed { // had room: report the state as it stands
				o, _, _ := s.apply(sh, pi, key, h, 0, n, evaluate)
				o.Fill(&out[i], &pi.policy)
				out[i].Delay = 0
			}
		}
		return nil
	}
	if err := s.reserve(sh, fresh, key, h); err != nil {
		clear(out)
		return err
	}
	for i, pi := range pis {
		if firstIndex(pis, i) == i && !s.commitStaged(sh, pi, key, h) {
			s.apply(sh, pi, key, h, c, n, commitReserved)
		}
	}
	return nil
}

// peek reports the state of every item of a validated batch of OpPeek items,
// pis their registered policies, and writes nothing. A batch of OpRefund or
// OpCharge items is applied the same way, each state once, just before it
// reports; a charge of a new key in a full store fails with ErrStoreFull,
// the other items still applied.
func (s *Store) peek(items []core.Item, pis []*policyInfo, now time.Time, out []core.Decision) error {
	n := now.UnixMicro()
	var first error
	for i, pi := range pis {
		it := &items[i]
		key := it.Key
		sh, h := s.locate(key)
		sh.mu.Lock()
		s.observe(sh, n)
		if it.Op != core.OpPeek && !sameKeyBefore(items, pis, i) {
			units, at := int64(it.Cost), n
			if it.Op == core.OpRefund {
				units = -units
			}
			if !it.At.IsZero() {
				at = it.At.UnixMicro()
			}
			if err := s.adjust(sh, pi, key, h, units, at, n); err != nil && first == nil {
				first = err
			}
		}
		stand, _, _ := s.apply(sh, pi, key, h, 0, n, evaluate)
		one, _, _ := s.apply(sh, pi, key, h, 1, n, evaluate)
		sh.mu.Unlock()
		var d core.Decision
		one.Fill(&d, &pi.policy) // whether a cost of 1 fits, and when
		d.Remaining, d.ResetAfter, d.Delay = int(stand.Remaining), time.Duration(stand.ResetAfter)*time.Microsecond, 0
		out[i] = d
	}
	return first
}

// sameKeyBefore reports whether an item before i has items[i]'s key and
// policy state.
func sameKeyBefore(items []core.Item, pis []*policyInfo, i int) bool {
	for j := range i {
		if pis[j].id == pis[i].id && items[j].Key == items[i].Key {
			return true
		}
	}
	return false
}

// reset forgets the states of validated OpReset items, under each key's
// shard lock once for consecutive items of one key.
func (s *Store) reset(items []core.Item, out []core.Decision) error {
	clear(out)
	var sh *shard
	var h uint64
	for i := range items {
		it := &items[i]
		if i == 0 || it.Key != items[i-1].Key {
			if sh != nil {
				sh.mu.Unlock()
			}
			sh, h = s.locate(it.Key)
			sh.mu.Lock()
		}
		pi := s.reg.lookup(&it.Policy)
		if pi != nil && pi.id < len(sh.tabs) && sh.tabs[pi.id] != nil && sh.tabs[pi.id].drop(it.Key, h) {
			s.keys.Add(-1)
		}
	}
	sh.mu.Unlock()
	return nil
}

// register returns the registered policies of validated items, appended to
// buf.
func (s *Store) register(items []core.Item, buf []*policyInfo) ([]*policyInfo, error) {
	for i := range items {
		pi, err := s.reg.get(&items[i].Policy)
		if err != nil {
			return nil, err
		}
		buf = append(buf, pi)
	}
	return buf, nil
}

// registered returns the policies of a batch that needs no more checks
// than checkOne makes: every item consumes the same cost, within its
// policy's capacity, under a policy the store has registered (and so
// validated), for a valid key. Otherwise it reports false, and the batch
// takes core.ValidateItems, which would validate every policy again.
func (s *Store) registered(items []core.Item, buf []*policyInfo) ([]*policyInfo, bool) {
	if len(items) == 0 {
		return nil, false
	}
	cost := items[0].Cost
	for i := range items {
		it := &items[i]
		pi := s.reg.lookup(&it.Policy)
		if pi == nil || it.Op != core.OpConsume || it.Cost != cost || cost <= 0 ||
			int64(cost) > pi.params.Capacity || core.ValidateKey(it.Key) != nil {
			return nil, false
		}
		buf = append(buf, pi)
	}
	return buf, true
}

// firstIndex returns the index of the first policy in pis that shares the
// state of pis[i] (the same policy, or one of the same identity).
func firstIndex(pis []*policyInfo, i int) int {
	for j := range i {
		if pis[j].id == pis[i].id {
			return j
		}
	}
	return i
}

// oneKey reports whether every item of a non-empty batch has the key of
// the first.
func oneKey(items []core.Item) bool {
	for i := 1; i < len(items); i++ {
		if items[i].Key != items[0].Key {
			return false
		}
	}
	return true
}
