package memstore

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/algo"
)

// state is what a table stores per key: one algorithm's state in the most
// compact form, able to say when it expires.
type state interface {
	// ExpiresAt is the first instant, in microseconds, at which the state
	// means the same as no state at all.
	ExpiresAt(p *core.Params) int64
}

// logState is the sliding log's state, held by pointer so that it is
// updated in place; its buffer never exceeds the policy's Limit entries.
type logState struct{ algo.Log }

// compact releases memory a state no longer needs at now: a sliding log
// drops the entries that have left its window; other states hold none.
func compact[S state](p *core.Params, st S, now int64) {
	if l, ok := any(st).(*logState); ok {
		l.Compact(p.Window, now)
	}
}

// anyTable is what the shard and Sweep need from a table, whatever
// its state type. Every method requires the shard's lock.
type anyTable interface {
	// size returns the number of states held.
	size() int
	// drop deletes key's state (h is its hash) and reports whether there
	// was one.
	drop(key string, h uint64) bool
	// reclaim deletes expired states among at most budget visited entries,
	// starting at a position derived from start, never key's own; it returns
	// how many it deleted and visited.
	reclaim(now int64, budget int, key string, start uint64) (removed, visited int)
	// sweep deletes the states expired at clock's time and compacts live
	// ones, releasing mu every chunk slots.
	sweep(mu *sync.Mutex, clock *atomic.Int64, chunk int) (removed int)
	// shrink rebuilds the table smaller when it is mostly empty, so that
	// the memory of expired keys returns to the runtime.
	shrink()
}

// table holds the states of one policy in one shard: an open-addressing
// hash table with linear probing, keyed by the hash that chose the shard.
// It grows by half when 4/5 full and shrinks after a sweep leaves it under
// a quarter full. Guarded by its shard's lock; create it with newTable.
type table[S state] struct {
	tags  []uint8 // 0: empty; otherwise tagOf the entry's hash
	slots []slot[S]
	n     int // entries held
	// cursor is the next slot the incremental reclaim visits (step).
	cursor int
	seed   maphash.Seed
	p      *core.Params
	// staged is the next state a multi-policy check decided for its key
	// (mode stage), written by commitStaged; hasStaged says it is set.
	staged    S
	hasStaged bool
}

// slot is one entry: a key (cloned on insert, since callers may pass a slice
// of a much larger buffer) and its state.
type slot[S state] struct {
	key string
	st  S
}

// minSlots is the capacity of a new table.
const minSlots = 8

func newTable[S state](p *core.Params, seed maphash.Seed) *table[S] {
	return &table[S]{tags: make([]uint8, minSlots), slots: make([]slot[S], minSlots), seed: seed, p: p}
}

// The bits of a key's hash: the lowest select the shard (at most 16 of
// them), bits 16-23 the tag, the top 32 the home slot.

// tagOf returns the nonzero tag of hash h.
func tagOf(h uint64) uint8 { return uint8(h>>16) | 1 }

// home returns the first slot to probe for hash h.
func (t *table[S]) home(h uint64) int { return int((h >> 32) * uint64(len(t.slots)) >> 32) }

// find returns the slot holding key, or -1. A nil table holds nothing.
func (t *table[S]) find(key string, h uint64) int {
	if t == nil {
		return -1
	}
	tag, c := tagOf(h), len(t.slots)
	for i := t.home(h); ; {
		switch t.tags[i] {
		case 0:
			return -1
		case tag:
			if t.slots[i].key == key {
				return i
			}
		}
		if i++; i == c {
			i = 0
		}
	}
}

// insert stores st under key, which must be absent, growing the table when
// needed, after one step of the incremental reclaim when reclaim is set; it
// returns how many expired states that step deleted.
func (t *table[S]) insert(key string, h uint64, st S, now int64, reclaim bool) (removed int) {
	if reclaim {
		removed = t.step(now)
	}
	if (t.n+1)*5 > len(t.slots)*4 {
		t.resize(len(t.slots) + len(t.slots)/2)
	}
	t.place(strings.Clone(key), h, st)
	t.n++
	return removed
}

// reclaimStep is the number of slots every insertion visits to reclaim
// expired states: enough for the cursor to visit every slot between two
// growths, so that a table grows only for live state.
const reclaimStep = 4

// stepGrace is how long (µs) step leaves a state past its expiry, so that a
// busy key coming back within it is updated in place rather than deleted
// and inserted again. An expired state decides as no state does.
const stepGrace = 100_000

