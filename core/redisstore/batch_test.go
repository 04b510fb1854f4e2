package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

// gate is a go-redis hook that counts script calls (EVALSHA and EVAL, alone
// or in pipelines) and can hold them until released. Other commands, such
// as those go-redis sends to set up a connection, pass untouched.
type gate struct {
	held      chan struct{} // receives when a script call is held
	release   chan struct{} // closed to let held ones go
	hold      atomic.Bool
	scripts   atomic.Int64 // script calls sent, alone or in pipelines
	pipelines atomic.Int64 // pipelines of script calls sent
	piped     atomic.Int64 // script calls inside pipelines
	before    func()       // runs before each script call or pipeline of them is sent, if set
}

func newGate() *gate {
	return &gate{held: make(chan struct{}, 100), release: make(chan struct{})}
}

func isScript(cmd redis.Cmder) bool {
	return cmd.Name() == "evalsha" || cmd.Name() == "eval"
}

// holdFirst sends a check of key under p and returns once the gate holds
// it on the wire, with the channel of its error; later checks queue
// behind it until release closes.
func (g *gate) holdFirst(s *Store, key string, p core.Policy) <-chan error {
	g.hold.Store(true)
	first := make(chan error, 1)
	go func() {
		_, err := backendtest.CheckOne(context.Background(), s, key, p, 1, testNow)
		first <- err
	}()
	<-g.held
	g.hold.Store(false)
	return first
}

func (g *gate) wait() {
	if g.hold.Load() {
		g.held <- struct{}{}
		<-g.release
	}
}

func (g *gate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isScript(cmd) {
			g.wait()
			if g.before != nil {
				g.before()
			}
			g.scripts.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || !isScript(cmds[0]) {
			return next(ctx, cmds)
		}
		g.wait()
		if g.before != nil {
			g.before()
		}
		g.pipelines.Add(1)
		g.piped.Add(int64(len(cmds)))
		g.scripts.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

func gatedStore(t *testing.T, pipelines int, opts ...Option) (*Store, *gate, *miniredis.Miniredis) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	g := newGate()
	c.AddHook(g)
	s, err := New(c, append([]Option{WithPipelines(pipelines)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s, g, m
}

func (b *batcher) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}

// waitQueued returns once at least n calls are queued in s (waiting for
// goroutines to queue, not for a window), and fails the test if they have
// not after ten seconds.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.calls.queued() < n {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %d calls to queue; %d are", n, s.calls.queued())
		}
		time.Sleep(time.Millisecond)
	}
}

var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// queueChecks starts n checks of key under p, each on a goroutine of its
// own, waits until they are all queued behind the call on the wire, and
// returns what waits for their decisions and errors.
func queueChecks(t *testing.T, s *Store, n int, key string, p core.Policy) (wait func() ([]core.Decision, []error)) {
	t.Helper()
	results, errs := make([]core.Decision, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i], errs[i] = backendtest.CheckOne(context.Background(), s, key, p, 1, testNow) })
	}
	waitQueued(t, s, n)
	return func() ([]core.Decision, []error) { wg.Wait(); return results, errs }
}

// TestBatchingGroupsQueuedChecks: with one script call in flight, checks
// that arrive meanwhile go out together, as one script call deciding them
// all or, with one check per call, as one pipeline; each gets its own
// correct decision.
func TestBatchingGroupsQueuedChecks(t *testing.T) {
	t.Parallel()
	t.Run("one call", func(t *testing.T) { testGroupsQueued(t, defaultChecksPerCall) })
	t.Run("pipeline", func(t *testing.T) { testGroupsQueued(t, 1) })
}

