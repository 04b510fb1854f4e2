package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

func TestNewErrors(t *testing.T) {
	_, c := newMiniredis(t)
	if _, err := redisstore.New(nil); err == nil {
		t.Error("New(nil): want an error")
	}
	if _, err := redisstore.New((*redis.Client)(nil)); err == nil {
		t.Error("New of a nil *redis.Client: want an error")
	}
	if _, err := redisstore.New((*redis.ClusterClient)(nil)); err == nil {
		t.Error("New of a nil *redis.ClusterClient: want an error")
	}
	for name, opt := range map[string]redisstore.Option{
		"brace prefix":       redisstore.WithPrefix("app{x}:"),
		"long prefix":        redisstore.WithPrefix(strings.Repeat("p", 128+1)),
		"negative margin":    redisstore.WithTTLMargin(-time.Second),
		"no checks per call": redisstore.WithChecksPerCall(0),
		"negative pipelines": redisstore.WithPipelines(-1),
	} {
		if _, err := redisstore.New(c, opt); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := redisstore.New(c, nil); err != nil {
		t.Errorf("New with the client and a nil option: %v", err)
	}
}

func TestDefaultPrefix(t *testing.T) {
	m, c := newMiniredis(t)
	s := newStore(t, c)
	if _, err := backendtest.CheckOne(context.Background(), s, "k", core.Policy{Limit: 1, Window: time.Second}, 1, t0); err != nil {
		t.Fatal(err)
	}
	keys := m.Keys()
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "ratelimit:"+"{k}:") {
		t.Fatalf("keys %q, want one key starting with %q", keys, "ratelimit:"+"{k}:")
	}
}

// TestInvalidInputNoRoundTrip: everything the core rejects fails with the
// core's typed error before any command reaches Redis.
func TestInvalidInputNoRoundTrip(t *testing.T) {
	m, c := newMiniredis(t)
	s := newStore(t, c)
	ctx := context.Background()
	good := core.Policy{Limit: 5, Window: time.Second}
	out := make([]core.Decision, 2)
	cases := []struct {
		name     string
		key      string
		policies []core.Policy
		cost     int
		want     error
	}{
		{"empty key", "", []core.Policy{good}, 1, core.ErrInvalidKey},
		{"long key", strings.Repeat("k", core.MaxKeyLen+1), []core.Policy{good}, 1, core.ErrInvalidKey},
		{"no policy", "k", nil, 1, core.ErrNoPolicy},
		{"zero limit", "k", []core.Policy{{Window: time.Second}}, 1, core.ErrInvalidPolicy},
		{"unknown algorithm", "k", []core.Policy{{Limit: 1, Window: time.Second, Algorithm: "nope"}}, 1, core.ErrUnknownAlgorithm},
		{"bad second policy", "k", []core.Policy{good, {Limit: 1, Window: time.Nanosecond}}, 1, core.ErrInvalidPolicy},
		{"zero cost", "k", []core.Policy{good}, 0, core.ErrInvalidCost},
		{"negative cost", "k", []core.Policy{good}, -1, core.ErrInvalidCost},
		{"cost above capacity", "k", []core.Policy{good}, 6, core.ErrCostExceedsCapacity},
	}
	before := m.CommandCount()
	for _, tc := range cases {
		err := core.Check(ctx, s, tc.key, tc.policies, tc.cost, t0, out)
		if !errors.Is(err, tc.want) {
			t.Errorf("Check %s: got %v, want %v", tc.name, err, tc.want)
		}
		if len(tc.policies) == 1 {
			if d, err := backendtest.CheckOne(ctx, s, tc.key, tc.policies[0], tc.cost, t0); !errors.Is(err, tc.want) || d.Allowed {
				t.Errorf("CheckOne %s: got %+v, %v, want %v", tc.name, d, err, tc.want)
			}
		}
		if tc.want != core.ErrInvalidCost && tc.want != core.ErrCostExceedsCapacity {
			if err := core.Peek(ctx, s, tc.key, tc.policies, t0, out); !errors.Is(err, tc.want) {
				t.Errorf("Peek %s: got %v, want %v", tc.name, err, tc.want)
			}
			if err := core.NewLimiter(s).Reset(ctx, tc.key, tc.policies...); !errors.Is(err, tc.want) {
				t.Errorf("Reset %s: got %v, want %v", tc.name, err, tc.want)
			}
		}
	}
	if n := m.CommandCount() - before; n != 0 {
		t.Fatalf("invalid input sent %d commands to Redis, want 0", n)
	}
}

