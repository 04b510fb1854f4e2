package memstore_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

// TestNewStartsNoGoroutine: a store reclaims on the request path and starts
// no goroutine.
func TestNewStartsNoGoroutine(t *testing.T) {
	// goleak rather than runtime.NumGoroutine, which also counts the
	// runtime's finalizer goroutine while it runs a finalizer.
	existing := goleak.IgnoreCurrent()
	stores := make([]*memstore.Store, 100)
	for i := range stores {
		stores[i] = must.Do(memstore.New())
	}
	goleak.VerifyNone(t, existing)
	runtime.KeepAlive(stores)
}

// TestIncrementalReclaimBoundsMemory floods every algorithm with distinct
// keys over a long stretch of (manual) time, with no sweeper and no cap: the
// states held stay bounded by those still live plus what the incremental
// walk has not reached yet, instead of growing with every key ever seen.
func TestIncrementalReclaimBoundsMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, a := range core.Algorithms() {
		t.Run(string(a), func(t *testing.T) {
			s := must.Do(memstore.New())
			p := core.Policy{Name: "p", Limit: 10, Window: time.Second, Algorithm: a}
			// 200,000 keys, one check each, 1 ms apart: about 1,000 live at
			// any moment under a 1 s window (2,000 for the sliding window,
			// whose state lasts two windows).
			now := t0
			maxLen := 0
			for i := range 200_000 {
				if _, err := backendtest.CheckOne(ctx, s, "k"+strconv.Itoa(i), p, 1, now); err != nil {
					t.Fatal(err)
				}
				now = now.Add(time.Millisecond)
				maxLen = max(maxLen, s.Len())
			}
			if maxLen > 5_000 {
				t.Fatalf("held up to %d states for about 2,000 live ones", maxLen)
			}
			t.Logf("%s: at most %d states held, %d at the end", a, maxLen, s.Len())
		})
	}
}

// TestHotKeyKeptThroughItsGrace: the walk that insertions take leaves a
// state 100 ms past its expiry, so that a key used again soon after is
// updated in place, and takes it after that.
func TestHotKeyKeptThroughItsGrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.Do(memstore.New())
	p := core.Policy{Name: "p", Limit: 10, Window: time.Second, Algorithm: core.GCRA} // one admission expires in 100 ms
	check := func(key string, at time.Time) {
		t.Helper()
		if _, err := backendtest.CheckOne(ctx, s, key, p, 1, at); err != nil {
			t.Fatal(err)
		}
	}
	flood := func(prefix string, at time.Time) { // enough insertions to walk the whole table
		for i := range 2000 {
			check(prefix+strconv.Itoa(i), at)
		}
	}
	check("hot", t0)
	flood("a", t0.Add(150*time.Millisecond)) // "hot" expired 50 ms ago
	if n := s.Len(); n != 2001 {
		t.Fatalf("%d states after the first flood, want 2,001: the hot key was taken within its grace", n)
	}
	flood("b", t0.Add(300*time.Millisecond)) // "hot" expired 200 ms ago; the "a" keys 50 ms ago
	if n := s.Len(); n != 4000 {
		t.Fatalf("%d states after the second flood, want 4,000: the hot key was kept past its grace", n)
	}
}