func testGroupsQueued(t *testing.T, perCall int) {
	s, g, _ := gatedStore(t, 1, WithChecksPerCall(perCall))
	p := core.Policy{Limit: 3, Window: time.Minute, Algorithm: core.FixedWindow}
	first := g.holdFirst(s, "first", p) // on the wire: everything else queues
	const n = 20
	wait := queueChecks(t, s, n, "shared", p)
	close(g.release)
	results, errs := wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for i := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if results[i].Allowed {
			admitted++
		}
	}
	if admitted != 3 {
		t.Fatalf("admitted %d of %d on one key with limit 3", admitted, n)
	}
	if perCall == 1 {
		if got := g.pipelines.Load(); got != 1 || g.piped.Load() != n {
			t.Fatalf("%d pipelines with %d commands, want 1 with %d", got, g.piped.Load(), n)
		}
		return
	}
	// The first check is EVALSHA, NOSCRIPT on a fresh server, then EVAL;
	// the queued checks are one EVALSHA.
	if got := g.scripts.Load(); got != 3 || g.pipelines.Load() != 0 {
		t.Fatalf("%d script calls and %d pipelines, want 3 calls (the first check twice, then the %d queued in one)", got, g.pipelines.Load(), n)
	}
}

// TestBatchingManyPolicies: a script call deciding queued checks of more
// distinct policies than it finds by a linear search (past 16, it indexes
// them) names each check's own policy, for the first check of a policy and
// for the ones after it.
func TestBatchingManyPolicies(t *testing.T) {
	t.Parallel()
	s, g, _ := gatedStore(t, 1)
	const policies, n = 20, 40
	pol := make([]core.Policy, policies)
	for i := range pol {
		pol[i] = core.Policy{Name: "p" + strconv.Itoa(i), Limit: i + 2, Window: time.Minute, Algorithm: core.FixedWindow}
	}
	first := g.holdFirst(s, "first", pol[0])
	results, errs := make([]core.Decision, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = backendtest.CheckOne(context.Background(), s, "k"+strconv.Itoa(i), pol[i%policies], 1, testNow)
		})
	}
	waitQueued(t, s, n)
	close(g.release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, d := range results {
		p := pol[i%policies]
		if errs[i] != nil || !d.Allowed || d.Limit != p.Limit || d.Remaining != p.Limit-1 {
			t.Fatalf("check %d under %s: %+v %v, want admitted with %d remaining of %d", i, p.Name, d, errs[i], p.Limit-1, p.Limit)
		}
	}
	if got := g.scripts.Load(); got != 3 {
		t.Fatalf("%d script calls, want 3 (the first check twice, then the %d queued in one)", got, n)
	}
}

// TestBatchingNoScriptInPipeline: when Redis has lost the script by the time
// the queued checks go out, as one shared script call or as a pipeline,
// they are sent again with EVAL and succeed, each counted once.
func TestBatchingNoScriptInPipeline(t *testing.T) {
	t.Parallel()
	t.Run("one call", func(t *testing.T) { testNoScriptQueued(t, defaultChecksPerCall) })
	t.Run("pipeline", func(t *testing.T) { testNoScriptQueued(t, 1) })
}

func testNoScriptQueued(t *testing.T, perCall int) {
	s, g, m := gatedStore(t, 1, WithChecksPerCall(perCall))
	ctx := context.Background()
	p := core.Policy{Limit: 100, Window: time.Minute}
	if _, err := backendtest.CheckOne(ctx, s, "warm", p, 1, testNow); err != nil {
		t.Fatal(err)
	}
	flusher := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer flusher.Close()
	var flushed atomic.Bool
	var sends atomic.Int64
	g.before = func() {
		// The first send is the held check; the second carries the queue.
		if sends.Add(1) == 2 && flushed.CompareAndSwap(false, true) {
			if err := flusher.ScriptFlush(ctx).Err(); err != nil {
				t.Error(err)
			}
		}
	}
	first := g.holdFirst(s, "k", p) // on the wire: everything else queues
	const n = 10
	wait := queueChecks(t, s, n, "k", p)
	close(g.release)
	results, errs := wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("check %d after NOSCRIPT in a pipeline: %v", i, err)
		}
		seen[results[i].Remaining] = true
	}
	if !flushed.Load() || len(seen) != n {
		t.Fatalf("flushed %v, distinct Remaining %d; want every check counted once", flushed.Load(), len(seen))
	}
	out := make([]core.Decision, 1)
	if err := core.Peek(ctx, s, "k", []core.Policy{p}, testNow, out); err != nil || out[0].Remaining != 100-(n+1) {
		t.Fatalf("peek: %+v %v; want %d remaining", out[0], err, 100-(n+1))
	}
}

