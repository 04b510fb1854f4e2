// Package sharedhdr holds response header values prepared once and put,
// slice and all, into the header maps of many responses, so that writing
// them allocates nothing.
//
// An http.Header maps a name to a []string. A slice shared between
// responses is safe against everything http.Header's methods do: Set and
// Del replace or drop the slice, and Add appends to a slice whose length is
// its capacity, which copies it. Only code writing into the slice in place
// (h[name][0] = v) could change it, for every response after. A Value
// checks before each use that its slice still holds its string, and
// replaces a slice written into, so such code changes its own response and
// no other.
package sharedhdr

import (
	"sync/atomic"
	"unsafe"
)

// Value is one header value and the one-element slice responses share. The
// zero Value is not usable; build one with New. Safe for concurrent use.
type Value struct {
	s string
	p atomic.Pointer[[1]string]
}

// New prepares the shared slice for s, which must not be empty.
func New(s string) *Value {
	v := &Value{s: s}
	v.p.Store(&[1]string{s})
	return v
}

// String returns the value.
func (v *Value) String() string { return v.s }

// Slice returns the shared slice holding the value, its length equal to its
// capacity. A slice found written into is replaced by a new one first.
func (v *Value) Slice() []string {
	a := v.p.Load()
	if e := a[0]; len(e) != len(v.s) || unsafe.StringData(e) != unsafe.StringData(v.s) {
		a = &[1]string{v.s}
		v.p.Store(a)
	}
	return a[:]
}
