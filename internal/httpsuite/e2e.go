package httpsuite

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// e2ePolicy admits one request per second per client, so a denied request
// is told to retry after 1 s.
var e2ePolicy = core.MustParsePolicy("1/1s;algorithm=gcra;name=e2e")

// RunE2E is E2E over an Adapter: the middleware is installed as global
// middleware of an app built by a.
func RunE2E(t *testing.T, a Adapter) {
	E2E(t, func(m *ratelimit.Middleware) http.Handler { return a.Handler(t, Setup{Global: m}) })
}

// E2E serves the handler that build returns (an app serving at least
// GET /, with m installed) on a real loopback server and checks that a
// retrying client honouring Retry-After gets through: the first request is
// admitted, the second is answered 429 with Retry-After: 1, the client's
// backoff reads that second, and its retry is admitted. The limiter runs on
// a manual clock, which the client's backoff advances by the wait it chose
// instead of sleeping; the test fails rather than hang after 10 s.
func E2E(t *testing.T, build func(m *ratelimit.Middleware) http.Handler) {
	st := must.Do(memstore.New())
	clock := core.NewManualClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	var outcomes []ratelimit.Outcome
	m, err := ratelimit.New(
		ratelimit.WithLimiter(core.NewLimiter(st, core.WithClock(clock))),
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(e2ePolicy),
		ratelimit.WithObserver(func(_ context.Context, e ratelimit.Event) {
			mu.Lock()
			outcomes = append(outcomes, e.Outcome)
			mu.Unlock()
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(build(m))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// A plain request uses the quota.
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/", nil)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("first request: status %d", res.StatusCode)
	}

	// The retrying client is refused, waits Retry-After, and gets through.
	type seen struct {
		status     int
		retryAfter string
	}
	var responses []seen
	client := retryablehttp.NewClient()
	client.HTTPClient = srv.Client()
	client.Logger = nil
	client.RetryMax = 3
	client.RetryWaitMin = 10 * time.Millisecond
	client.RetryWaitMax = 3 * time.Second
	var waits []time.Duration
	client.Backoff = func(min, max time.Duration, attempt int, r *http.Response) time.Duration {
		d := retryablehttp.DefaultBackoff(min, max, attempt, r) // Retry-After, for a 429
		waits = append(waits, d)
		clock.Advance(d)
		return 0
	}
	client.ResponseLogHook = func(_ retryablehttp.Logger, r *http.Response) {
		responses = append(responses, seen{r.StatusCode, r.Header.Get("Retry-After")})
	}
	rreq, err := retryablehttp.NewRequestWithContext(ctx, "GET", srv.URL+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err = client.Do(rreq)
	if err != nil {
		t.Fatalf("retrying client: %v (responses %v)", err, responses)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != OKBody {
		t.Fatalf("after retrying: status %d body %q (responses %v)", res.StatusCode, body, responses)
	}
	if len(responses) != 2 || responses[0].status != http.StatusTooManyRequests || responses[1].status != http.StatusOK {
		t.Fatalf("responses %v, want one 429 then 200", responses)
	}
	ra, err := strconv.Atoi(responses[0].retryAfter)
	if err != nil || ra != 1 {
		t.Fatalf("Retry-After %q, want 1", responses[0].retryAfter)
	}
	if len(waits) != 1 || waits[0] != time.Duration(ra)*time.Second {
		t.Fatalf("the client waited %v; Retry-After said %d s", waits, ra)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []ratelimit.Outcome{ratelimit.OutcomeAllowed, ratelimit.OutcomeDenied, ratelimit.OutcomeAllowed}
	if len(outcomes) != len(want) {
		t.Fatalf("server saw %v, want %v", outcomes, want)
	}
	for i := range want {
		if outcomes[i] != want[i] {
			t.Fatalf("server saw %v, want %v", outcomes, want)
		}
	}
}