// step visits reclaimStep slots from the cursor, deleting states expired by
// stepGrace and compacting live ones, and rebuilds the table smaller when
// the cursor wraps around a mostly empty table.
func (t *table[S]) step(now int64) (removed int) {
	for range reclaimStep {
		i := t.cursor
		if t.tags[i] != 0 {
			if t.slots[i].st.ExpiresAt(t.p) <= now-stepGrace {
				t.deleteAt(i)
				removed++
				continue
			}
			compact(t.p, t.slots[i].st, now)
		}
		if t.cursor++; t.cursor == len(t.slots) {
			t.cursor = 0
			t.shrink()
		}
	}
	return removed
}

// place puts an entry in the first empty slot from its home.
func (t *table[S]) place(key string, h uint64, st S) {
	c := len(t.slots)
	i := t.home(h)
	for t.tags[i] != 0 {
		if i++; i == c {
			i = 0
		}
	}
	t.tags[i] = tagOf(h)
	t.slots[i] = slot[S]{key: key, st: st}
}

// resize rebuilds the table with c slots.
func (t *table[S]) resize(c int) {
	old, oldTags := t.slots, t.tags
	t.tags, t.slots = make([]uint8, c), make([]slot[S], c)
	t.cursor = 0
	for i := range old {
		if oldTags[i] != 0 {
			t.place(old[i].key, maphash.String(t.seed, old[i].key), old[i].st)
		}
	}
}

// deleteAt empties slot i and shifts the entries after it back, so that no
// probe sequence has a hole (backward-shift deletion: no tombstones).
// Entries only move to lower positions, cyclically.
func (t *table[S]) deleteAt(i int) {
	c := len(t.slots)
	for j := i; ; {
		if j++; j == c {
			j = 0
		}
		if t.tags[j] == 0 {
			break
		}
		k := t.home(maphash.String(t.seed, t.slots[j].key))
		// The entry at j may fill the hole at i unless its home lies
		// cyclically in (i, j].
		if (i < j && (k <= i || k > j)) || (j < i && k <= i && k > j) {
			t.tags[i], t.slots[i] = t.tags[j], t.slots[j]
			i = j
		}
	}
	t.tags[i] = 0
	t.slots[i] = slot[S]{}
	t.n--
}

func (t *table[S]) size() int { return t.n }

func (t *table[S]) drop(key string, h uint64) bool {
	i := t.find(key, h)
	if i < 0 {
		return false
	}
	t.deleteAt(i)
	return true
}

func (t *table[S]) reclaim(now int64, budget int, key string, start uint64) (removed, visited int) {
	c := len(t.slots)
	i := int(start % uint64(c))
	for steps := 0; steps < c && visited < budget; steps++ {
		if t.tags[i] != 0 {
			visited++
			if t.slots[i].key != key && t.slots[i].st.ExpiresAt(t.p) <= now {
				t.deleteAt(i)
				removed++
				continue // another entry may have moved into slot i
			}
		}
		if i++; i == c {
			i = 0
		}
	}
	return removed, visited
}

// sweep walks the slots in order, releasing mu every chunk slots. A
// deletion shifts later entries back, so the slot is examined again; an
// entry moved behind the cursor while mu was released waits for the next
// sweep.
func (t *table[S]) sweep(mu *sync.Mutex, clock *atomic.Int64, chunk int) (removed int) {
	now, steps := clock.Load(), 0
	for i := 0; i < len(t.slots); {
		if t.tags[i] != 0 && t.slots[i].st.ExpiresAt(t.p) <= now {
			t.deleteAt(i)
			removed++
		} else {
			if t.tags[i] != 0 {
				compact(t.p, t.slots[i].st, now)
			}
			i++
		}
		if steps++; steps%chunk == 0 {
			mu.Unlock()
			mu.Lock()
			now = clock.Load()
		}
	}
	return removed
}

func (t *table[S]) shrink() {
	if len(t.slots) > 2*minSlots && t.n*4 < len(t.slots) {
		t.resize(max(minSlots, t.n*2))
	}
}

// lookup returns key's state, hashing the key itself.
func (t *table[S]) lookup(key string) (S, bool) {
	if i := t.find(key, maphash.String(t.seed, key)); i >= 0 {
		return t.slots[i].st, true
	}
	var zero S
	return zero, false
}
