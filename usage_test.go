package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/sink"
)

// handler is a next function answering status after running f with the
// request's context.
func handler(status int, f func(ctx context.Context)) func(context.Context) int {
	return func(ctx context.Context) int {
		if f != nil {
			f(ctx)
		}
		return status
	}
}

func remaining(t *testing.T, lim *core.Limiter, key string, p core.Policy) int {
	t.Helper()
	d, err := lim.Peek(context.Background(), key, p)
	if err != nil {
		t.Fatal(err)
	}
	return d.Remaining
}

// The Usage a handler sees names its request, and is gone without
// WithUsage.
func TestUsageInContext(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	p := core.MustParsePolicy("5/1m;name=p")
	m := keyed(t, lim, ratelimit.WithPolicy(p), ratelimit.WithUsage(nil))
	var u *ratelimit.Usage
	m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, func(ctx context.Context) { u = ratelimit.FromContext(ctx) }))
	if u == nil || u.Key != "k" || u.Cost != 1 || len(u.Policies) != 1 || u.Policies[0].Name != "p" || len(u.Decisions) != 1 || u.Decisions[0].Remaining != 4 {
		t.Fatalf("usage %+v", u)
	}
	// A call after the handler returned changes nothing.
	if err := u.SetCost(0); err != nil {
		t.Fatal(err)
	}
	if r := remaining(t, lim, "k", p); r != 4 {
		t.Fatalf("remaining %d after a late SetCost, want 4", r)
	}

	plain := keyed(t, lim, ratelimit.WithPolicy(p))
	plain.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, func(ctx context.Context) { u = ratelimit.FromContext(ctx) }))
	if u != nil {
		t.Fatalf("a Usage without WithUsage: %+v", u)
	}
	if err := u.SetCost(3); !errors.Is(err, ratelimit.ErrInvalidConfig) {
		t.Fatalf("SetCost on a nil Usage: %v", err)
	}
	if err := u.Reset(context.Background()); !errors.Is(err, ratelimit.ErrInvalidConfig) {
		t.Fatalf("Reset on a nil Usage: %v", err)
	}
}

// flood sends n concurrent requests for key "k" through m, holding each
// admitted one in its handler, and returns once every request is admitted
// or denied: the counts, and a release that lets the held handlers return
// and waits for every request to end. denial, if not nil, sees each
// denial's response.
func flood(m *ratelimit.Middleware, n int, denial func(*sink.Recorder)) (admitted, denied int, release func()) {
	hold := make(chan struct{})
	var decided, ended sync.WaitGroup
	var mu sync.Mutex
	decided.Add(n)
	for range n {
		ended.Go(func() {
			rec := sink.NewRecorder()
			ok := m.Handle(context.Background(), req("GET", "/", "k"), rec, handler(200, func(context.Context) {
				mu.Lock()
				admitted++
				mu.Unlock()
				decided.Done()
				<-hold
			}))
			if !ok {
				mu.Lock()
				denied++
				mu.Unlock()
				if denial != nil {
					denial(rec)
				}
				decided.Done()
			}
		})
	}
	decided.Wait()
	mu.Lock()
	defer mu.Unlock()
	return admitted, denied, func() { close(hold); ended.Wait() }
}

// A handler that panics is settled as a 500 and the panic goes on.
func TestUsagePanickingHandler(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	p := core.MustParsePolicy("5/1m;name=p")
	m := keyed(t, lim, ratelimit.WithPolicy(p),
		ratelimit.WithUsage(func(status int) bool { return status != http.StatusInternalServerError }))
	func() {
		defer func() {
			if recover() != "boom" {
				t.Error("the handler's panic did not go on")
			}
		}()
		m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, func(context.Context) { panic("boom") }))
	}()
	if r := remaining(t, lim, "k", p); r != 5 {
		t.Fatalf("remaining %d, want 5: the 500 does not count", r)
	}
}

// Consume-then-refund holds the limit under concurrency: while their
// handlers run, admitted requests hold their units, so of 64 concurrent
// requests exactly the limit's 10 run, even though every one of them
// succeeds and is refunded afterwards.
func TestCountIfHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	p := core.MustParsePolicy("10/1m;algorithm=fixed_window;name=p")
	m := keyed(t, lim, ratelimit.WithPolicy(p),
		ratelimit.WithUsage(func(status int) bool { return status >= 400 }))
	admitted, _, release := flood(m, 64, nil)
	release()
	if admitted != 10 {
		t.Fatalf("%d requests ran at once, want the limit's 10", admitted)
	}
	if r := remaining(t, lim, "k", p); r != 10 {
		t.Fatalf("remaining %d once all succeeded, want 10", r)
	}
}