// TestBatchingQueuedCancel: a queued check whose context ends returns at
// once with the context's error and is never sent.
func TestBatchingQueuedCancel(t *testing.T) {
	s, g, _ := gatedStore(t, 1)
	p := core.Policy{Limit: 100, Window: time.Minute}
	first := g.holdFirst(s, "k", p) // on the wire: everything else queues
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() {
		_, err := backendtest.CheckOne(ctx, s, "k", p, 1, testNow)
		queued <- err
	}()
	waitQueued(t, s, 1)
	cancel()
	if err := <-queued; !errors.Is(err, context.Canceled) {
		t.Fatalf("queued check after cancel: %v, want context.Canceled", err)
	}
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := g.scripts.Load(); n != 2 {
		t.Fatalf("%d script calls reached Redis, want 2 (EVALSHA, NOSCRIPT, EVAL; the cancelled check never sent)", n)
	}
	d, err := backendtest.CheckOne(context.Background(), s, "k", p, 1, testNow)
	if err != nil || d.Remaining != 98 {
		t.Fatalf("after: %+v %v; want exactly two admissions counted", d, err)
	}
}

// TestBatchingPipelineFailure: when a pipeline fails on the network every
// check in it gets an error, never an admission.
func TestBatchingPipelineFailure(t *testing.T) {
	t.Parallel()
	s, g, m := gatedStore(t, 1)
	p := core.Policy{Limit: 100, Window: time.Minute}
	first := g.holdFirst(s, "k", p) // on the wire: everything else queues
	const n = 5
	wait := queueChecks(t, s, n, "k", p)
	m.Close()
	close(g.release)
	results, errs := wait()
	<-first
	for i := range errs {
		if errs[i] == nil || results[i].Allowed {
			t.Fatalf("check %d with the server gone: %+v, %v", i, results[i], errs[i])
		}
	}
}

// sharedOp is one step of a differential trace: a check (or peek, cost 0)
// of one key under some policies, or a multi-key check when items is set.
type sharedOp struct {
	key      string
	policies []core.Policy
	items    []core.Item
	cost     int64
	now      time.Time
}

// sharedTrace returns n random steps over a few keys, every algorithm, one
// to three policies per check (a policy sometimes named twice), peeks,
// multi-key checks when many is true (half their items with units of their
// own), and time that sometimes stands still
// and sometimes jumps past a window. One key holds a value of the wrong type
// under every policy (see poison), so its checks fail.
func sharedTrace(rng *rand.Rand, n int, many bool) []sharedOp {
	var ps []core.Policy
	for i, a := range core.Algorithms() {
		ps = append(ps, core.Policy{Name: string(a), Limit: 3 + i%3, Window: time.Duration(1+i) * time.Second, Algorithm: a})
	}
	ps = append(ps, core.Policy{Name: "delayed", Limit: 4, Window: 2 * time.Second, Algorithm: core.LeakyBucket, MaxDelay: time.Second})
	keys := []string{"a", "b", "c", "d", "bad"}
	now := time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)
	ops := make([]sharedOp, n)
	for i := range ops {
		switch rng.IntN(10) {
		case 0:
			now = now.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
		case 1, 2, 3:
			now = now.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
		}
		op := sharedOp{now: now, cost: int64(rng.IntN(4))}
		capacity := 1 << 30
		if many && rng.IntN(5) == 0 {
			for range 2 + rng.IntN(2) {
				p := ps[rng.IntN(len(ps))]
				it := core.Item{Key: keys[rng.IntN(len(keys)-1)], Policy: p}
				if rng.IntN(2) == 0 {
					// Units of its own (Envoy's per-descriptor
					// hits_addend), the same for every item of one
					// policy, so that a state given twice asks for one
					// cost.
					it.Cost = min(p.Limit, 1+int(p.Window/time.Second)%3)
				}
				op.items = append(op.items, it)
				capacity = min(capacity, p.Limit)
			}
			op.cost = max(op.cost, 1)
		} else {
			op.key = keys[rng.IntN(len(keys))]
			for range 1 + rng.IntN(3) {
				p := ps[rng.IntN(len(ps))]
				op.policies = append(op.policies, p)
				capacity = min(capacity, p.Limit)
			}
		}
		op.cost = min(op.cost, int64(capacity))
		ops[i] = op
	}
	return ops
}

