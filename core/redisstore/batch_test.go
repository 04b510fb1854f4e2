package redisstore

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
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
