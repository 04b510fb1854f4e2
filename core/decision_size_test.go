package core

import (
	"testing"
	"unsafe"
)

// TestDecisionSize pins the padding of Decision on 64-bit platforms: a whole
// number of 16-byte moves, so that copies of it by value do not stall.
func TestDecisionSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the padding is tuned for 64-bit platforms")
	}
	if got := unsafe.Sizeof(Decision{}); got%16 != 0 {
		t.Fatalf("Decision is %d bytes; keep it a multiple of 16 (see its padding)", got)
	}
}