func (s *Store) opCall(op sharedOp) *call {
	return s.newItemsCall(op.batch(), op.now)
}

// batch returns the items of op: a multi-key check's, each without units of
// its own consuming op.cost, or one per policy, peeks when op.cost is 0.
func (op sharedOp) batch() []core.Item {
	if op.items != nil {
		items := append([]core.Item(nil), op.items...)
		for i := range items {
			if items[i].Cost == 0 {
				items[i].Cost = int(op.cost)
			}
		}
		return items
	}
	items := make([]core.Item, len(op.policies))
	for i, p := range op.policies {
		items[i] = core.Item{Key: op.key, Policy: p, Cost: int(op.cost)}
		if op.cost == 0 {
			items[i].Op = core.OpPeek
		}
	}
	return items
}

// poison gives key "bad" a hash under every policy's GCRA-style string state
// and a string under the hash states, so that every check of it meets
// WRONGTYPE.
func poison(t *testing.T, s *Store, client redis.UniversalClient, ops []sharedOp) {
	t.Helper()
	ctx := context.Background()
	for _, op := range ops {
		if op.key != "bad" {
			continue
		}
		c := s.opCall(op)
		for i, k := range c.keys {
			var err error
			switch op.policies[i].Algorithm {
			case core.GCRA, core.TokenBucket:
				err = client.HSet(ctx, k, "x", "1").Err()
			default:
				err = client.Set(ctx, k, "x", 0).Err()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSharedCallsMatchOneCallPerCheck is the differential proof for shared
// script calls: one trace runs on two stores of one server, on one with
// every check in its own script call, on the other with consecutive checks
// sent together in groups of random size, as the batcher sends what queued
// while its calls were busy. Every check gets the same reply, or the same
// kind of error, on both: on miniredis, a real Redis and a real Cluster
// (with a common slot key, so that checks share calls there too, and
// without, so that they share only pipelines).
func TestSharedCallsMatchOneCallPerCheck(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		// miniredis fails every command of a script after one has failed,
		// even under pcall, so the wrong-type key stays out of its trace.
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		testSharedMatch(t, c, true, false)
	})
	t.Run("redis", func(t *testing.T) { testSharedMatch(t, redistest.Client(t), true, true) })
	t.Run("cluster-slot-key", func(t *testing.T) {
		testSharedMatch(t, redistest.Cluster(t), true, true, WithSlotKey(func(string) string { return "one" }))
	})
	t.Run("cluster", func(t *testing.T) { testSharedMatch(t, redistest.Cluster(t), false, true) })
}

func testSharedMatch(t *testing.T, client redis.UniversalClient, many, bad bool, opts ...Option) {
	ctx := context.Background()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			ops := sharedTrace(rand.New(rand.NewPCG(seed, 42)), 600, many)
			if !bad {
				ops = slices.DeleteFunc(ops, func(op sharedOp) bool { return op.key == "bad" })
			}
			newStore := func(perCall int) *Store {
				s, err := New(client, append([]Option{WithPrefix(redistest.Prefix(t)), WithChecksPerCall(perCall)}, opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				poison(t, s, client, ops)
				t.Cleanup(func() { _ = redistest.DeletePrefix(ctx, client, s.prefix) })
				return s
			}
			alone, shared := newStore(1), newStore(defaultChecksPerCall)
			rng := rand.New(rand.NewPCG(seed, 7))
			var merged, failed int
			for i := 0; i < len(ops); {
				n := min(1+rng.IntN(20), len(ops)-i)
				group := make([]*call, n)
				for j := range group {
					group[j] = shared.opCall(ops[i+j])
				}
				shared.calls.exec(ctx, group)
				for _, g := range shared.calls.group(group) {
					if len(g) > 1 {
						merged += len(g)
					}
				}
				for j, got := range group {
					want := alone.opCall(ops[i+j])
					alone.calls.exec(ctx, []*call{want})
					if (want.err != nil) != (got.err != nil) || !slices.Equal(want.reply, got.reply) {
						t.Fatalf("step %d %+v: shared call %v %v, own call %v %v", i+j, ops[i+j], got.reply, got.err, want.reply, want.err)
					}
					if want.err != nil {
						failed++
						// miniredis words them differently from Redis.
						if !strings.Contains(got.err.Error(), "WRONGTYPE") || !strings.Contains(want.err.Error(), "WRONGTYPE") {
							t.Fatalf("step %d: errors %q and %q, want WRONGTYPE on both", i+j, got.err, want.err)
						}
					}
				}
				i += n
			}
			if bad && failed == 0 {
				t.Fatal("no check met the wrong-type key: the trace proves nothing about errors")
			}
			if _, isCluster := client.(*redis.ClusterClient); !isCluster || opts != nil {
				if merged < len(ops)/2 {
					t.Fatalf("only %d of %d checks shared a script call", merged, len(ops))
				}
			}
			t.Logf("%d checks, %d in shared calls, %d failed alike", len(ops), merged, failed)
		})
	}
}

// holdAll is a go-redis hook that holds every command named in names
// (alone or opening a pipeline) until released, and reports each it holds.
type holdAll struct {
	names   map[string]bool
	held    chan string
	release chan struct{}
}

func newHoldAll(names ...string) *holdAll {
	// held has room for every command a test can send, so that a command
	// reported after the test stopped reading never blocks: once released,
	// each of the maxSenders held EVALSHAs that finds the script not yet
	// loaded sends an EVAL too, and a full channel here used to hold those
	// senders, and the next check behind them, for good.
	h := &holdAll{names: map[string]bool{}, held: make(chan string, 4*maxSenders), release: make(chan struct{})}
	for _, n := range names {
		h.names[n] = true
	}
	return h
}

func (h *holdAll) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *holdAll) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.names[cmd.Name()] {
			h.held <- cmd.Name()
			<-h.release
		}
		return next(ctx, cmd)
	}
}

