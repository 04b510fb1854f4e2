package lease_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/lease"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// counting is a store that counts the checks reaching it and sums the
// units it admitted: what it has consumed, leases included.
type counting struct {
	core.Backend
	checks, units atomic.Int64
}

func (c *counting) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	if items[0].Op == core.OpPeek {
		return c.Backend.Do(ctx, items, now, out)
	}
	c.checks.Add(1)
	err := c.Backend.Do(ctx, items, now, out)
	if err == nil && out[0].Allowed {
		c.units.Add(int64(items[0].Cost))
	}
	return err
}

func newLeased(t *testing.T, store core.Backend, ps []core.Policy, opts ...lease.Option) *lease.Backend {
	t.Helper()
	b, err := lease.New(store, ps, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	_, err := lease.New(must.Do(memstore.New()), []core.Policy{{Limit: 10, Window: time.Second, Algorithm: core.LeakyBucket}})
	if !errors.Is(err, core.ErrUnsupported) {
		t.Errorf("leaky bucket: %v, want ErrUnsupported", err)
	}
	// A leased slot is taken at the lease's instant and given back at its
	// check's: the store would keep it for its whole lifetime.
	if _, err := lease.New(must.Do(memstore.New()), []core.Policy{core.MustParsePolicy("4;algorithm=concurrency")}); !errors.Is(err, core.ErrUnsupported) {
		t.Errorf("concurrency limit: %v, want ErrUnsupported", err)
	}
	if _, err := lease.New(must.Do(memstore.New()), []core.Policy{{Limit: 0, Window: time.Second}}); !errors.Is(err, core.ErrInvalidPolicy) {
		t.Errorf("invalid policy: %v", err)
	}
	if _, err := lease.New(nil, nil); err == nil {
		t.Error("nil store: no error")
	}
	if _, err := lease.New(must.Do(memstore.New()), nil); err == nil {
		t.Error("no policy to lease: no error")
	}
	ps := []core.Policy{{Limit: 10, Window: time.Second}}
	for name, o := range map[string]lease.Option{
		"hot rate": lease.WithHotRate(-1), "lifetime": lease.WithLifetime(-time.Second),
		"max units": lease.WithMaxUnits(-1), "max keys": lease.WithMaxKeys(-1),
	} {
		if _, err := lease.New(must.Do(memstore.New()), ps, o); err == nil {
			t.Errorf("negative %s: no error", name)
		}
	}
}

// TestBounded: a lease backend is core.Bounded exactly when its store is.
func TestBounded(t *testing.T) {
	t.Parallel()
	ps := []core.Policy{{Limit: 10, Window: time.Second}}
	if b := newLeased(t, must.Do(memstore.New()), ps); !bounded(b) {
		t.Error("over the memory store: not bounded")
	}
	if b := newLeased(t, unbounded{must.Do(memstore.New())}, ps); bounded(b) {
		t.Error("over a store that says nothing: bounded")
	}
}

// unbounded hides the store's optional interfaces.
type unbounded struct{ core.Backend }

// allowance is the most a GCRA or token-bucket policy of limit per window
// (burst = limit) may admit from start to t.
func allowance(p core.Policy, start, t time.Time) int64 {
	return int64(p.Limit) + int64(t.Sub(start))*int64(p.Limit)/int64(p.Window)
}

// TestHotKeyFromLeases: one instance checks one key 100,000 times a second
// for 1 s of manual time, under a GCRA policy of 200,000 per second: every
// check is admitted, and leases serve all but a few without a store call.
func TestHotKeyFromLeases(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 200_000, Window: time.Second, Algorithm: core.GCRA}
	store := &counting{Backend: must.Do(memstore.New())}
	b := newLeased(t, store, []core.Policy{p})
	const n = 100_000
	for i := range n {
		d, err := backendtest.CheckOne(context.Background(), b, "hot", p, 1, t0.Add(time.Duration(i)*10*time.Microsecond))
		if err != nil || !d.Allowed {
			t.Fatalf("check %d: %+v %v", i, d, err)
		}
	}
	s := b.Stats()
	if store.checks.Load() > n/50 || s.LocalAdmits < n*9/10 {
		t.Fatalf("%d store checks for %d checks, %+v", store.checks.Load(), n, s)
	}
	t.Logf("%d checks, %d store calls, %+v", n, store.checks.Load(), s)
}