// TestTTLExact: on miniredis, where no time passes, every key written gets
// exactly the ResetAfter of the check that wrote it, in milliseconds rounded
// up; WithTTLMargin adds to it.
func TestTTLExact(t *testing.T) {
	m, c := newMiniredis(t)
	ctx := context.Background()
	for _, margin := range []time.Duration{0, 1500 * time.Microsecond} {
		s := newStore(t, c, redisstore.WithPrefix("ttl:"), redisstore.WithTTLMargin(margin))
		for _, p := range onePerAlgorithm(7, 10*time.Second+333*time.Microsecond) {
			m.FlushAll()
			d, err := backendtest.CheckOne(ctx, s, "user", p, 3, t0)
			if err != nil || !d.Allowed {
				t.Fatalf("%s: %+v, %v", p.Algorithm, d, err)
			}
			keys := m.Keys()
			if len(keys) != 1 {
				t.Fatalf("%s: keys %q, want one", p.Algorithm, keys)
			}
			want := (d.ResetAfter + time.Millisecond - 1).Truncate(time.Millisecond) + (margin + time.Millisecond - 1).Truncate(time.Millisecond)
			if got := m.TTL(keys[0]); got != want {
				t.Errorf("%s margin %v: TTL %v, want %v (ResetAfter %v)", p.Algorithm, margin, got, want, d.ResetAfter)
			}
		}
	}
}

// TestWindowExpiryStands: under a fixed window and a sliding window counter
// the key expires at a window boundary, the same instant for every check in
// the window, so the check that opens the window sets the TTL and later
// checks in it leave it as it is (on miniredis no time passes, so the TTL
// still reads what the first check wrote); the first check of the next
// window sets it anew.
func TestWindowExpiryStands(t *testing.T) {
	m, c := newMiniredis(t)
	ctx := context.Background()
	s := newStore(t, c, redisstore.WithPrefix("win:"))
	for _, a := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		m.FlushAll()
		p := core.Policy{Limit: 10, Window: 10 * time.Second, Algorithm: a}
		ttlOf := func(now time.Time) (core.Decision, time.Duration) {
			t.Helper()
			d, err := backendtest.CheckOne(ctx, s, "user", p, 1, now)
			if err != nil || !d.Allowed {
				t.Fatalf("%s at %v: %+v, %v", a, now, d, err)
			}
			keys := m.Keys()
			if len(keys) != 1 {
				t.Fatalf("%s: keys %q, want one", a, keys)
			}
			return d, m.TTL(keys[0])
		}
		start := t0.Truncate(p.Window)
		first, ttl := ttlOf(start.Add(time.Second))
		want := (first.ResetAfter + time.Millisecond - 1).Truncate(time.Millisecond)
		if ttl != want {
			t.Fatalf("%s: first TTL %v, want %v", a, ttl, want)
		}
		for _, at := range []time.Duration{2 * time.Second, 7*time.Second + 333*time.Microsecond} {
			if _, got := ttlOf(start.Add(at)); got != want {
				t.Errorf("%s: TTL %v after a check %v into the window, want %v as the first check wrote it", a, got, at, want)
			}
		}
		next, ttl := ttlOf(start.Add(p.Window + 3*time.Second))
		if want := (next.ResetAfter + time.Millisecond - 1).Truncate(time.Millisecond); ttl != want {
			t.Errorf("%s: TTL %v in the next window, want %v", a, ttl, want)
		}
	}
}

