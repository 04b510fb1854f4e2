// Package keycheck remembers the key functions that were built from an
// invalid option (keyfuncs.Header("")), so that ratelimit.New refuses them
// at start instead of answering every request with an error.
package keycheck

import (
	"sync"
	"unsafe"
)

// invalid maps a function value's identity to why it is invalid. It only
// holds functions built from invalid options, which a program builds a few
// of at start at most.
var invalid sync.Map

// id is the identity of the function value f: the pointer a func value
// holds, distinct for every closure and method value.
func id[F any](f F) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&f)) }

// Mark records that f is invalid, for err, and returns f.
func Mark[F any](f F, err error) F {
	invalid.Store(id(f), err)
	return f
}

// Err returns why f is invalid, nil when it was not marked.
func Err[F any](f F) error {
	if err, ok := invalid.Load(id(f)); ok {
		return err.(error)
	}
	return nil
}
