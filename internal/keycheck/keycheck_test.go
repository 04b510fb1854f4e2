package keycheck

import (
	"errors"
	"testing"
)

type fn func() int

func TestMarkIsPerValue(t *testing.T) {
	t.Parallel()
	mk := func(n int) fn { return func() int { return n } }
	a, b := mk(1), mk(2)
	bad := errors.New("bad")
	Mark(a, bad)
	if Err(a) != bad || Err(b) != nil {
		t.Fatalf("Err(a) = %v, Err(b) = %v", Err(a), Err(b))
	}
	var nilFn fn
	if Err(nilFn) != nil {
		t.Fatal("a nil function is marked")
	}
}