// TestHotKeyOverItsLimit: the same key checked twice as fast as its policy
// allows (100,000 a second against 50,000) for 2 s of manual time. At no
// instant has more been admitted than the policy allows, and every denial
// comes from the store, with its exact RetryAfter: a lease never denies.
func TestHotKeyOverItsLimit(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 50_000, Window: time.Second, Algorithm: core.GCRA}
	store := &counting{Backend: must.Do(memstore.New())}
	b := newLeased(t, store, []core.Policy{p})
	var admitted int64
	for i := range 200_000 {
		now := t0.Add(time.Duration(i) * 10 * time.Microsecond)
		before := store.checks.Load()
		d, err := backendtest.CheckOne(context.Background(), b, "hot", p, 1, now)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			if admitted++; admitted > allowance(p, t0, now) {
				t.Fatalf("check %d at %v: %d admitted, the policy allows %d", i, now.Sub(t0), admitted, allowance(p, t0, now))
			}
		} else if store.checks.Load() == before || d.Source != core.SourcePrimary || d.RetryAfter <= 0 {
			t.Fatalf("check %d: a denial not from the store: %+v", i, d)
		}
	}
	if b.Stats().Leases == 0 {
		t.Fatalf("no lease while the key had room: %+v", b.Stats())
	}
	t.Logf("%d admitted (allowed %d), %d store calls, %+v", admitted, allowance(p, t0, t0.Add(2*time.Second)), store.checks.Load(), b.Stats())
}

// TestColdKeyGoesToStore: a key checked 10 times a second never gets a
// lease: every check is the store's.
func TestColdKeyGoesToStore(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 100, Window: time.Second}
	store := &counting{Backend: must.Do(memstore.New())}
	b := newLeased(t, store, []core.Policy{p})
	for i := range 50 {
		d, err := backendtest.CheckOne(context.Background(), b, "cold", p, 1, t0.Add(time.Duration(i)*100*time.Millisecond))
		if err != nil || !d.Allowed || d.Source != core.SourcePrimary {
			t.Fatalf("check %d: %+v %v", i, d, err)
		}
	}
	if store.checks.Load() != 50 || b.Stats().Leases != 0 {
		t.Fatalf("%d store checks, %+v", store.checks.Load(), b.Stats())
	}
}

// TestFixedWindowLeaseEndsWithWindow: a fixed window's lease never serves a
// check after its window ends, so no window admits more than its limit.
func TestFixedWindowLeaseEndsWithWindow(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 20_000, Window: time.Second, Algorithm: core.FixedWindow}
	b := newLeased(t, must.Do(memstore.New()), []core.Policy{p}, lease.WithLifetime(time.Second))
	perWindow := map[int64]int{}
	for i := range 300_000 {
		now := t0.Add(time.Duration(i) * 10 * time.Microsecond)
		d, err := backendtest.CheckOne(context.Background(), b, "hot", p, 1, now)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			w := now.UnixMicro() / p.Window.Microseconds()
			if perWindow[w]++; perWindow[w] > p.Limit {
				t.Fatalf("window %d admitted more than %d", w, p.Limit)
			}
		}
	}
	if len(perWindow) < 3 || b.Stats().UnitsWasted == 0 && b.Stats().Leases == 0 {
		t.Fatalf("windows %v, stats %+v", perWindow, b.Stats())
	}
}

// TestUnlistedAndMultiPolicyChecksPassThrough: only single-policy checks of
// the policies given to New are leased.
func TestUnlistedAndMultiPolicyChecksPassThrough(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 1_000_000, Window: time.Hour, Algorithm: core.FixedWindow}
	q := core.Policy{Name: "other", Limit: 1_000_000, Window: time.Hour, Algorithm: core.FixedWindow}
	store := &counting{Backend: must.Do(memstore.New())}
	b := newLeased(t, store, []core.Policy{p})
	out := make([]core.Decision, 2)
	for i := range 1000 {
		now := t0.Add(time.Duration(i) * time.Microsecond)
		if _, err := backendtest.CheckOne(context.Background(), b, "k", q, 1, now); err != nil {
			t.Fatal(err)
		}
		if err := core.Check(context.Background(), b, "k", []core.Policy{p, q}, 1, now, out); err != nil {
			t.Fatal(err)
		}
	}
	if store.checks.Load() != 2000 || b.Stats().Leases != 0 {
		t.Fatalf("%d store checks for 2000 unleasable checks, %+v", store.checks.Load(), b.Stats())
	}
}