// TestDeniedWritesNothing: a denied multi-policy check leaves every key as it
// was, including the policy that had room and a sliding log with entries
// that have left the window (no trimming).
func TestDeniedWritesNothing(t *testing.T) {
	m, c := newMiniredis(t)
	s := newStore(t, c, redisstore.WithPrefix("deny:"))
	ctx := context.Background()
	for _, p := range onePerAlgorithm(3, time.Second) {
		roomy := core.Policy{Limit: 100, Window: time.Hour, Algorithm: core.SlidingLog}
		ps := []core.Policy{roomy, p}
		out := make([]core.Decision, 2)
		now := t0
		for i := range 3 {
			if err := core.Check(ctx, s, "k", ps, 1, now, out); err != nil || !out[0].Allowed || !out[1].Allowed {
				t.Fatalf("%s: fill %d: %+v %v", p.Algorithm, i, out, err)
			}
		}
		before := snapshot(t, c, "deny:")
		ttlBefore := map[string]time.Duration{}
		for k := range before {
			ttlBefore[k] = m.TTL(k)
		}
		if err := core.Check(ctx, s, "k", ps, 1, now, out); err != nil || out[1].Allowed || out[1].RetryAfter <= 0 {
			t.Fatalf("%s: want a denial, got %+v %v", p.Algorithm, out, err)
		}
		if !out[0].Allowed || out[0].Remaining != 97 || out[0].RetryAfter != 0 {
			t.Errorf("%s: the policy with room reports %+v, want its state as it stands", p.Algorithm, out[0])
		}
		after := snapshot(t, c, "deny:")
		if len(after) != len(before) {
			t.Fatalf("%s: %d keys before the denial, %d after", p.Algorithm, len(before), len(after))
		}
		for k, v := range before {
			if after[k] != v || m.TTL(k) != ttlBefore[k] {
				t.Errorf("%s: denied check changed %q from %s to %s", p.Algorithm, k, v, after[k])
			}
		}
		m.FlushAll()
	}
}

// TestScriptErrorIsWrapped: a script that fails (here on a key of the wrong
// type) yields a wrapped error naming the operation and never an admission.
func TestScriptErrorIsWrapped(t *testing.T) {
	m, c := newMiniredis(t)
	s := newStore(t, c, redisstore.WithPrefix("err:"))
	ctx := context.Background()
	p := core.Policy{Limit: 5, Window: time.Second, Algorithm: core.TokenBucket}
	if _, err := backendtest.CheckOne(ctx, s, "k", p, 1, t0); err != nil {
		t.Fatal(err)
	}
	k := m.Keys()[0]
	m.Del(k)
	if err := m.Set(k, "not a hash"); err != nil {
		t.Fatal(err)
	}
	d, err := backendtest.CheckOne(ctx, s, "k", p, 1, t0)
	if err == nil || d.Allowed {
		t.Fatalf("got %+v, %v; want an error and no admission", d, err)
	}
	if !strings.HasPrefix(err.Error(), "redisstore: check: ") || isCoreError(err) {
		t.Errorf("error %q: want it wrapped with the operation", err)
	}
	if err := core.Peek(ctx, s, "k", []core.Policy{p}, t0, make([]core.Decision, 1)); err == nil || !strings.HasPrefix(err.Error(), "redisstore: peek: ") {
		t.Errorf("peek error %v: want it wrapped with the operation", err)
	}
}

// TestServerDown: with the server gone every operation fails with a wrapped
// error and nothing is admitted.
func TestServerDown(t *testing.T) {
	m, c := newMiniredis(t)
	s := newStore(t, c)
	m.Close()
	ctx := context.Background()
	p := core.Policy{Limit: 5, Window: time.Second}
	if d, err := backendtest.CheckOne(ctx, s, "k", p, 1, t0); err == nil || d.Allowed || !strings.HasPrefix(err.Error(), "redisstore: check: ") {
		t.Errorf("check: %+v, %v", d, err)
	}
	if err := core.NewLimiter(s).Reset(ctx, "k", p); err == nil || !strings.HasPrefix(err.Error(), "redisstore: reset: ") {
		t.Errorf("reset: %v", err)
	}
}

// TestNoScriptFallback: after SCRIPT FLUSH the next call still succeeds
// (EVALSHA answers NOSCRIPT, EVAL runs and caches the script again) and state
// carries on.
func TestNoScriptFallback(t *testing.T) {
	_, c := newMiniredis(t)
	testScriptFlush(t, c, newStore(t, c), c.ScriptFlush)
}