// A Route inside the router's middleware: one Usage covering both checks;
// SetCost settles both, each at its own policies.
func TestUsageAcrossRoute(t *testing.T) {
	t.Parallel()
	lim, _ := newLimiter(t)
	global := core.MustParsePolicy("100/1m;algorithm=fixed_window;name=global")
	m := keyed(t, lim, ratelimit.WithPolicy(global), ratelimit.WithUsage(nil))
	tokens := core.MustParsePolicy("1000/1m;algorithm=fixed_window;name=tokens")
	rm, err := m.Route(tokens)
	if err != nil {
		t.Fatal(err)
	}
	var u *ratelimit.Usage
	rec := sink.NewRecorder()
	m.Handle(context.Background(), req("POST", "/chat", "k"), sink.NewRecorder(), func(ctx context.Context) int {
		rm.Handle(ctx, req("POST", "/chat", "k"), rec, handler(200, func(ctx context.Context) {
			u = ratelimit.FromContext(ctx)
			if err := u.SetCost(250); err != nil {
				t.Error(err)
			}
		}))
		return 200
	})
	if u == nil || len(u.Policies) != 2 || u.Policies[0].Name != "global" || u.Policies[1].Name != "tokens" || len(u.Decisions) != 2 {
		t.Fatalf("usage %+v", u)
	}
	if got := rec.H.Get("Ratelimit"); got != `"global";r=99;t=60, "tokens";r=999;t=60` {
		t.Errorf("RateLimit %q", got)
	}
	if g, tk := remaining(t, lim, "k", global), remaining(t, lim, "k", tokens); g != 0 || tk != 750 {
		t.Fatalf("remaining global %d, tokens %d; want 0 (in debt) and 750", g, tk)
	}
}

// countingBackend signals every renewal (an OpCharge with At) it passes on.
type countingBackend struct {
	core.Backend
	renewed chan struct{}
}

func (b countingBackend) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	err := b.Backend.Do(ctx, items, now, out)
	if items[0].Op == core.OpCharge && !items[0].At.IsZero() {
		b.renewed <- struct{}{}
	}
	return err
}

// A concurrency limit: of 64 concurrent requests exactly the limit's 10 run
// at once, each holds its slot until its handler returns (or panics), and
// a long one renews its slot while a crashed one's is free a lifetime
// later.
func TestConcurrencyLimit(t *testing.T) {
	store := must.Do(memstore.New())
	clk := core.NewManualClock(t0)
	cb := countingBackend{store, make(chan struct{}, 16)}
	lim := core.NewLimiter(cb, core.WithClock(clk))
	slots := core.MustParsePolicy("10;algorithm=concurrency;name=inflight")
	rate := core.MustParsePolicy("1000/1m;name=rate")
	m := keyed(t, lim, ratelimit.WithPolicy(rate, slots))
	free := func() int { return remaining(t, lim, "k", slots) }

	admitted, denied, release := flood(m, 64, func(rec *sink.Recorder) {
		if rec.Status != http.StatusTooManyRequests || rec.H.Get("Retry-After") == "" {
			t.Errorf("denial: %d %v", rec.Status, rec.H)
		}
	})
	if admitted != 10 || denied != 54 || free() != 0 {
		t.Fatalf("%d admitted, %d denied, %d slots free; want 10, 54, 0", admitted, denied, free())
	}
	release()
	if f := free(); f != 10 {
		t.Fatalf("%d slots free once every handler returned, want 10", f)
	}
	// The rate policy counted the 10 admitted alone; the fields show it
	// alone.
	rec := sink.NewRecorder()
	m.Handle(context.Background(), req("GET", "/", "k"), rec, handler(200, nil))
	if got := rec.H.Get("Ratelimit"); got != `"rate";r=989;t=1` {
		t.Errorf("RateLimit %q, want the rate policy's alone", got)
	}

	// A panicking handler gives its slot back.
	func() {
		defer func() { _ = recover() }()
		m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, func(context.Context) { panic("boom") }))
	}()
	if f := free(); f != 10 {
		t.Fatalf("%d slots free after a panic, want 10", f)
	}

	// A long request renews its slot every third of its lifetime.
	entered, done, release2 := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, func(context.Context) {
			close(entered)
			<-release2
		}))
	}()
	<-entered
	for range 4 { // to 80 s: past the slot's first lifetime
		clk.Advance(20 * time.Second)
		select {
		case <-cb.renewed:
		case <-time.After(10 * time.Second):
			t.Fatal("no renewal after 20 s of the clock")
		}
	}
	if f := free(); f != 9 {
		t.Fatalf("%d slots free while a renewed request runs past its first lifetime, want 9", f)
	}
	close(release2)
	<-done
	if f := free(); f != 10 {
		t.Fatalf("%d slots free after the long request, want 10", f)
	}

	// A crashed instance's slots (taken, never given back) are free once
	// the clock passes their lifetime.
	crashed := []core.Item{{Key: "k", Policy: slots, Cost: 1}}
	for range 4 {
		if _, err := lim.Do(context.Background(), crashed, nil); err != nil {
			t.Fatal(err)
		}
	}
	if f := free(); f != 6 {
		t.Fatalf("%d slots free, want 6", f)
	}
	clk.Advance(time.Minute)
	if f := free(); f != 10 {
		t.Fatalf("%d slots free a lifetime after the crash, want 10", f)
	}
}