// TestResetDropsLeases: Reset through the Backend forgets its lease, so the
// next check sees the store's fresh state.
func TestResetDropsLeases(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 50_000, Window: time.Second}
	b := newLeased(t, must.Do(memstore.New()), []core.Policy{p})
	ctx := context.Background()
	for i := range 5000 {
		if _, err := backendtest.CheckOne(ctx, b, "k", p, 1, t0.Add(time.Duration(i)*5*time.Microsecond)); err != nil {
			t.Fatal(err)
		}
	}
	if b.Stats().Leases == 0 {
		t.Fatal("no lease taken")
	}
	if err := core.NewLimiter(b).Reset(ctx, "k", p); err != nil {
		t.Fatal(err)
	}
	d, err := backendtest.CheckOne(ctx, b, "k", p, 1, t0.Add(25*time.Millisecond))
	if err != nil || d.Source != core.SourcePrimary || d.Remaining != p.Limit-1 {
		t.Fatalf("after Reset: %+v %v", d, err)
	}
}

// TestInstancesShareHotKeyOnRedis: four instances, each with its own client
// and pool, hammer one key of a real Redis from 8 goroutines each under a
// shared manual clock. At every admitted check the total admitted by all of
// them is within what the policy allows by then, and the units wasted stay
// within the bound the package documents.
func TestInstancesShareHotKeyOnRedis(t *testing.T) {
	testInstances(t, func(t *testing.T) redis.UniversalClient { return redistest.Client(t) })
}

// TestInstancesShareHotKeyOnCluster is the same on the real Cluster.
func TestInstancesShareHotKeyOnCluster(t *testing.T) {
	testInstances(t, func(t *testing.T) redis.UniversalClient { return redistest.Cluster(t) })
}