// testScriptFlush checks, flushes the script cache with flush, and checks
// again on the same key: the second check must see the first one's state.
func testScriptFlush(t *testing.T, c redis.UniversalClient, s *redisstore.Store, flush func(context.Context) *redis.StatusCmd) {
	t.Helper()
	ctx := context.Background()
	p := core.Policy{Limit: 2, Window: time.Minute, Algorithm: core.FixedWindow}
	for i, want := range []bool{true, true, false} {
		if i == 1 {
			if err := flush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		d, err := backendtest.CheckOne(ctx, s, "flush", p, 1, t0)
		if err != nil || d.Allowed != want {
			t.Fatalf("check %d after SCRIPT FLUSH: %+v, %v; want allowed=%v", i, d, err, want)
		}
	}
	// A cluster caches the script only on the node that ran it.
	if sc, ok := c.(*redis.Client); ok {
		if ok, err := sc.ScriptExists(ctx, redisstore.ScriptSHA()).Result(); err != nil || !ok[0] {
			t.Fatalf("script not cached again after the fallback: %v %v", ok, err)
		}
	}
}

// TestDuplicatePolicyConsumesOnce: a policy named twice in one check is one
// state, decided and consumed once.
func TestDuplicatePolicyConsumesOnce(t *testing.T) {
	_, c := newMiniredis(t)
	s := newStore(t, c)
	ctx := context.Background()
	for _, p := range onePerAlgorithm(4, time.Minute) {
		out := make([]core.Decision, 2)
		for i := range 2 {
			if err := core.Check(ctx, s, "dup", []core.Policy{p, p}, 2, t0, out); err != nil || !out[0].Allowed || out[0] != out[1] {
				t.Fatalf("%s check %d: %+v %v", p.Algorithm, i, out, err)
			}
		}
		if d, err := backendtest.CheckOne(ctx, s, "dup", p, 1, t0); err != nil || d.Allowed {
			t.Fatalf("%s: after 2x2 units of 4 the quota should be spent: %+v %v", p.Algorithm, d, err)
		}
	}
}

func TestScriptFlushRedis(t *testing.T) {
	c := redistest.Client(t)
	testScriptFlush(t, c, newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t))), c.ScriptFlush)
}

func TestScriptFlushCluster(t *testing.T) {
	c := redistest.Cluster(t)
	testScriptFlush(t, c, newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t))), c.ScriptFlush)
}

// TestTTLRedis: on a real Redis every key gets a TTL no longer than the
// ResetAfter of the check that wrote it (rounded up to a millisecond).
func TestTTLRedis(t *testing.T) {
	c := redistest.Client(t)
	for _, p := range onePerAlgorithm(10, time.Minute+777*time.Microsecond) {
		prefix := redistest.Prefix(t)
		s := newStore(t, c, redisstore.WithPrefix(prefix))
		d, err := backendtest.CheckOne(context.Background(), s, "ttl", p, 4, t0)
		if err != nil || !d.Allowed {
			t.Fatalf("%s: %+v %v", p.Algorithm, d, err)
		}
		keys, got := ttls(t, c, prefix)
		if len(keys) != 1 {
			t.Fatalf("%s: keys %q, want one", p.Algorithm, keys)
		}
		// Wall time has passed since the write, so the TTL may be a
		// little shorter, never longer.
		want := (d.ResetAfter + time.Millisecond - 1).Truncate(time.Millisecond)
		if got[0] <= 0 || got[0] > want || got[0] < want-10*time.Second {
			t.Errorf("%s: PTTL %v, want just below %v", p.Algorithm, got[0], want)
		}
	}
}

// TestRestartRedis restarts a Redis of its own: the script cache is empty
// afterwards, and the same Store and client recover through EVAL.
func TestRestartRedis(t *testing.T) {
	srv := redisproc.Start(t)
	c := srv.Client()
	defer c.Close()
	ctx := context.Background()
	s := newStore(t, c)
	p := core.Policy{Limit: 1, Window: time.Minute, Algorithm: core.GCRA}
	if d, err := backendtest.CheckOne(ctx, s, "r", p, 1, t0); err != nil || !d.Allowed {
		t.Fatalf("before restart: %+v %v", d, err)
	}
	srv.Restart()
	if ok, err := c.ScriptExists(ctx, redisstore.ScriptSHA()).Result(); err != nil || ok[0] {
		t.Fatalf("script cached right after a restart? %v %v", ok, err)
	}
	// The pool's connections from before the restart are dead and go-redis
	// finds out on first use: a failed call is an error, never an admission.
	var d core.Decision
	var err error
	for range 20 {
		if d, err = backendtest.CheckOne(ctx, s, "r", p, 1, t0); err == nil {
			break
		}
		if d.Allowed {
			t.Fatalf("failed call reported an admission: %v", err)
		}
	}
	if err != nil || !d.Allowed { // the restart lost the state (no persistence)
		t.Fatalf("after restart: %+v %v", d, err)
	}
	if d, err := backendtest.CheckOne(ctx, s, "r", p, 1, t0); err != nil || d.Allowed {
		t.Fatalf("second check after restart: %+v %v; want a denial", d, err)
	}
}