func (h *holdAll) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && h.names[cmds[0].Name()] {
			h.held <- cmds[0].Name()
			<-h.release
		}
		return next(ctx, cmds)
	}
}

// TestCallsReturnWhenContextDone: with Redis not answering (every command
// held on its way out), each kind of call returns its context's error once
// the context is done, alone or queued, cancelled or past its deadline,
// and context.DeadlineExceeded once its wait limit has passed
// (core.WithWaitLimit), with a context that never ends; a call whose wait
// limit has already passed sends nothing; the goroutines that send the
// held commands end once Redis answers again, and the Store works on.
func TestCallsReturnWhenContextDone(t *testing.T) {
	if b, ok := core.Backend(&Store{}).(core.Bounded); !ok || !b.Bounded() {
		t.Fatal("the Store does not say it is bounded")
	}
	before := goleak.IgnoreCurrent()
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	h := newHoldAll("evalsha", "eval", "del")
	c.AddHook(h)
	s, err := New(c, WithPipelines(1))
	if err != nil {
		t.Fatal(err)
	}
	p := core.Policy{Limit: 100, Window: time.Minute}
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"check", func(ctx context.Context) error {
			_, err := backendtest.CheckOne(ctx, s, "k", p, 1, testNow)
			return err
		}},
		{"check many", func(ctx context.Context) error {
			return s.Do(ctx, []core.Item{{Key: "a", Policy: p, Cost: 1}, {Key: "b", Policy: p, Cost: 1}}, testNow, make([]core.Decision, 2))
		}},
		{"peek", func(ctx context.Context) error {
			return core.Peek(ctx, s, "k", []core.Policy{p}, testNow, make([]core.Decision, 1))
		}},
		{"reset", func(ctx context.Context) error {
			return core.NewLimiter(s).Reset(ctx, "k", p)
		}},
	}
	held := 0
	for i, c := range calls {
		// Cancelled while Redis does not answer. The first check goes
		// out and is held, keeping the only script call slot: the next
		// ones queue behind it. A reset goes out on its own.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.call(ctx) }()
		if i == 0 || c.name == "reset" {
			<-h.held
			held++
		} else {
			waitQueued(t, s, 1)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("%s, cancelled with Redis not answering: %v, want context.Canceled", c.name, err)
		}
		// Past its deadline.
		ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := c.call(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s, past its deadline with Redis not answering: %v, want context.DeadlineExceeded", c.name, err)
		}
		if c.name == "reset" {
			<-h.held
			held++
		}
		// Past its wait limit, with a context that never ends.
		start := time.Now()
		err = c.call(core.WithWaitLimit(context.Background(), start.Add(20*time.Millisecond)))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s, past its wait limit with Redis not answering: %v, want context.DeadlineExceeded", c.name, err)
		}
		if waited := time.Since(start); waited < 20*time.Millisecond {
			t.Fatalf("%s returned %v after the call, before its wait limit", c.name, waited)
		}
		if c.name == "reset" {
			<-h.held
			held++
		}
		// A wait limit already passed: the error at once, nothing sent.
		err = c.call(core.WithWaitLimit(context.Background(), time.Now().Add(-time.Millisecond)))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s, its wait limit already passed: %v, want context.DeadlineExceeded", c.name, err)
		}
	}
	if s.calls.queued() != 0 {
		t.Fatalf("%d calls still queued after their callers left", s.calls.queued())
	}
	if n := len(h.held); n != 0 {
		t.Fatalf("%d more commands sent than the calls that were waiting", n)
	}
	close(h.release)
	// The Store works on: the slot came back.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := backendtest.CheckOne(ctx, s, "after", p, 1, testNow); err != nil {
		t.Fatalf("after Redis answers again: %v", err)
	}
	if held != 4 {
		t.Fatalf("%d commands held, want 4 (a script call, three DELs)", held)
	}
	_ = c.Close()
	m.Close()
	goleak.VerifyNone(t, before)
}

