package main

import (
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapFloor is the smallest heap goal the service gives the garbage
// collector while its live heap is small.
//
// The service's live heap is a few MiB (configuration, connections, the
// state of the keys it sees), and Go's default goal is twice the live heap
// with a floor of 4 MiB. net/http and gRPC allocate a few KiB per request,
// so under load the collector would run many times a second and its pauses
// and assists would be the tail of the latency (the README gives the
// measurement, taken with GODEBUG=gctrace=1 and load -rate). A floor of
// 64 MiB costs that much memory at most and leaves a large heap (many
// keys) to the default.
const heapFloor = 64 << 20

// gcPercentFor returns the GOGC that moves the heap goal to floor bytes,
// and never below the default, 100, given the live heap and the goal the
// collector set at GOGC current. Above the live heap the goal grows in
// proportion to GOGC (by GOGC percent of the live heap, the stacks and the
// globals), so the new GOGC scales current by the growth wanted over the
// growth seen.
func gcPercentFor(current int, live, goal, floor uint64) int {
	if live == 0 || live >= floor/2 || goal <= live || current <= 0 {
		return 100
	}
	p := uint64(current) * (floor - live) / (goal - live)
	return int(max(100, min(p, 1_000_000)))
}

// keepHeapFloor keeps the collector's heap goal at heapFloor at least,
// until stop is called, unless GOGC is set in the environment (then the
// operator's setting stands). After each collection it sets GOGC from the
// live heap that collection left (gcPercentFor). It starts no goroutine:
// the check runs as a finalizer, on the runtime's finalizer goroutine.
// main calls it once, for the life of the process; the tests, which run
// the service in their own process, do not.
func keepHeapFloor(lookupEnv func(string) (string, bool)) (stop func()) {
	if _, set := lookupEnv("GOGC"); set {
		return func() {}
	}
	var mu sync.Mutex
	stopped := false
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}}
	current := 100
	var after func()
	after = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		metrics.Read(sample)
		var v [2]uint64
		for i, s := range sample {
			if s.Value.Kind() == metrics.KindUint64 {
				v[i] = s.Value.Uint64()
			}
		}
		if p := gcPercentFor(current, v[0], v[1], heapFloor); p != current {
			debug.SetGCPercent(p)
			current = p
		}
		armAfterGC(after)
	}
	after()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			stopped = true
			debug.SetGCPercent(100)
		}
	}
}

// gcSentinel is an object whose only use is to be collected: large enough
// to have an allocation of its own (the runtime batches smaller pointer-free
// objects, whose finalizers may never run).
type gcSentinel struct{ _ [32]byte }

// armAfterGC runs f after the next garbage collection, on the finalizer
// goroutine.
func armAfterGC(f func()) {
	goruntime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { f() })
}
