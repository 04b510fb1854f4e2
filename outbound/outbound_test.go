package outbound_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/outbound"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// upstream is a loopback server limited by this project's own middleware at
// policy, on clock; served counts the requests its handler saw.
func upstream(t *testing.T, clock *core.ManualClock, policy string, served *atomic.Int64) *httptest.Server {
	t.Helper()
	mw := must.Do(stdhttp.New(
		ratelimit.WithLimiter(core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock))),
		ratelimit.WithKeyFunc(keyfuncs.Constant("everyone")),
		ratelimit.WithPolicy(core.MustParsePolicy(policy))))
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		_, _ = io.WriteString(w, "ok")
	})))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, c *http.Client, ctx context.Context, url string) (int, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

func short() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Second)
}

// TestClientLimitHolds: two Transports sharing one store (two instances of
// a fleet) send no more than the policy allows, and a request past it waits
// for the Limiter, or fails at once when the wait cannot fit its deadline,
// without reaching the upstream.
func TestClientLimitHolds(t *testing.T) {
	t.Parallel()
	clock := core.NewManualClock(t0)
	var served atomic.Int64
	srv := upstream(t, clock, "100/1m", &served)
	store := must.Do(memstore.New())
	policy := core.MustParsePolicy("3/1m;algorithm=fixed_window;name=partner")
	var clients []*http.Client
	for range 2 {
		tr := must.Do(outbound.New(core.NewLimiter(store, core.WithClock(clock)), policy))
		clients = append(clients, &http.Client{Transport: tr})
	}
	for i := range 3 {
		ctx, cancel := short()
		code, err := get(t, clients[i%2], ctx, srv.URL)
		cancel()
		if err != nil || code != 200 {
			t.Fatalf("request %d: %d %v", i+1, code, err)
		}
	}
	ctx, cancel := short()
	_, err := get(t, clients[1], ctx, srv.URL)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || served.Load() != 3 {
		t.Fatalf("fourth request: %v, upstream served %d; want a deadline error and 3 served", err, served.Load())
	}
	// Without a deadline it waits for the next window.
	done := make(chan error, 1)
	go func() {
		code, err := get(t, clients[0], context.Background(), srv.URL)
		if err == nil && code != 200 {
			err = errors.New(http.StatusText(code))
		}
		done <- err
	}()
	waitFor(t, func() bool { return pendingAdvance(clock, done) })
	if err := <-done; err != nil || served.Load() != 4 {
		t.Fatalf("waited request: %v, served %d", err, served.Load())
	}
}

// TestLeakyBucketSpacesRequests: under a leaky bucket (2 a second, so one
// every 500ms), requests leave at the policy's rate: the second, asked at
// the same instant as the first, reaches the upstream 500ms later on the
// clock, however soon it was sent.
func TestLeakyBucketSpacesRequests(t *testing.T) {
	t.Parallel()
	clock := core.NewManualClock(t0)
	arrived := make(chan time.Time, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { arrived <- clock.Now() }))
	t.Cleanup(srv.Close)
	tr := must.Do(outbound.New(core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock)), core.MustParsePolicy("2/1s;algorithm=leaky_bucket")))
	c := &http.Client{Transport: tr}
	done := make(chan error, 2)
	for range 2 {
		go func() { _, err := get(t, c, context.Background(), srv.URL); done <- err }()
	}
	var first, second time.Time
	select {
	case first = <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no request reached the upstream within 10 s")
	}
	waitFor(t, func() bool {
		select {
		case second = <-arrived:
			return true
		default:
			clock.Advance(50 * time.Millisecond)
			return false
		}
	})
	if !first.Equal(t0) || second.Sub(first) < 500*time.Millisecond {
		t.Fatalf("requests reached the upstream at %v and %v; want the second 500ms after the first", first.Sub(t0), second.Sub(t0))
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// pendingAdvance moves the clock a second and reports whether the waiting
// request has finished, leaving its result in done.
func pendingAdvance(clock *core.ManualClock, done chan error) bool {
	select {
	case err := <-done:
		done <- err
		return true
	default:
		clock.Advance(time.Second)
		return false
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestUpstreamHoldsTheKey: once the upstream (this project's middleware,
// 2/1m) reports nothing remaining, the key is held until its reset: a
// request that cannot wait fails without reaching the upstream, and at the
// reset requests go through again.
func TestUpstreamHoldsTheKey(t *testing.T) {
	t.Parallel()
	clock := core.NewManualClock(t0)
	var served atomic.Int64
	srv := upstream(t, clock, "2/1m;algorithm=fixed_window", &served)
	tr := must.Do(outbound.New(core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock)), core.MustParsePolicy("100/1m")))
	c := &http.Client{Transport: tr}
	for i, want := range []int{200, 200} {
		ctx, cancel := short()
		code, err := get(t, c, ctx, srv.URL)
		cancel()
		if err != nil || code != want {
			t.Fatalf("request %d: %d %v, want %d", i+1, code, err, want)
		}
	}
	ctx, cancel := short()
	_, err := get(t, c, ctx, srv.URL)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || served.Load() != 2 {
		t.Fatalf("while held: %v, served %d; want a deadline error and no new request upstream", err, served.Load())
	}
	clock.Advance(time.Minute)
	ctx, cancel = short()
	code, err := get(t, c, ctx, srv.URL)
	cancel()
	if err != nil || code != 200 || served.Load() != 3 {
		t.Fatalf("after the reset: %d %v, served %d", code, err, served.Load())
	}
}

// TestRateLimitFieldsHold: a 2xx whose RateLimit fields report nothing
// remaining holds the key until their reset, in each of the forms
// upstreams send.
func TestRateLimitFieldsHold(t *testing.T) {
	t.Parallel()
	for name, fields := range map[string]http.Header{
		"draft 08+":  {"Ratelimit": {`"api";r=0;t=30`}},
		"draft 06":   {"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"30"}},
		"X- delay":   {"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"30"}},
		"X- unix":    {"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1767225630"}}, // t0 + 30 s
		"429 header": {"Retry-After": {"30"}},
		"429 date":   {"Retry-After": {t0.Add(30 * time.Second).Format(http.TimeFormat)}},
	} {
		t.Run(name, func(t *testing.T) {
			clock := core.NewManualClock(t0)
			var served atomic.Int64
			status := 200
			if strings.HasPrefix(name, "429") {
				status = 429
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				served.Add(1)
				maps.Copy(w.Header(), fields)
				w.WriteHeader(status)
			}))
			defer srv.Close()
			c := &http.Client{Transport: must.Do(outbound.New(core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock)), core.MustParsePolicy("100/1m")))}
			ctx, cancel := short()
			defer cancel()
			if _, err := get(t, c, ctx, srv.URL); err != nil {
				t.Fatal(err)
			}
			clock.Advance(29 * time.Second)
			early, cancelEarly := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancelEarly()
			if _, err := get(t, c, early, srv.URL); !errors.Is(err, context.DeadlineExceeded) || served.Load() != 1 {
				t.Fatalf("1 s before the reset: %v, served %d", err, served.Load())
			}
			clock.Advance(time.Second)
			if _, err := get(t, c, ctx, srv.URL); err != nil || served.Load() != 2 {
				t.Fatalf("at the reset: %v, served %d", err, served.Load())
			}
		})
	}
}