// On the system clock a timer renews the slot: a request that runs past
// its slot's first lifetime (1 s, the shortest allowed) still holds it.
func TestConcurrencyRenewalOnTheSystemClock(t *testing.T) {
	t.Parallel()
	cb := countingBackend{must.Do(memstore.New()), make(chan struct{}, 16)}
	lim := core.NewLimiter(cb)
	slots := core.MustParsePolicy("1/1s;algorithm=concurrency")
	m := keyed(t, lim, ratelimit.WithPolicy(slots))
	m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, func(context.Context) {
		for i := range 4 { // 1.33 s or more: past the first lifetime
			select {
			case <-cb.renewed:
			case <-time.After(10 * time.Second):
				t.Fatalf("renewal %d never came", i+1)
			}
		}
		if f := remaining(t, lim, "k", slots); f != 0 {
			t.Errorf("%d slots free while the renewed request runs, want 0", f)
		}
	}))
	if f := remaining(t, lim, "k", slots); f != 1 {
		t.Fatalf("%d slots free after the request, want 1", f)
	}
}

// A concurrency limit in a dry run (shadow) counts the requests in flight
// as the enforced one would, and gives their slots back.
func TestShadowConcurrencyLimit(t *testing.T) {
	t.Parallel()
	lim, clk := newLimiter(t)
	slots := core.MustParsePolicy("1;algorithm=concurrency;name=inflight;shadow=true")
	var shadowAllowed []bool
	m := keyed(t, lim, ratelimit.WithPolicy(slots),
		ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) { shadowAllowed = append(shadowAllowed, e.Shadow.Allowed) }))
	for range 3 {
		m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, nil))
	}
	m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, func(context.Context) {
		clk.Advance(time.Second) // a request that takes a second
		// A second request while this one runs would be denied.
		m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, nil))
	}))
	if want := []bool{true, true, true, true, false}; !slices.Equal(shadowAllowed, want) {
		t.Fatalf("shadow decisions %v, want %v", shadowAllowed, want)
	}
	if f := remaining(t, lim, "k", slots); f != 1 {
		t.Fatalf("%d shadow slots free at the end, want 1", f)
	}
}

// A cost set after time has passed is charged at the end, on top of what
// the request took: not as a renewal of its first charge.
func TestSetCostLater(t *testing.T) {
	t.Parallel()
	lim, clk := newLimiter(t)
	p := core.MustParsePolicy("100/1h;algorithm=fixed_window;name=p")
	m := keyed(t, lim, ratelimit.WithPolicy(p), ratelimit.WithUsage(nil))
	m.Handle(context.Background(), req("GET", "/", "k"), sink.NewRecorder(), handler(200, func(ctx context.Context) {
		clk.Advance(time.Second) // the work takes a second
		if err := ratelimit.FromContext(ctx).SetCost(30); err != nil {
			t.Error(err)
		}
	}))
	if r := remaining(t, lim, "k", p); r != 70 {
		t.Fatalf("remaining %d, want 70", r)
	}
}
