package redisstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// slowApp is the handler behind both instances: it samples the requests in
// flight on entry, then waits until the test lets it go.
type slowApp struct {
	inFlight, most atomic.Int64
	entered        chan chan struct{} // each admitted request's release
}

func (a *slowApp) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := a.inFlight.Add(1)
	for m := a.most.Load(); n > m && !a.most.CompareAndSwap(m, n); m = a.most.Load() {
	}
	release := make(chan struct{})
	a.entered <- release
	<-release
	a.inFlight.Add(-1)
	w.WriteHeader(http.StatusOK)
}

// TestConcurrencyLimitTwoInstances proves a limit of 20 requests in flight
// shared by two instances (two limiters, each with its own client and
// middleware) over a real Redis: 200 requests in ten waves of 20, half of
// the running ones let go after each wave, never more than 20 in the
// handlers at once, every request answered 200 or 429. Then one instance
// crashes holding 10 slots: they stay taken until the clock passes a
// slot's lifetime, and are free from then on.
func TestConcurrencyLimitTwoInstances(t *testing.T) {
	clock := core.NewManualClock(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	slots := core.MustParsePolicy("20/1m;algorithm=concurrency;name=inflight")
	prefix := redistest.Prefix(t)
	app := &slowApp{entered: make(chan chan struct{}, 200)}
	crashable := redistest.NewClient()
	if crashable == nil {
		redistest.Client(t) // fails under CI, skips elsewhere
		return
	}
	var limiters [2]*core.Limiter
	var instances [2]http.Handler
	for i, c := range []redis.UniversalClient{redistest.Client(t), crashable} {
		limiters[i] = core.NewLimiter(newStore(t, c, redisstore.WithPrefix(prefix)), core.WithClock(clock))
		mw, err := stdhttp.New(ratelimit.WithLimiter(limiters[i]), ratelimit.WithKeyFunc(keyfuncs.Constant("api")), ratelimit.WithPolicy(slots))
		if err != nil {
			t.Fatal(err)
		}
		instances[i] = mw(app)
	}
	free := func() int {
		d, err := limiters[0].Peek(context.Background(), "api", slots)
		if err != nil {
			t.Fatal(err)
		}
		return d.Remaining
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	// send starts n requests on instance i and returns once each is either
	// in the handler or answered, with the releases of those admitted.
	send := func(i, n int) []chan struct{} {
		answered := make(chan struct{}, n)
		for range n {
			wg.Go(func() {
				rec := httptest.NewRecorder()
				instances[i].ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
				mu.Lock()
				statuses[rec.Code]++
				mu.Unlock()
				if rec.Code != http.StatusOK {
					answered <- struct{}{}
				}
			})
		}
		var running []chan struct{}
		for range n {
			select {
			case r := <-app.entered:
				running = append(running, r)
			case <-answered:
			case <-time.After(10 * time.Second):
				t.Fatalf("a request neither entered the handler nor was answered")
			}
		}
		return running
	}
	// finish lets the requests of rs go and waits until their slots are
	// back.
	finish := func(rs []chan struct{}, want int) {
		for _, r := range rs {
			close(r)
		}
		deadline := time.Now().Add(10 * time.Second)
		for free() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%d slots free, want %d", free(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}

	var running []chan struct{}
	for wave := range 10 {
		running = append(running, send(wave%2, 20)...)
		if len(running) != 20 {
			t.Fatalf("wave %d: %d running, want 20", wave, len(running))
		}
		finish(running[:10], 10)
		running = running[10:]
	}
	finish(running, 20)
	wg.Wait()
	if most := app.most.Load(); most != 20 {
		t.Fatalf("at most %d requests in flight, want 20", most)
	}
	if statuses[http.StatusOK] != 110 || statuses[http.StatusTooManyRequests] != 90 || len(statuses) != 2 {
		t.Fatalf("answers %v, want 110 200s and 90 429s", statuses)
	}
	t.Logf("two instances, limit 20: at most %d in flight, answers %v", app.most.Load(), statuses)

	// Instance 1 crashes with 10 requests in flight: their slots are
	// never given back.
	held := send(1, 10)
	if err := crashable.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range held {
		close(r) // their releases fail: the client is gone
	}
	wg.Wait()
	if f := free(); f != 10 {
		t.Fatalf("%d slots free after the crash, want 10", f)
	}
	rs := send(0, 20)
	if len(rs) != 10 {
		t.Fatalf("%d of 20 admitted beside the crashed slots, want 10", len(rs))
	}
	finish(rs, 10)
	clock.Advance(time.Minute - time.Microsecond)
	if f := free(); f != 10 {
		t.Fatalf("%d slots free a microsecond before the lifetime ends, want 10", f)
	}
	clock.Advance(time.Microsecond)
	if f := free(); f != 20 {
		t.Fatalf("%d slots free once the lifetime has passed, want 20", f)
	}
	finish(send(0, 20), 20)
	wg.Wait()
	t.Logf("after the crash: 10 slots held until the clock passed their 1m lifetime, all 20 free from then")
}