// TestSenderSkipsCallPastItsWaitLimit: a call sent alone from a goroutine
// of the Store's own is not sent once its caller's wait limit has passed
// (its caller has left), as go-redis sends nothing for a context already
// done; it gets context.DeadlineExceeded. A limit still ahead sends it.
func TestSenderSkipsCallPastItsWaitLimit(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer c.Close()
	h := newHoldAll("evalsha", "eval")
	close(h.release) // counts the script calls sent, holds none
	c.AddHook(h)
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	p := core.Policy{Limit: 100, Window: time.Minute}
	for _, tc := range []struct {
		name  string
		limit time.Duration
		sent  bool
	}{{"limit passed", -time.Millisecond, false}, {"limit ahead", time.Minute, true}} {
		cl := s.newItemsCall([]core.Item{{Key: "k", Policy: p, Cost: 1}}, testNow)
		cl.done = make(chan struct{}, 1)
		ctx := core.WithWaitLimit(context.Background(), time.Now().Add(tc.limit))
		s.calls.decide(ctx, []*call{cl}, false, false)
		<-cl.done
		// EVALSHA, and EVAL after a NOSCRIPT the first time.
		if sent := len(h.held); (sent > 0) != tc.sent {
			t.Fatalf("%s: %d script calls sent", tc.name, sent)
		}
		for len(h.held) > 0 {
			<-h.held
		}
		if !tc.sent && !errors.Is(cl.err, context.DeadlineExceeded) {
			t.Fatalf("%s: %v, want context.DeadlineExceeded", tc.name, cl.err)
		}
		if tc.sent && (cl.err != nil || len(cl.reply) == 0) {
			t.Fatalf("%s: reply %v, %v", tc.name, cl.reply, cl.err)
		}
	}
}