func TestNewRefusesBadInput(t *testing.T) {
	t.Parallel()
	if _, err := outbound.New(nil, core.MustParsePolicy("1/1s")); err == nil {
		t.Fatal("a nil Limiter accepted")
	}
	l := core.NewLimiter(must.Do(memstore.New()))
	if _, err := outbound.New(l, core.Policy{Limit: 0, Window: time.Second}); !errors.Is(err, core.ErrInvalidPolicy) {
		t.Fatalf("invalid policy: %v", err)
	}
	if _, err := outbound.New(l, core.MustParsePolicy("10;algorithm=concurrency")); !errors.Is(err, core.ErrInvalidPolicy) {
		t.Fatalf("a concurrency policy: %v", err)
	}
	if _, err := outbound.New(l, core.MustParsePolicy("10/1s;shadow=true")); !errors.Is(err, core.ErrInvalidPolicy) {
		t.Fatalf("a dry-run policy: %v", err)
	}
	tr := must.Do(outbound.New(l, core.MustParsePolicy("1/1s"), outbound.WithKey(func(*http.Request) string { return "" })))
	body := &closeCounter{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest("POST", "http://127.0.0.1:1/", body)
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("a request without a key was sent")
	}
	if body.closed != 1 {
		t.Fatalf("a refused request's body closed %d times, want 1 (as a RoundTripper must)", body.closed)
	}
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error {
	c.closed++
	return nil
}

// roundTripper is an http.RoundTripper of a function.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWithBase: the base RoundTripper sends what the limit admits, and the
// upstream's 429 it returns holds the key for the requests after it; a nil
// base leaves the default.
func TestWithBase(t *testing.T) {
	t.Parallel()
	clock := core.NewManualClock(t0)
	var sent atomic.Int64
	base := roundTripper(func(r *http.Request) (*http.Response, error) {
		status := http.StatusOK
		if sent.Add(1) == 2 {
			status = http.StatusTooManyRequests
		}
		h := http.Header{"Retry-After": {"30"}}
		return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
	})
	tr := must.Do(outbound.New(core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock)), core.MustParsePolicy("100/1m"),
		outbound.WithBase(nil), outbound.WithBase(base)))
	c := &http.Client{Transport: tr}
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		if code, err := get(t, c, context.Background(), "http://partner.example/"); err != nil || code != want {
			t.Fatalf("request %d: %d %v, want %d", i, code, err, want)
		}
	}
	// Held for 30 s by the upstream: a request that cannot wait that long
	// fails without reaching the base.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := get(t, c, ctx, "http://partner.example/"); err == nil || sent.Load() != 2 {
		t.Fatalf("a held key sent: err %v, base called %d times", err, sent.Load())
	}
	clock.Advance(30 * time.Second)
	if code, err := get(t, c, context.Background(), "http://partner.example/"); err != nil || code != http.StatusOK || sent.Load() != 3 {
		t.Fatalf("after the hold: %d %v, base called %d times", code, err, sent.Load())
	}
}