// TestConformanceSentinel runs the conformance suite, and the multi-key
// one, through a Sentinel client (redis.NewFailoverClient) over a master
// and a Sentinel of its own.
func TestConformanceSentinel(t *testing.T) {
	g := redisproc.StartSentinel(t, 0, 1, 5*time.Second)
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: g.MasterName, SentinelAddrs: g.SentinelAddrs(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	runBoth(t, onServer(c))
}

// bigTrace builds a trace at the edge of the numbers the algorithms allow:
// limits and bursts near core.MaxLimit (the sliding log's limit for the
// log), odd windows up to a year, costs up to the capacity, so that
// timestamps in 2100, tolerances near 10^15 microseconds, integer divisions
// and the sliding window's floating-point estimate all run where rounding
// would show.
func bigTrace(seed uint64, n int) []backendtest.Step {
	rng := rand.New(rand.NewPCG(seed, 7))
	windows := []time.Duration{
		7*time.Second + 13*time.Microsecond,
		time.Hour - time.Microsecond,
		366*24*time.Hour - 3*time.Microsecond,
	}
	var pool []core.Policy
	for _, a := range core.Algorithms() {
		w := windows[rng.IntN(len(windows))]
		p := core.Policy{Algorithm: a, Window: w, Limit: core.MaxLimit - rng.IntN(1000)}
		if a == core.SlidingLog {
			p.Limit = 1000 + rng.IntN(9000) // one list element per unit
		}
		if rateBased(a) {
			p.Limit = min(p.Limit, int(w/time.Microsecond))
			// Burst*Interval must stay within the core's tolerance bound.
			interval := (int64(w/time.Microsecond) + int64(p.Limit) - 1) / int64(p.Limit)
			p.Burst = int(min(int64(core.MaxLimit), 1_000_000_000_000_000/interval) - rng.Int64N(1000))
		}
		if err := p.Validate(); err != nil {
			panic(err)
		}
		pool = append(pool, p)
	}
	start := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	if seed%2 == 0 {
		start = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	}
	steps := make([]backendtest.Step, n)
	for i := range steps {
		p := pool[rng.IntN(len(pool))]
		s := backendtest.Step{Key: "big", Policies: []core.Policy{p}, Cost: 1 + rng.IntN(p.Capacity())}
		if i == 0 {
			s.Set = start.Add(time.Duration(rng.Int64N(int64(time.Hour))) / time.Microsecond * time.Microsecond)
		} else {
			s.Advance = time.Duration(rng.Int64N(int64(p.Window/time.Microsecond)/3)) * time.Microsecond
		}
		if rng.IntN(8) == 0 {
			s.Peek = true
		}
		steps[i] = s
	}
	return steps
}

// TestLargeNumbers replays bigTrace on the reference and on the Redis store
// over miniredis, a real Redis and a real Cluster: real Redis is where a
// number printed with %.14g or a float reply would be caught.
func TestLargeNumbers(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		if admitted, checks := admissions(t, bigTrace(seed, 150)); admitted == 0 || admitted == checks {
			t.Fatalf("seed %d: the reference admits %d of %d checks; the trace should mix admissions and denials", seed, admitted, checks)
		}
	}
	onEachServer(t, func(t *testing.T, c redis.UniversalClient, _ time.Duration) {
		for seed := uint64(1); seed <= 4; seed++ {
			s := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin))
			if err := backendtest.Diff(context.Background(), bigTrace(seed, 150), backendtest.NewReference(), s); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
	})
}

// admissions runs the checks of steps, a trace of checks and peeks, on the
// reference and counts those it admits.
func admissions(t *testing.T, steps []backendtest.Step) (admitted, checks int) {
	clock := core.NewManualClock(time.Time{})
	lim := core.NewLimiter(backendtest.NewReference(), core.WithClock(clock))
	for _, s := range steps {
		if !s.Set.IsZero() {
			clock.Set(s.Set)
		}
		clock.Advance(s.Advance)
		if s.Peek {
			continue
		}
		r, err := lim.Check(context.Background(), s.Key, s.Policies, s.Cost, nil)
		if err != nil {
			t.Fatal(err)
		}
		if checks++; r.Allowed {
			admitted++
		}
	}
	return admitted, checks
}