func testInstances(t *testing.T, newClient func(t *testing.T) redis.UniversalClient) {
	const instances, goroutines, perGoroutine = 4, 8, 3000
	p := core.Policy{Limit: 20_000, Window: time.Second, Algorithm: core.GCRA}
	prefix := redistest.Prefix(t)
	clock := core.NewManualClock(t0)
	var bs []*lease.Backend
	var lims []*core.Limiter
	for range instances {
		s, err := redisstore.New(newClient(t), redisstore.WithPrefix(prefix), redisstore.WithTTLMargin(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		b := newLeased(t, s, []core.Policy{p}, lease.WithHotRate(100), lease.WithMaxUnits(200))
		bs = append(bs, b)
		lims = append(lims, core.NewLimiter(b, core.WithClock(clock)))
	}
	var mu sync.Mutex // orders "admitted" with the clock reading it is compared at
	var admitted int64
	var over atomic.Value
	var wg sync.WaitGroup
	for i := range instances * goroutines {
		wg.Go(func() {
			lim := lims[i%instances]
			for j := range perGoroutine {
				if j%8 == 0 {
					clock.Advance(20 * time.Microsecond)
				}
				d, err := lim.Allow(context.Background(), "hot", p)
				if err != nil {
					over.Store(err)
					return
				}
				if d.Allowed {
					mu.Lock()
					admitted++
					// The clock only moves forward, so reading it after
					// the check can only loosen the bound.
					if limit := allowance(p, t0, clock.Now()); admitted > limit {
						over.Store(errors.New("over-admission"))
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if v := over.Load(); v != nil {
		t.Fatal(v)
	}
	var st lease.Stats
	for _, b := range bs {
		s := b.Stats()
		st.Leases += s.Leases
		st.UnitsLeased += s.UnitsLeased
		st.UnitsWasted += s.UnitsWasted
		st.LocalAdmits += s.LocalAdmits
	}
	elapsed := clock.Now().Sub(t0)
	// At most the largest lease per instance per lease lifetime, plus the
	// lease each instance still holds.
	bound := uint64(200 * instances * (int(elapsed/(100*time.Millisecond)) + 2))
	if st.Leases == 0 || st.LocalAdmits == 0 || st.UnitsWasted > bound {
		t.Fatalf("stats %+v over %v; wasted bound %d", st, elapsed, bound)
	}
	t.Logf("%d checks over %v of manual time: %d admitted (allowed %d), %+v", instances*goroutines*perGoroutine, elapsed, admitted, allowance(p, t0, clock.Now()), st)
}

// TestWasteIsCountedAndBounded: a hot key that goes quiet leaves its lease
// to expire; the units it held are counted as wasted, at most the largest
// lease, and the store never gets them back (they were consumed).
func TestWasteIsCountedAndBounded(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 1_000_000, Window: time.Minute, Algorithm: core.TokenBucket}
	b := newLeased(t, must.Do(memstore.New()), []core.Policy{p}, lease.WithMaxUnits(500))
	ctx := context.Background()
	for i := range 10_000 {
		if d, err := backendtest.CheckOne(ctx, b, "k", p, 1, t0.Add(time.Duration(i)*10*time.Microsecond)); err != nil || !d.Allowed {
			t.Fatalf("check %d: %+v %v", i, d, err)
		}
	}
	held := b.Stats().UnitsLeased - b.Stats().LocalAdmits - b.Stats().Leases // units not yet handed out
	later := t0.Add(time.Second)                                             // far past the lease's lifetime
	d, err := backendtest.CheckOne(ctx, b, "k", p, 1, later)
	if err != nil || !d.Allowed || d.Source != core.SourcePrimary {
		t.Fatalf("after the lease expired: %+v %v", d, err)
	}
	s := b.Stats()
	if s.UnitsWasted != held || s.UnitsWasted > 500 {
		t.Fatalf("wasted %d, held %d, bound 500: %+v", s.UnitsWasted, held, s)
	}
	t.Logf("%+v", s)
}

// TestTrackedKeysBounded: a flood of distinct keys never grows the table
// past WithMaxKeys; keys beyond it go to the store untracked and still get
// the store's exact answers.
func TestTrackedKeysBounded(t *testing.T) {
	t.Parallel()
	p := core.Policy{Limit: 10, Window: time.Minute}
	store := &counting{Backend: must.Do(memstore.New())}
	b := newLeased(t, store, []core.Policy{p}, lease.WithMaxKeys(64))
	for i := range 10_000 {
		d, err := backendtest.CheckOne(context.Background(), b, "k"+strconv.Itoa(i), p, 1, t0)
		if err != nil || !d.Allowed || d.Remaining != 9 {
			t.Fatalf("key %d: %+v %v", i, d, err)
		}
	}
	if n := b.Tracked(); n > 64 {
		t.Fatalf("%d keys tracked, bound 64", n)
	}
}

// TestNeverAdmitsUnconsumedUnits: for every algorithm a lease may serve, a
// hot key checked faster than its limit, with time sometimes standing still
// and sometimes jumping: at every admission, the units admitted so far are
// at most the units the store has admitted (consumed) so far.
func TestNeverAdmitsUnconsumedUnits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a     core.Algorithm
		limit int // 5,000: the key mostly has room; 2,000: it is mostly over its limit
	}{
		{core.GCRA, 5000}, {core.TokenBucket, 5000}, {core.FixedWindow, 5000}, {core.SlidingWindow, 5000}, {core.SlidingLog, 5000},
		{core.GCRA, 2000}, {core.TokenBucket, 2000}, {core.FixedWindow, 2000}, {core.SlidingWindow, 2000}, {core.SlidingLog, 2000},
	} {
		t.Run(fmt.Sprint(c.a, c.limit), func(t *testing.T) {
			p := core.Policy{Limit: c.limit, Window: 100 * time.Millisecond, Algorithm: c.a}
			store := &counting{Backend: must.Do(memstore.New())}
			b := newLeased(t, store, []core.Policy{p})
			now := t0
			var admitted int64
			for i := range 200_000 {
				switch i % 1000 {
				case 0:
					now = now.Add(37 * time.Millisecond)
				default:
					now = now.Add(time.Duration(i%3) * 5 * time.Microsecond)
				}
				d, err := backendtest.CheckOne(context.Background(), b, "hot", p, 1+i%2, now)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					admitted += int64(1 + i%2)
					if admitted > store.units.Load() {
						t.Fatalf("check %d: %d units admitted, %d consumed in the store", i, admitted, store.units.Load())
					}
				}
			}
			if b.Stats().Leases == 0 {
				t.Fatalf("no lease: %+v", b.Stats())
			}
			t.Logf("%d admitted, %d consumed, %+v", admitted, store.units.Load(), b.Stats())
		})
	}
}

// bounded reports whether b is a core.Bounded that says yes.
func bounded(b core.Backend) bool {
	bb, ok := b.(core.Bounded)
	return ok && bb.Bounded()
}
