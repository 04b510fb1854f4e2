package memstore

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/algo"
)

// state is what a table stores per key: one algorithm's state in the most
// compact form, able to say when it expires.
type state interface {
	// expiresAt is the first instant, in microseconds, at which the state
	// means the same as no state at all.
	expiresAt(p *core.Params) int64
	// compact releases memory the state no longer needs at now.
	compact(p *core.Params, now int64)
}

// The per-algorithm states. Each is the algo state itself, renamed to carry
// the state methods; conversions between them cost nothing.
type (
	gcraTat      int64
	fixedState   algo.FixedWindowState
	slidingState algo.SlidingWindowState
	tokenState   algo.TokenBucketState
	leakyState   algo.LeakyBucketState
	// logState is a sliding log, held by pointer so that it is updated in
	// place; its buffer never exceeds the policy's Limit entries.
	logState struct{ algo.Log }
)

func (t gcraTat) expiresAt(*core.Params) int64 { return int64(t) }
func (s fixedState) expiresAt(p *core.Params) int64 {
	return algo.FixedWindowState(s).ExpiresAt(p.Window)
}
func (s slidingState) expiresAt(p *core.Params) int64 {
	return algo.SlidingWindowState(s).ExpiresAt(p.Window)
}
func (s tokenState) expiresAt(*core.Params) int64     { return algo.TokenBucketState(s).ExpiresAt() }
func (s leakyState) expiresAt(*core.Params) int64     { return algo.LeakyBucketState(s).ExpiresAt() }
func (l *logState) expiresAt(p *core.Params) int64    { return l.ExpiresAt(p.Window) }
func (gcraTat) compact(*core.Params, int64)           {}
func (fixedState) compact(*core.Params, int64)        {}
func (slidingState) compact(*core.Params, int64)      {}
func (tokenState) compact(*core.Params, int64)        {}
func (leakyState) compact(*core.Params, int64)        {}
func (l *logState) compact(p *core.Params, now int64) { l.Compact(p.Window, now) }

// anyTable is what the shard and the sweeper need from a table, whatever
// its state type. Every method requires the shard's lock.
type anyTable interface {
	// size returns the number of states held.
	size() int
	// drop deletes key's state and reports whether there was one.
	drop(key string) bool
	// reclaim deletes expired states among at most budget visited entries,
	// never key's own, and returns how many it deleted and visited.
	reclaim(now int64, budget int, key string) (removed, visited int)
	// sweep visits every entry, deleting states expired at the time in
	// clock and compacting live ones. It releases mu after every chunk
	// entries so that checks can run in between, reads clock again each
	// time it holds mu anew, and stops early when stop is closed.
	sweep(mu *sync.Mutex, clock *atomic.Int64, chunk int, stop <-chan struct{}) (removed int, stopped bool)
	// shrink rebuilds the map when it holds far fewer entries than it once
	// did: Go maps never give back the room they grew to.
	shrink()
}

// shortKeyLen is the longest key a table stores inline, in the map slot
// itself: no allocation for the key and 16 bytes of key per slot, which
// covers IPv4 addresses and most numeric ids.
const shortKeyLen = 15

// shortKey is a key of at most shortKeyLen bytes followed by its length, so
// that keys differing only in trailing zero bytes stay distinct.
type shortKey [shortKeyLen + 1]byte

// toShort packs a key of at most shortKeyLen bytes.
func toShort(key string) (k shortKey) {
	copy(k[:shortKeyLen], key)
	k[shortKeyLen] = byte(len(key))
	return k
}

// table holds the states of one policy in one shard: short keys inline,
// longer ones as cloned strings. Its zero value is not usable; create it
// with newTable. It is guarded by its shard's lock.
type table[S state] struct {
	short part[shortKey, S]
	long  part[string, S]
	p     *core.Params
}

// part is one map of a table and the most entries it has held since it was
// last built.
type part[K comparable, S state] struct {
	m    map[K]S
	peak int
}

func newTable[S state](p *core.Params) *table[S] {
	return &table[S]{short: part[shortKey, S]{m: make(map[shortKey]S)}, long: part[string, S]{m: make(map[string]S)}, p: p}
}

