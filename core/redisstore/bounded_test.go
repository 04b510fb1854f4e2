package redisstore

import (
	"context"
	"errors"
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
)

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
