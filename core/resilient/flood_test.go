package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
)

// floodHeapBound is the documented bound on the heap growth of a key flood
// against a fallback memory store capped at 100,000 keys.
const floodHeapBound = 32 << 20

// ipv6Key returns the i-th address of a client rotating through its /48.
func ipv6Key(i int) string {
	b := make([]byte, 0, 40)
	b = append(b, "2001:db8:"...)
	b = strconv.AppendUint(b, uint64(i>>32&0xffff), 16)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(i>>16&0xffff), 16)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(i&0xffff), 16)
	b = append(b, "::1"...)
	return string(b)
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestKeyFloodFallback: with Redis down, 1,000,000 distinct keys (rotating
// IPv6 addresses) hit the fallback memory store, capped at 100,000 keys.
// Nothing panics, the cap holds, the errors beyond it are typed, and the
// heap grows by less than floodHeapBound (measured: 6 MiB).
func TestKeyFloodFallback(t *testing.T) {
	keys, maxKeys := 1_000_000, 100_000
	if raceEnabled {
		keys, maxKeys = keys/5, maxKeys/5
		t.Logf("race detector on: flooding %d keys instead of 1,000,000", keys)
	}
	f := newFaulty(t)
	f.set(failing)
	fb := must.Do(memstore.New(memstore.WithMaxKeys(maxKeys)))
	b := must.Do(resilient.New(f, resilient.WithFallback(fb), resilient.WithDenyCache(0)))
	p := core.Policy{Limit: 100, Window: time.Minute, Algorithm: core.GCRA}
	ctx := context.Background()
	before := heapInUse()
	now := t0
	admitted, full := 0, 0
	for i := range keys {
		d, err := backendtest.CheckOne(ctx, b, ipv6Key(i), p, 1, now)
		switch {
		case err == nil && d.Allowed:
			admitted++
		case errors.Is(err, memstore.ErrStoreFull) && errors.Is(err, resilient.ErrUnavailable):
			full++
		default:
			t.Fatalf("key %d: %+v, %v", i, d, err)
		}
		now = now.Add(time.Microsecond)
	}
	grown := int64(heapInUse()) - int64(before)
	t.Logf("key flood: %d keys, %d admitted by the fallback, %d refused as full; store holds %d states; heap grew %.1f MiB",
		keys, admitted, full, fb.Len(), float64(grown)/(1<<20))
	// States expire 600 ms after their check and are reclaimed for new
	// keys, so more than maxKeys keys are admitted over the flood.
	if fb.Len() > maxKeys || admitted < maxKeys {
		t.Fatalf("store holds %d states after admitting %d; cap %d", fb.Len(), admitted, maxKeys)
	}
	if grown > floodHeapBound {
		t.Fatalf("heap grew by %d bytes, above the bound %d", grown, floodHeapBound)
	}
	runtime.KeepAlive(b)
}

// TestKeyFloodRedisTTL: 100,000 distinct keys, over every algorithm and
// some multi-policy checks, through the store on a real Redis: every key it
// writes carries a TTL.
func TestKeyFloodRedisTTL(t *testing.T) {
	const keys, workers = 100_000, 16
	srv := redisproc.Start(t)
	store := newRedisStore(t, srv, "flood:")
	b := must.Do(resilient.New(store, resilient.WithBudget(time.Second)))
	algs := core.Algorithms()
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			out := make([]core.Decision, 2)
			for {
				i := int(next.Add(1)) - 1
				if i >= keys {
					return
				}
				// Long windows: every key outlives the test, so the scan
				// finds them all.
				p := core.Policy{Limit: 10, Window: time.Hour, Algorithm: algs[i%len(algs)]}
				var err error
				if i%10 == 0 {
					q := core.Policy{Limit: 100, Window: 24 * time.Hour, Algorithm: algs[(i/10)%len(algs)]}
					err = core.Check(ctx, b, ipv6Key(i), []core.Policy{p, q}, 1, time.Now(), out)
				} else {
					_, err = backendtest.CheckOne(ctx, b, ipv6Key(i), p, 1, time.Now())
				}
				if err != nil {
					errs <- fmt.Errorf("key %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	elapsed := time.Since(start)

	c := srv.Client()
	defer c.Close()
	var cursor uint64
	scanned, withoutTTL := 0, 0
	for {
		batch, nextCursor, err := c.Scan(ctx, cursor, "flood:*", 2000).Result()
		if err != nil {
			t.Fatal(err)
		}
		pipe := c.Pipeline()
		ttls := make([]interface{ Val() time.Duration }, len(batch))
		for i, k := range batch {
			ttls[i] = pipe.PTTL(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for i, ttl := range ttls {
			scanned++
			if ttl.Val() <= 0 {
				withoutTTL++
				t.Errorf("key %q has no TTL (%v)", batch[i], ttl.Val())
			}
		}
		cursor = nextCursor
		if cursor == 0 {
			break
		}
	}
	want := keys + keys/10
	t.Logf("redis flood: %d checks in %v (%.0f/s); %d keys scanned, %d without a TTL", keys, elapsed, float64(keys)/elapsed.Seconds(), scanned, withoutTTL)
	if scanned != want {
		t.Fatalf("scanned %d keys, want %d (one per key and policy)", scanned, want)
	}
}
