// Package policymap maps core.Policy values to what a store computed of
// them, for the stores' lookups of the policies they have seen.
package policymap

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ratelimit-go/ratelimit/core"
)

// Equal is *a == *b: the numbers first, then the strings by their pointers
// before their bytes. A caller usually passes the same Policy value, whose
// strings are the stored copy's, on every check; Go's generated comparison,
// a call that compared the bytes of the strings, took a tenth of a
// memory-store check.
func Equal(a, b *core.Policy) bool {
	return a.Limit == b.Limit && a.Window == b.Window && a.Burst == b.Burst &&
		a.MaxDelay == b.MaxDelay && a.Shadow == b.Shadow &&
		sameString(string(a.Algorithm), string(b.Algorithm)) && sameString(a.Name, b.Name) &&
		sameString(a.Calendar, b.Calendar) && sameString(a.Zone, b.Zone)
}

// sameString is a == b, without comparing bytes when both share them.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// few is how many policies a Map finds by comparing them (Equal), which
// beats hashing their strings for the handful a program has.
const few = 8

// Map maps policies to values of V. Reads are lock-free: the first few
// policies added are compared one by one, the others hashed in a sync.Map.
// The zero value is an empty Map, safe for concurrent use.
type Map[V any] struct {
	few  atomic.Pointer[[]entry[V]] // replaced, never changed, under mu
	mu   sync.Mutex
	many sync.Map     // core.Policy -> V
	n    atomic.Int64 // values in many, written under mu
}

type entry[V any] struct {
	p core.Policy
	v V
}

// Load returns the value of p.
func (m *Map[V]) Load(p *core.Policy) (v V, ok bool) {
	f := m.few.Load()
	if f == nil {
		return v, false
	}
	for i := range *f {
		if Equal(&(*f)[i].p, p) {
			return (*f)[i].v, true
		}
	}
	if len(*f) < few {
		return v, false
	}
	if x, ok := m.many.Load(*p); ok {
		return x.(V), true
	}
	return v, false
}

// LoadOrAdd returns the value of p, or else the value compute returns, which
// it adds unless the map already holds max values (0: no bound). compute runs
// under the map's lock, but for a full map, which takes no lock; its error
// is returned and nothing is added.
func (m *Map[V]) LoadOrAdd(p *core.Policy, max int, compute func() (V, error)) (V, error) {
	if v, ok := m.Load(p); ok {
		return v, nil
	}
	if max > 0 && few+int(m.n.Load()) >= max {
		return compute()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.Load(p); ok {
		return v, nil
	}
	v, err := compute()
	if err != nil {
		return v, err
	}
	var f []entry[V]
	if cur := m.few.Load(); cur != nil {
		f = *cur
	}
	switch {
	case len(f) < few:
		next := append(append(make([]entry[V], 0, len(f)+1), f...), entry[V]{*p, v})
		m.few.Store(&next)
	case max == 0 || few+int(m.n.Load()) < max:
		m.many.Store(*p, v)
		m.n.Add(1)
	}
	return v, nil
}
