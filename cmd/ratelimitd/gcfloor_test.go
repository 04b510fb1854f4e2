package main

import (
	goruntime "runtime"
	"runtime/debug"
	"testing"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		current    int
		live, goal uint64
		want       int
	}{
		{100, 0, 4 * mib, 100},          // nothing measured yet
		{100, 1 * mib, 4 * mib, 2100},   // 1 MiB live, a 4 MiB goal: 21 times the growth
		{2100, 1 * mib, 70 * mib, 1917}, // overshot (stacks grew): back towards 64 MiB
		{100, 1 * mib, 2 * mib, 6300},   // nothing but the heap: 63 times
		{100, 32 * mib, 64 * mib, 100},  // half the floor: the default reaches it
		{100, 20 * mib, 60 * mib, 110},  // stacks and globals count
		{100, 1 << 30, 2 << 30, 100},    // a large heap is left to the default
		{6300, 40 * mib, 2 << 30, 100},  // the live heap grew: back to the default
	} {
		got := gcPercentFor(c.current, c.live, c.goal, heapFloor)
		if got != c.want {
			t.Errorf("GOGC %d, live %d, goal %d: GOGC %d, want %d", c.current, c.live, c.goal, got, c.want)
		}
	}
}

// gcPercent reads the collector's GOGC.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestKeepHeapFloor: after a collection the small heap of this test
// process gets a GOGC above the default, until stop restores the default;
// with GOGC in the environment nothing changes.
func TestKeepHeapFloor(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	stop := keepHeapFloor(func(string) (string, bool) { return "", false })
	for i := 0; i < 50 && gcPercent() <= 100; i++ {
		goruntime.GC()
		goruntime.Gosched()
	}
	if p := gcPercent(); p <= 100 {
		stop()
		t.Fatalf("GOGC %d after collections of a small heap, want more than 100", p)
	}
	stop()
	goruntime.GC()
	goruntime.GC()
	if p := gcPercent(); p != 100 {
		t.Fatalf("GOGC %d after stop, want 100", p)
	}
	debug.SetGCPercent(100)
	stop = keepHeapFloor(func(name string) (string, bool) { return "100", name == "GOGC" })
	goruntime.GC()
	goruntime.GC()
	stop()
	if p := gcPercent(); p != 100 {
		t.Fatalf("GOGC %d with GOGC set in the environment, want it left alone", p)
	}
}
