package memstore

import (
	"context"
	"hash/maphash"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ratelimit-go/ratelimit/internal/must"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/algo"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// held counts the states in every table, to hold Len to the truth.
func (s *Store) held() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, t := range sh.tabs {
			if t != nil {
				n += t.size()
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// TestClockSetBackKeepsState moves the clock far ahead on one key, then
// back: state written on the earlier clock is not swept by the later one.
func TestClockSetBackKeepsState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.Do(New())
	p := core.Policy{Limit: 1, Window: time.Hour}
	if _, err := backendtest.CheckOne(ctx, s, "future", p, 1, t0.AddDate(50, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := backendtest.CheckOne(ctx, s, "k", p, 1, t0); err != nil {
		t.Fatal(err)
	}
	s.Sweep()
	if d, err := backendtest.CheckOne(ctx, s, "k", p, 1, t0.Add(time.Minute)); err != nil || d.Allowed {
		t.Fatalf("k after a sweep: %+v, %v; want still denied", d, err)
	}
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2", s.Len())
	}
}

func TestWithShardsRoundsToPowerOfTwo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want int }{{0, defaultShards}, {1, 1}, {3, 4}, {64, 64}, {65, 128}, {maxShards, maxShards}} {
		s := must.Do(New(WithShards(c.in)))
		if len(s.shards) != c.want || s.mask != uint64(c.want-1) {
			t.Errorf("WithShards(%d): %d shards, mask %x; want %d", c.in, len(s.shards), s.mask, c.want)
		}
	}
}

// TestInvalidOptionsAreAnErrorAtNew: an option out of its range stops New
// with an error naming it, instead of building a store that differs from
// the one asked for (clamped or defaulted), and never a panic.
func TestInvalidOptionsAreAnErrorAtNew(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]Option{
		"WithShards(-5)":      WithShards(-5),
		"WithShards(1048576)": WithShards(1 << 20),
		"WithMaxKeys(-1)":     WithMaxKeys(-1),
	} {
		s, err := New(opt)
		if err == nil || s != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: New = %v, %v; want an error naming the option", name, s, err)
		}
	}
}