// get returns key's state; a nil table holds nothing.
func (t *table[S]) get(key string) (S, bool) {
	if t == nil {
		var zero S
		return zero, false
	}
	if len(key) <= shortKeyLen {
		st, ok := t.short.m[toShort(key)]
		return st, ok
	}
	st, ok := t.long.m[key]
	return st, ok
}

// put stores st under key. fresh says the key has no state yet: a long key
// is then cloned, since callers may pass a slice of a much larger buffer.
func (t *table[S]) put(key string, st S, fresh bool) {
	if len(key) <= shortKeyLen {
		t.short.m[toShort(key)] = st
		if fresh {
			t.short.peak = max(t.short.peak, len(t.short.m))
		}
		return
	}
	if fresh {
		key = strings.Clone(key)
		t.long.m[key] = st
		t.long.peak = max(t.long.peak, len(t.long.m))
		return
	}
	t.long.m[key] = st
}

func (t *table[S]) size() int { return len(t.short.m) + len(t.long.m) }

func (t *table[S]) drop(key string) bool {
	if len(key) <= shortKeyLen {
		return t.short.drop(toShort(key))
	}
	return t.long.drop(key)
}

func (t *table[S]) reclaim(now int64, budget int, key string) (removed, visited int) {
	if len(key) <= shortKeyLen {
		removed, visited = t.short.reclaim(t.p, now, budget, toShort(key), true)
		r, v := t.long.reclaim(t.p, now, budget-visited, "", false)
		return removed + r, visited + v
	}
	removed, visited = t.long.reclaim(t.p, now, budget, key, true)
	r, v := t.short.reclaim(t.p, now, budget-visited, shortKey{}, false)
	return removed + r, visited + v
}

func (t *table[S]) sweep(mu *sync.Mutex, clock *atomic.Int64, chunk int, stop <-chan struct{}) (removed int, stopped bool) {
	removed, stopped = t.short.sweep(t.p, mu, clock, chunk, stop)
	if stopped {
		return removed, true
	}
	r, stopped := t.long.sweep(t.p, mu, clock, chunk, stop)
	return removed + r, stopped
}

func (t *table[S]) shrink() {
	t.short.shrink()
	t.long.shrink()
}

func (pt *part[K, S]) drop(k K) bool {
	if _, ok := pt.m[k]; !ok {
		return false
	}
	delete(pt.m, k)
	return true
}

// reclaim deletes expired states among at most budget visited entries,
// sparing key when spare is set.
func (pt *part[K, S]) reclaim(p *core.Params, now int64, budget int, key K, spare bool) (removed, visited int) {
	if budget <= 0 {
		return 0, 0
	}
	for k, st := range pt.m {
		if visited >= budget {
			break
		}
		visited++
		if (!spare || k != key) && st.expiresAt(p) <= now {
			delete(pt.m, k)
			removed++
		}
	}
	return removed, visited
}

// sweep relies on the range semantics of the Go specification: entries
// deleted before the iteration reaches them are not produced, entries added
// may or may not be, and every other entry is produced exactly once. The
// iteration is resumed only with mu held again, so it is never concurrent
// with a write; only the sweeper replaces pt.m, so the map ranged over stays
// the table's.
func (pt *part[K, S]) sweep(p *core.Params, mu *sync.Mutex, clock *atomic.Int64, chunk int, stop <-chan struct{}) (removed int, stopped bool) {
	n, now := 0, clock.Load()
	for k, st := range pt.m {
		if st.expiresAt(p) <= now {
			delete(pt.m, k)
			removed++
		} else {
			st.compact(p, now)
		}
		if n++; n%chunk == 0 {
			mu.Unlock()
			select {
			case <-stop:
				stopped = true
			default:
			}
			mu.Lock()
			if stopped {
				return removed, true
			}
			now = clock.Load()
		}
	}
	return removed, false
}

// shrinkMinPeak is the size below which a map is never rebuilt: a small map
// wastes little.
const shrinkMinPeak = 64

// shrink rebuilds the map when it holds far fewer entries than it once did:
// Go maps never give back the room they grew to.
func (pt *part[K, S]) shrink() {
	if pt.peak < shrinkMinPeak || len(pt.m) > pt.peak/4 {
		return
	}
	m := make(map[K]S, len(pt.m))
	for k, v := range pt.m {
		m[k] = v
	}
	pt.m, pt.peak = m, len(m)
}