// TestSlidingWindowRounding pins a case where the order of the estimate's
// floating-point operations decides RetryAfter: with prev*(w-e)/w the first
// fit is 30626934066 µs into the window, with prev*((w-e)/w) it would be one
// microsecond earlier. The script must round exactly like core/algo.
func TestSlidingWindowRounding(t *testing.T) {
	p := core.Policy{Limit: 594255661, Window: 24 * time.Hour, Algorithm: core.SlidingWindow}
	day := time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC) // a window start
	steps := []backendtest.Step{
		{Set: day, Key: "round", Policies: []core.Policy{p}, Cost: p.Limit},
		{Set: day.Add(24 * time.Hour), Key: "round", Policies: []core.Policy{p}, Cost: 210650798},
	}
	ctx := context.Background()
	clock := core.NewManualClock(day)
	ref := core.NewLimiter(backendtest.NewReference(), core.WithClock(clock))
	_, _ = ref.AllowN(ctx, "round", p, p.Limit)
	clock.Set(day.Add(24 * time.Hour))
	if d, err := ref.AllowN(ctx, "round", p, 210650798); err != nil || d.Allowed || d.RetryAfter != 30626934066*time.Microsecond {
		t.Fatalf("reference: %v %+v; the case no longer tests rounding", err, d)
	}
	onEachServer(t, func(t *testing.T, c redis.UniversalClient, _ time.Duration) {
		s := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)))
		if err := backendtest.Diff(ctx, steps, backendtest.NewReference(), s); err != nil {
			t.Fatal(err)
		}
	})
}

// rateBased reports whether a is driven by a rate and a burst (token
// bucket, GCRA, leaky bucket; "" is GCRA).
func rateBased(a core.Algorithm) bool {
	switch a {
	case core.TokenBucket, core.GCRA, core.LeakyBucket, "":
		return true
	}
	return false
}

// TestReadsStatesOfTheVersionBefore: a rolling deploy runs the version
// before this one beside it on one Redis. Its rate states carry no
// interval (GCRA a bare TAT, the buckets' hashes no i field); they are read
// with the policy's interval, as that version read them: a client that
// used 6 of 10 has 4 left. The check stores the interval, so a limit
// change then keeps the 7 units used.
func TestReadsStatesOfTheVersionBefore(t *testing.T) {
	m, c := newMiniredis(t)
	s := newStore(t, c)
	ctx := context.Background()
	now := time.Date(2026, 5, 5, 10, 0, 30, 0, time.UTC)
	us := now.UnixMicro()
	const used = 36_000_000 // 6 units of 6 s: 10/1m
	for alg, write := range map[core.Algorithm]func(key string){
		core.GCRA:        func(k string) { _ = m.Set(k, fmt.Sprint(us+used)) },
		core.TokenBucket: func(k string) { m.HSet(k, "u", fmt.Sprint(used), "l", fmt.Sprint(us)) },
		core.LeakyBucket: func(k string) { m.HSet(k, "v", fmt.Sprint(used), "l", fmt.Sprint(us)) },
	} {
		t.Run(string(alg), func(t *testing.T) {
			p := core.Policy{Name: "api", Limit: 10, Window: time.Minute, Algorithm: alg}
			write(redisstore.StateKey("ratelimit:", "k-"+string(alg), p))
			var out [1]core.Decision
			if err := core.Check(ctx, s, "k-"+string(alg), []core.Policy{p}, 1, now, out[:]); err != nil {
				t.Fatal(err)
			}
			if d := out[0]; !d.Allowed || d.Remaining != 3 {
				t.Fatalf("6 of 10 used by the version before, then 1: %+v, want remaining 3", d)
			}
			p.Limit = 20 // 3 s a unit: read with it, the 42 s owed would be 14 units
			if err := core.Check(ctx, s, "k-"+string(alg), []core.Policy{p}, 1, now, out[:]); err != nil {
				t.Fatal(err)
			}
			if d := out[0]; !d.Allowed || d.Remaining != 12 {
				t.Fatalf("7 used, then 1 under 20/1m: %+v, want remaining 12", d)
			}
		})
	}
}