// panicHook panics on every script call while on is set.
type panicHook struct {
	mu sync.Mutex
	on bool
}

func (h *panicHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *panicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		on := h.on
		h.mu.Unlock()
		if on && isScript(cmd) {
			panic("bug in a hook")
		}
		return next(ctx, cmd)
	}
}

func (h *panicHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestPanicInTheClient: a panic while sending a script call is the
// caller's error when the call went out from a goroutine of the Store's
// (it would otherwise end the process), the caller's own panic when it
// went out from the caller's goroutine; either way the script call slot
// comes back and the Store works on.
func TestPanicInTheClient(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	h := &panicHook{on: true}
	c.AddHook(h)
	s, err := New(c, WithPipelines(1))
	if err != nil {
		t.Fatal(err)
	}
	p := core.Policy{Limit: 100, Window: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := backendtest.CheckOne(ctx, s, "k", p, 1, testNow); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("check with a context that can end, the client panicking: %v", err)
	}
	func() {
		defer func() {
			if r := recover(); r != "bug in a hook" {
				t.Fatalf("check with a context that never ends, the client panicking: recovered %v", r)
			}
		}()
		_, _ = backendtest.CheckOne(context.Background(), s, "k", p, 1, testNow)
	}()
	h.mu.Lock()
	h.on = false
	h.mu.Unlock()
	for _, ctx := range []context.Context{ctx, context.Background()} {
		if d, err := backendtest.CheckOne(ctx, s, "k", p, 1, testNow); err != nil || d.Remaining != 99 {
			t.Fatalf("after the panics: %+v, %v; want the first admission", d, err)
		}
		if err := core.NewLimiter(s).Reset(ctx, "k", p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPanicInTheClientLeadingABatch: a caller whose context never ends
// and that sends the batch queued behind a script call (its leader) gets a
// panic in the client as its own panic, as when it sends a call alone; the
// call queued behind it gets the error, and the Store works on. Reached
// only when the leader queued while another call was in flight, which
// TestPanicInTheClient's second check does only sometimes.
func TestPanicInTheClientLeadingABatch(t *testing.T) {
	s, g, _ := gatedStore(t, 1)
	var panics atomic.Bool
	g.before = func() {
		if panics.Load() {
			panic("bug in a hook")
		}
	}
	p := core.Policy{Limit: 100, Window: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	g.hold.Store(true)
	first := make(chan error, 1)
	go func() {
		_, err := backendtest.CheckOne(ctx, s, "k", p, 1, testNow)
		first <- err
	}()
	<-g.held // on the wire: the next checks queue
	g.hold.Store(false)
	panics.Store(true)
	led := make(chan any, 1)
	go func() {
		defer func() { led <- recover() }()
		_, _ = backendtest.CheckOne(context.Background(), s, "k", p, 1, testNow)
	}()
	waitQueued(t, s, 1)
	queued := make(chan error, 1)
	go func() {
		_, err := backendtest.CheckOne(ctx, s, "k", p, 1, testNow)
		queued <- err
	}()
	waitQueued(t, s, 2)
	close(g.release)

	if err := <-first; err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("the call in flight, sent by the Store: %v; want a panicked error", err)
	}
	if r := <-led; r != "bug in a hook" {
		t.Errorf("the leader of the queued batch recovered %v; want its own panic", r)
	}
	if err := <-queued; err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("the call queued behind the leader: %v; want a panicked error", err)
	}
	panics.Store(false)
	for _, ctx := range []context.Context{ctx, context.Background()} {
		if d, err := backendtest.CheckOne(ctx, s, "k", p, 1, testNow); err != nil || d.Remaining != 99 {
			t.Fatalf("after the panics: %+v, %v; want the first admission", d, err)
		}
		if err := core.NewLimiter(s).Reset(ctx, "k", p); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.calls.queued(); n != 0 {
		t.Errorf("%d calls still queued", n)
	}
}

// TestSendersAreBounded: with Redis not answering, at most maxSenders
// script calls and maxSenders DELs go out from goroutines of the Store's
// own, even without batching; the callers past them wait, and leave when
// their context is done, or when their wait limit has passed.
func TestSendersAreBounded(t *testing.T) {
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		testSendersAreBounded(t, ctx, cancel, context.Canceled)
	})
	t.Run("wait limit", func(t *testing.T) {
		// A context that never ends, with a wait limit far enough ahead
		// for every call to be sent or queued first.
		testSendersAreBounded(t, core.WithWaitLimit(context.Background(), time.Now().Add(3*time.Second)), func() {}, context.DeadlineExceeded)
	})
}

// testSendersAreBounded runs TestSendersAreBounded with callers of ctx,
// which end with want once stop is called (or their wait limit passes).
func testSendersAreBounded(t *testing.T, ctx context.Context, stop func(), want error) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, PoolSize: 2 * maxSenders})
	t.Cleanup(func() { _ = c.Close() })
	h := newHoldAll("evalsha", "eval", "del")
	c.AddHook(h)
	s, err := New(c, withoutBatching())
	if err != nil {
		t.Fatal(err)
	}
	p := core.Policy{Limit: 100, Window: time.Minute}
	const extra = 20
	errs := make(chan error, 2*(maxSenders+extra))
	for i := range maxSenders + extra {
		key := "k" + strconv.Itoa(i)
		go func() {
			_, err := backendtest.CheckOne(ctx, s, key, p, 1, testNow)
			errs <- err
		}()
		go func() { errs <- core.NewLimiter(s).Reset(ctx, key, p) }()
	}
	for range 2 * maxSenders {
		<-h.held
	}
	for s.calls.queued() < extra || len(s.dels) < maxSenders {
		if limit, ok := core.WaitLimit(ctx); ok && time.Now().After(limit) {
			t.Fatal("the calls took longer than their wait limit to go out or queue")
		}
		time.Sleep(time.Millisecond)
	}
	// Every sender is held at Redis, every DEL token taken, and the extra
	// checks queued: a command past the bound would need a free sender or
	// a token, and none can be had until Redis answers. No wait for one to
	// show up: the counts say it cannot.
	if q, d := s.calls.queued(), len(s.dels); q != extra || d != cap(s.dels) {
		t.Fatalf("%d checks queued and %d of %d DEL tokens taken, want %d and all", q, d, cap(s.dels), extra)
	}
	select {
	case name := <-h.held:
		t.Fatalf("a %s went out past the bound", name)
	default:
	}
	stop()
	for range 2 * (maxSenders + extra) {
		if err := <-errs; !errors.Is(err, want) {
			t.Fatalf("a call with Redis not answering: %v, want %v", err, want)
		}
	}
	close(h.release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := backendtest.CheckOne(ctx, s, "after", p, 1, testNow); err != nil {
		t.Fatalf("after Redis answers again: %v", err)
	}
}