// TestSweepReclaimsExactlyTheExpired drives expiry with explicit instants:
// a GCRA state of cost 1 under 10/s lives exactly 100ms.
func TestSweepReclaimsExactlyTheExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.Do(New(WithShards(4)))
	p := core.Policy{Limit: 10, Window: time.Second, Algorithm: core.GCRA}
	for i := range 1000 {
		if _, err := backendtest.CheckOne(ctx, s, "a"+strconv.Itoa(i), p, 1, t0); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(50 * time.Millisecond)
	for i := range 500 {
		if _, err := backendtest.CheckOne(ctx, s, "b-a-key-long-enough-for-the-string-map-"+strconv.Itoa(i), p, 1, later); err != nil {
			t.Fatal(err)
		}
	}
	s.Sweep()
	if s.Len() != 1500 {
		t.Fatalf("before expiry: Len = %d, want 1500", s.Len())
	}
	// The store learns time only from checks: a peek at 100ms - 1µs ...
	peek := make([]core.Decision, 1)
	if err := core.Peek(ctx, s, "other", []core.Policy{p}, t0.Add(100*time.Millisecond-time.Microsecond), peek); err != nil {
		t.Fatal(err)
	}
	s.Sweep()
	if s.Len() != 1500 {
		t.Fatalf("1µs before expiry: Len = %d, want 1500", s.Len())
	}
	// ... and once it has moved on by the publishing grain, the first
	// thousand are gone and the other 500 stay.
	if err := core.Peek(ctx, s, "other", []core.Policy{p}, t0.Add(100*time.Millisecond-time.Microsecond+publishGrain*time.Microsecond), peek); err != nil {
		t.Fatal(err)
	}
	s.Sweep()
	if s.Len() != 500 || s.held() != 500 {
		t.Fatalf("at expiry: Len = %d, held %d, want 500", s.Len(), s.held())
	}
	if _, err := backendtest.CheckOne(ctx, s, "b-a-key-long-enough-for-the-string-map-0", p, 1, t0.Add(150*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	s.Sweep()
	if s.Len() != 1 || s.held() != 1 { // b0 was checked again and lives on
		t.Fatalf("after the second expiry: Len = %d, held %d, want 1", s.Len(), s.held())
	}
}

// TestSweepInterleavesWithChecks sweeps a shard far larger than a chunk
// while other goroutines check, create and reset keys in it, and holds Len
// to the states really held.
func TestSweepInterleavesWithChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.Do(New(WithShards(1)))
	p := core.Policy{Limit: 10, Window: time.Second, Algorithm: core.FixedWindow}
	for i := range 20 * sweepChunk {
		if _, err := backendtest.CheckOne(ctx, s, "old"+strconv.Itoa(i), p, 1, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := backendtest.CheckOne(ctx, s, "old-and-long-enough-for-the-string-map-"+strconv.Itoa(i), p, 1, t0); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(time.Second) // the first window has ended
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := "new-and-long-enough-for-the-string-map-" + strconv.Itoa(g) + "-" + strconv.Itoa(i%300)
				if _, err := backendtest.CheckOne(ctx, s, k, p, 1, now); err != nil {
					t.Error(err)
					return
				}
				if i%7 == 0 {
					if err := core.NewLimiter(s).Reset(ctx, "old"+strconv.Itoa(i), p); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	for range 3 {
		s.Sweep()
	}
	wg.Wait()
	s.Sweep()
	if s.Len() != s.held() || s.Len() != 4*300 {
		t.Fatalf("Len = %d, held %d, want %d", s.Len(), s.held(), 4*300)
	}
}

// TestMemoryReturnsAfterExpiry fills the store, lets everything expire and
// sweeps: the maps are rebuilt and the heap drops back.
func TestMemoryReturnsAfterExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 200,000 keys")
	}
	const n = 200_000
	ctx := context.Background()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	s := must.Do(New())
	p := core.Policy{Limit: 100, Window: time.Minute, Algorithm: core.GCRA}
	for _, k := range keys {
		if _, err := backendtest.CheckOne(ctx, s, k, p, 1, t0); err != nil {
			t.Fatal(err)
		}
	}
	full := heap()
	if full-base < n*24 {
		t.Fatalf("heap grew by %d bytes for %d keys; the measurement is broken", full-base, n)
	}
	if _, err := backendtest.CheckOne(ctx, s, "tick", p, 1, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.Sweep()
	after := heap()
	if s.Len() != 1 {
		t.Fatalf("Len = %d after expiry, want 1", s.Len())
	}
	grown, left := full-base, int64(after)-int64(base)
	if left > int64(grown/10) {
		t.Fatalf("heap: %d before, %d full, %d after sweeping; want at most 10%% of the %d bytes grown to remain", base, full, after, grown)
	}
	t.Logf("heap: base %d, full %d (+%d B/key), after sweep %d", base, full, int(grown)/n, after)
	runtime.KeepAlive(keys)
}

// TestKeysAreCloned passes keys that alias a buffer the caller reuses.
func TestKeysAreCloned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.Do(New())
	p := core.Policy{Limit: 1, Window: time.Minute}
	for _, n := range []int{1, 5, 16, 17, 40} {
		buf := []byte("alpha-and-then-many-more-bytes-of-a-request-line")
		key := unsafe.String(&buf[0], n)
		orig := string(buf[:n])
		if d, err := backendtest.CheckOne(ctx, s, key, p, 1, t0); err != nil || !d.Allowed {
			t.Fatalf("len %d: first check: %+v, %v", n, d, err)
		}
		copy(buf, "omega")
		if d, err := backendtest.CheckOne(ctx, s, orig, p, 1, t0); err != nil || d.Allowed {
			t.Fatalf("len %d: %q after the buffer changed: %+v, %v; want denied", n, orig, d, err)
		}
		if d, err := backendtest.CheckOne(ctx, s, string(buf[:n]), p, 1, t0); err != nil || !d.Allowed {
			t.Fatalf("len %d: %q: %+v, %v; want admitted, a key of its own", n, buf[:n], d, err)
		}
	}
}

// TestKeysStayDistinct checks keys that differ only in trailing zero bytes
// or in one byte at the end.
func TestKeysStayDistinct(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.Do(New())
	p := core.Policy{Limit: 1, Window: time.Minute}
	keys := []string{"a", "a\x00", "a\x00\x00", "\x00", "\x00\x00",
		"123456789012345", "1234567890123456", "123456789012345\x00", "12345678901234\x00"}
	for _, k := range keys {
		if d, err := backendtest.CheckOne(ctx, s, k, p, 1, t0); err != nil || !d.Allowed {
			t.Fatalf("%q: %+v, %v; want admitted, a key of its own", k, d, err)
		}
	}
	for _, k := range keys {
		if d, err := backendtest.CheckOne(ctx, s, k, p, 1, t0); err != nil || d.Allowed {
			t.Fatalf("%q again: %+v, %v; want denied", k, d, err)
		}
	}
	if s.Len() != len(keys) || s.held() != len(keys) {
		t.Fatalf("Len = %d, held %d; want %d", s.Len(), s.held(), len(keys))
	}
	for _, k := range keys {
		if err := core.NewLimiter(s).Reset(ctx, k, p); err != nil {
			t.Fatal(err)
		}
	}
	if s.Len() != 0 || s.held() != 0 {
		t.Fatalf("after resetting every key: Len = %d, held %d", s.Len(), s.held())
	}
}

// TestSlidingLogMemoryIsBounded checks that a log never holds more than the
// limit and that a sweep shrinks the buffer of an idle key.
func TestSlidingLogMemoryIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.Do(New(WithShards(1)))
	p := core.Policy{Limit: 100, Window: time.Second, Algorithm: core.SlidingLog}
	now := t0
	for range 5000 {
		now = now.Add(time.Millisecond)
		if _, err := backendtest.CheckOne(ctx, s, "k", p, 1, now); err != nil {
			t.Fatal(err)
		}
	}
	pi := s.reg.lookup(&p)
	l, _ := s.shards[0].tabs[pi.id].(*table[*logState]).lookup("k")
	if l.Len() > 100 || logCap(l) > 100 {
		t.Fatalf("log holds %d entries in a buffer of %d; want at most the limit 100", l.Len(), logCap(l))
	}
	// Move the store's time so that only the 20 newest entries (1ms apart)
	// are still inside the window: a sweep compacts the buffer.
	if l.Len() != 100 {
		t.Fatalf("log holds %d entries, want a full 100", l.Len())
	}
	cutoff := time.UnixMicro(logAt(l, l.Len()-21))
	if _, err := backendtest.CheckOne(ctx, s, "tick", p, 1, cutoff.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	s.Sweep()
	if l.Len() != 20 || logCap(l) > 40 {
		t.Fatalf("after a sweep: %d entries in a buffer of %d; want 20 in at most 40", l.Len(), logCap(l))
	}
}

// TestReclaimSkipsTheCheckedKey fills a capped store, lets a key expire and
// checks that key again with a second policy: its own expired state must
// not be reclaimed under the check, or the count would drift.
func TestReclaimSkipsTheCheckedKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.Do(New(WithShards(1), WithMaxKeys(2)))
	a := core.Policy{Name: "a", Limit: 1, Window: time.Second}
	b := core.Policy{Name: "b", Limit: 1, Window: time.Second}
	if _, err := backendtest.CheckOne(ctx, s, "k", a, 1, t0); err != nil {
		t.Fatal(err)
	}
	// Under b, so that inserting it steps through b's table, not a's.
	if _, err := backendtest.CheckOne(ctx, s, "live", b, 1, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	// Full. "k" under a has expired; "k" under b is new: the check needs
	// room for one state and may not take k's own.
	out := make([]core.Decision, 2)
	err := core.Check(ctx, s, "k", []core.Policy{a, b}, 1, t0.Add(time.Second), out)
	if err != ErrStoreFull {
		t.Fatalf("Check = %v, want ErrStoreFull", err)
	}
	if s.Len() != 2 || s.held() != 2 {
		t.Fatalf("Len = %d, held %d, want 2", s.Len(), s.held())
	}
}

// TestTableMatchesAMap drives one small table through random inserts,
// updates and deletions (by drop, reclaim and sweep) over a few hundred
// keys, small enough that probe sequences collide and wrap around, and
// compares it with a Go map after every step.
func TestTableMatchesAMap(t *testing.T) {
	t.Parallel()
	p := &core.Params{Window: 10}
	seed := maphash.MakeSeed()
	tb := newTable[algo.GCRAState](p, seed)
	model := map[string]algo.GCRAState{}
	rng := rand.New(rand.NewPCG(1, 2))
	var mu sync.Mutex
	var clock atomic.Int64
	check := func(step int) {
		t.Helper()
		if tb.size() != len(model) {
			t.Fatalf("step %d: size %d, model %d", step, tb.size(), len(model))
		}
		for k, v := range model {
			if got, ok := tb.lookup(k); !ok || got != v {
				t.Fatalf("step %d: %q = %v, %v; want %v", step, k, got, ok, v)
			}
		}
		n := 0
		for i, tag := range tb.tags {
			if tag != 0 {
				n++
				if _, ok := model[tb.slots[i].key]; !ok {
					t.Fatalf("step %d: slot %d holds %q, absent from the model", step, i, tb.slots[i].key)
				}
			}
		}
		if n != len(model) {
			t.Fatalf("step %d: %d occupied slots, model %d", step, n, len(model))
		}
	}
	for step := range 20000 {
		k := "k" + strconv.Itoa(rng.IntN(300))
		h := maphash.String(seed, k)
		switch r := rng.IntN(100); {
		case r < 60:
			v := algo.GCRAState{TAT: rng.Int64N(100)}
			if i := tb.find(k, h); i >= 0 {
				tb.slots[i].st = v
			} else {
				tb.insert(k, h, v, -1<<62, true) // nothing expires: the model sees every entry
			}
			model[k] = v
		case r < 85:
			_, want := model[k]
			if got := tb.drop(k, h); got != want {
				t.Fatalf("step %d: drop(%q) = %v, want %v", step, k, got, want)
			}
			delete(model, k)
		case r < 95:
			now := rng.Int64N(100)
			removed, _ := tb.reclaim(now, 50, k, rng.Uint64())
			gone := 0
			for mk, v := range model {
				if _, ok := tb.lookup(mk); !ok {
					if mk == k || v.TAT > now {
						t.Fatalf("step %d: reclaim at %d removed %q (%d)", step, now, mk, v.TAT)
					}
					delete(model, mk)
					gone++
				}
			}
			if gone != removed {
				t.Fatalf("step %d: reclaim reported %d, removed %d", step, removed, gone)
			}
		default:
			now := rng.Int64N(60)
			clock.Store(now)
			mu.Lock()
			removed := tb.sweep(&mu, &clock, 7)
			mu.Unlock()
			gone := 0
			for mk, v := range model {
				if v.TAT <= now {
					delete(model, mk)
					gone++
				}
			}
			if gone != removed {
				t.Fatalf("step %d: sweep at %d removed %d, want %d", step, now, removed, gone)
			}
			tb.shrink()
		}
		check(step)
	}
}

// TestStagedCommitAfterReclaim: a multi-policy check that is admitted writes
// the states it staged while deciding; when reserving room for them
// reclaims other keys' expired states (which moves entries in the tables),
// the key's slots are looked up again, so each policy consumes exactly once.
func TestStagedCommitAfterReclaim(t *testing.T) {
	t.Parallel()
	s := must.Do(New(WithShards(1), WithMaxKeys(4)))
	ctx := context.Background()
	ps := []core.Policy{
		{Name: "g", Limit: 10, Window: time.Second, Algorithm: core.GCRA},
		{Name: "f", Limit: 10, Window: time.Second, Algorithm: core.FixedWindow},
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	out := make([]core.Decision, 2)
	for _, k := range []string{"a", "b"} {
		if err := core.Check(ctx, s, k, ps, 1, t0, out); err != nil || !out[0].Allowed || !out[1].Allowed {
			t.Fatalf("%s: %+v %v", k, out, err)
		}
	}
	later := t0.Add(3 * time.Second) // a and b have expired; the store is full
	for i := range 3 {
		if err := core.Check(ctx, s, "c", ps, 2, later, out); err != nil || !out[0].Allowed || !out[1].Allowed {
			t.Fatalf("c, check %d: %+v %v", i, out, err)
		}
	}
	if err := core.Peek(ctx, s, "c", ps, later, out); err != nil || out[0].Remaining != 4 || out[1].Remaining != 4 {
		t.Fatalf("after three checks of cost 2: %+v %v; want 4 remaining under both", out, err)
	}
	if s.Len() > 4 {
		t.Fatalf("Len %d over the cap", s.Len())
	}
}

// logCap is the length of a sliding log's buffer.
func logCap(l *logState) int { return reflect.ValueOf(&l.Log).Elem().FieldByName("buf").Len() }

// logAt is the i-th oldest entry of a sliding log.
func logAt(l *logState, i int) int64 {
	v := reflect.ValueOf(&l.Log).Elem()
	buf := v.FieldByName("buf")
	return buf.Index((int(v.FieldByName("head").Int()) + i) % buf.Len()).Int()
}
