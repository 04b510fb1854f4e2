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

// table holds the states of one policy in one shard. Its zero value is not
// usable; create it with newTable. It is guarded by its shard's lock.
type table[S state] struct {
	m    map[string]S
	p    *core.Params
	peak int // most entries held since the map was last built
}

func newTable[S state](p *core.Params) *table[S] {
	return &table[S]{m: make(map[string]S), p: p}
}

// put stores st under key. fresh says the key has no state yet: its string
// is then cloned, since callers may pass a slice of a much larger buffer.
func (t *table[S]) put(key string, st S, fresh bool) {
	if fresh {
		key = strings.Clone(key)
		t.m[key] = st
		t.peak = max(t.peak, len(t.m))
		return
	}
	t.m[key] = st
}

func (t *table[S]) size() int { return len(t.m) }

func (t *table[S]) drop(key string) bool {
	if _, ok := t.m[key]; !ok {
		return false
	}
	delete(t.m, key)
	return true
}

func (t *table[S]) reclaim(now int64, budget int, key string) (removed, visited int) {
	for k, st := range t.m {
		if visited >= budget {
			break
		}
		visited++
		if k != key && st.expiresAt(t.p) <= now {
			delete(t.m, k)
			removed++
		}
	}
	return removed, visited
}

// sweep relies on the range semantics of the Go specification: entries
// deleted before the iteration reaches them are not produced, entries added
// may or may not be, and every other entry is produced exactly once. The
// iteration is resumed only with mu held again, so it is never concurrent
// with a write; only the sweeper replaces t.m, so the map ranged over stays
// the table's.
func (t *table[S]) sweep(mu *sync.Mutex, clock *atomic.Int64, chunk int, stop <-chan struct{}) (removed int, stopped bool) {
	n, now := 0, clock.Load()
	for k, st := range t.m {
		if st.expiresAt(t.p) <= now {
			delete(t.m, k)
			removed++
		} else {
			st.compact(t.p, now)
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

// shrinkMinPeak is the size below which a table is never rebuilt: a small
// map wastes little.
const shrinkMinPeak = 64

func (t *table[S]) shrink() {
	if t.peak < shrinkMinPeak || len(t.m) > t.peak/4 {
		return
	}
	m := make(map[string]S, len(t.m))
	for k, v := range t.m {
		m[k] = v
	}
	t.m, t.peak = m, len(m)
}

// get returns key's state; a nil table holds nothing.
func (t *table[S]) get(key string) (S, bool) {
	if t == nil {
		var zero S
		return zero, false
	}
	st, ok := t.m[key]
	return st, ok
}
