// Package exampletest checks that an example server limits requests as the
// examples promise, whatever its framework: the same requests, the same
// status codes, the same header fields. Each example's test hands its app
// constructor and its main logic to Suite, which builds the app on
// Limiter's manual clock for Check and runs the main logic on a real socket
// with Serve and against a hung Redis with HungRedis.
package exampletest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampleenv"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
)

// Start is the manual clock's first instant, aligned on every window the
// examples use.
var Start = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// Limiter returns a limiter over a fresh memory store on a manual clock
// reading Start.
func Limiter(t testing.TB) (*core.Limiter, *core.ManualClock) {
	st := must.Do(memstore.New())
	clock := core.NewManualClock(Start)
	return core.NewLimiter(st, core.WithClock(clock)), clock
}

type result struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, h http.Handler, method, target, remote, apiKey string) result {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.RemoteAddr = remote
	if apiKey != "" {
		req.Header.Set("X-API-Key", apiKey)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return result{rec.Code, rec.Header(), rec.Body.String()}
}

func (r result) want(t *testing.T, what string, status int, rateLimit string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d (headers %v, body %q)", what, r.status, status, r.header, r.body)
	}
	if got := strings.Join(r.header.Values("RateLimit"), ", "); got != rateLimit {
		t.Fatalf("%s: RateLimit %q, want %q", what, got, rateLimit)
	}
}

const (
	alice = "192.0.2.1:1234"
	bob   = "198.51.100.2:5678"
)

// Check sends the examples' requests to h, an app built on a limiter from
// Limiter whose clock is clock.
func Check(t *testing.T, h http.Handler, clock *core.ManualClock) {
	// The global policy, by client IP.
	r := do(t, h, "GET", "/", alice, "")
	r.want(t, "GET /", http.StatusOK, `"api";r=99;t=1`)
	if p := r.header.Get("RateLimit-Policy"); p != `"api";q=100;w=60` {
		t.Fatalf("RateLimit-Policy %q", p)
	}
	do(t, h, "GET", "/", alice, "").want(t, "GET / again", http.StatusOK, `"api";r=98;t=2`)
	do(t, h, "GET", "/", bob, "").want(t, "GET / from another IP", http.StatusOK, `"api";r=99;t=1`)
	// A header the client picks is no new quota.
	do(t, h, "GET", "/", alice, "key-1").want(t, "GET / with an API key", http.StatusOK, `"api";r=97;t=2`)

	// The login route: 5 per 15 minutes, on top of the global policy; the
	// client sees both (GCRA's 0.6 s per unit: t rounds 0.6 s times the
	// units used up).
	for i, t0 := range []int{3, 3, 4, 5, 5} {
		used := i + 1
		do(t, h, "POST", "/login", alice, "").want(t, "login "+strconv.Itoa(used), http.StatusOK,
			`"api";r=`+strconv.Itoa(97-used)+`;t=`+strconv.Itoa(t0)+`, "login";r=`+strconv.Itoa(5-used)+`;t=900`)
	}
	r = do(t, h, "POST", "/login", alice, "")
	r.want(t, "login 6", http.StatusTooManyRequests, `"api";r=92;t=5, "login";r=0;t=900`)
	if ra := r.header.Get("Retry-After"); ra != "900" {
		t.Fatalf("login 6: Retry-After %q, want 900", ra)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("login 6: Content-Type %q", ct)
	}
	// Neither does a new API key with each attempt buy more logins.
	do(t, h, "POST", "/login", alice, "key-2").want(t, "login 7, with an API key", http.StatusTooManyRequests, `"api";r=92;t=5, "login";r=0;t=900`)
	// The global policy counted the five admitted logins: the denied ones,
	// which the route refused, got their global units back.
	do(t, h, "GET", "/", alice, "").want(t, "GET / after the logins", http.StatusOK, `"api";r=91;t=6`)

	// The search route: 10 per second and 1000 per hour, together.
	for i := 1; i <= 10; i++ {
		r = do(t, h, "GET", "/search?q=go", alice, "")
		if r.status != http.StatusOK {
			t.Fatalf("search %d: %d", i, r.status)
		}
	}
	r = do(t, h, "GET", "/search?q=go", alice, "")
	r.want(t, "search 11", http.StatusTooManyRequests, `"burst";r=0;t=1, "hourly";r=990;t=3600`)
	if ra := r.header.Get("Retry-After"); ra != "1" {
		t.Fatalf("search 11: Retry-After %q, want 1", ra)
	}
	clock.Advance(time.Second)
	// The denial consumed nothing from the hourly quota.
	do(t, h, "GET", "/search?q=go", alice, "").want(t, "search after a second", http.StatusOK, `"burst";r=9;t=1, "hourly";r=989;t=3599`)

	// Health checks are not limited.
	for range 3 {
		r = do(t, h, "GET", "/healthz", alice, "")
		r.want(t, "GET /healthz", http.StatusOK, "")
		if p := r.header.Values("RateLimit-Policy"); len(p) > 0 {
			t.Fatalf("GET /healthz: RateLimit-Policy %q", p)
		}
	}
}

// running is an example's main logic running on loopback ports.
type running struct {
	urls map[string]string // the reported addresses by their log prefix ("listening on ")
	stop func(t *testing.T)
}

// start runs an example's main logic with args, waits until it has reported
// an address for every prefix of want (its log lines "listening on ...",
// "metrics on ..."), and returns them; stop cancels its context and checks
// that it returns nil within 10 s.
func start(t *testing.T, run runFunc, args []string, want ...string) running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw)
		_ = pw.CloseWithError(io.EOF)
		done <- err
	}()
	urls := map[string]string{}
	lines := bufio.NewScanner(pr)
	for len(urls) < len(want) && lines.Scan() {
		for _, prefix := range want {
			if a, ok := strings.CutPrefix(lines.Text(), prefix); ok {
				urls[prefix] = a
			}
		}
	}
	if len(urls) < len(want) {
		cancel()
		t.Fatalf("addresses reported: %v, want %q; run returned %v", urls, want, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return running{urls: urls, stop: func(t *testing.T) {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("run did not return after its context ended")
		}
	}}
}

// Serve runs an example's main logic with -addr 127.0.0.1:0 and the given
// extra arguments, waits for it to report its address, checks that GET /
// is answered over the socket with rate-limit fields, then cancels its
// context and checks that it returns nil.
func Serve(t *testing.T, run runFunc, args ...string) {
	r := start(t, run, append([]string{"-addr", "127.0.0.1:0"}, args...), "listening on ")
	base := r.urls["listening on "]
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	res, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("RateLimit"), `"api";r=99;`) {
		t.Fatalf("GET / over the socket: %d %v", res.StatusCode, res.Header)
	}
	r.stop(t)
}

// HungRedis runs an example's main logic against the real Redis srv with a
// 50 ms budget and its metrics served, exhausts GET /search (10 per second)
// so that some requests are denied, then hangs srv (SIGSTOP) and sends
// requests: every one must be answered (by the fallback) within the budget
// plus a few milliseconds, never go-redis's 5 to 10 s. It resumes srv, stops
// it, and checks the same with Redis refusing connections. Then it scrapes
// /metrics and checks that the denials, the fallback's decisions, the
// failures, the breaker's opening and the runtime's goroutines were
// counted. It returns the slowest response and the scrape.
func HungRedis(t *testing.T, run runFunc, srv *redisproc.Server) (time.Duration, string) {
	const budget = 50 * time.Millisecond
	r := start(t, run, []string{"-addr", "127.0.0.1:0", "-metrics-addr", "127.0.0.1:0", "-redis", "redis://" + srv.Addr + "/0", "-redis-budget", budget.String()},
		"listening on ", "metrics on ")
	base, metricsURL := r.urls["listening on "], r.urls["metrics on "]
	client := &http.Client{Transport: &http.Transport{}, Timeout: 20 * time.Second}
	denied := 0
	for range 12 {
		res, err := client.Get(base + "/search?q=x")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusTooManyRequests {
			denied++
		}
	}
	if denied == 0 {
		t.Fatal("12 searches in a row were all admitted under 10 per second")
	}
	defer client.CloseIdleConnections()
	get := func(what string) time.Duration {
		t.Helper()
		start := time.Now()
		res, err := client.Get(base + "/")
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("RateLimit") == "" {
			t.Fatalf("%s: %d %v", what, res.StatusCode, res.Header)
		}
		return took
	}
	get("Redis healthy")
	var worst time.Duration
	srv.Pause()
	for range 20 {
		worst = max(worst, get("Redis hung"))
	}
	srv.Resume()
	srv.Stop()
	for range 20 {
		worst = max(worst, get("Redis stopped"))
	}
	t.Logf("slowest response with Redis hung or stopped: %v (budget %v)", worst, budget)
	if limit := budget + latencyMargin; worst > limit {
		t.Fatalf("slowest response %v, want at most %v", worst, limit)
	}
	res, err := client.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	scrape := string(body)
	for _, want := range []string{
		`ratelimit_checks_total{outcome="denied",policy="burst"}`,
		`ratelimit_decisions_total{source="fallback"}`,
		`ratelimit_breaker_transitions_total{to="open"}`,
		`ratelimit_backend_call_duration_seconds_count{op="check"}`,
		`go_goroutines`, // the runtime's collectors beside the library's
	} {
		if !strings.Contains(scrape, want+" ") || strings.Contains(scrape, want+" 0\n") {
			t.Errorf("the scrape has no non-zero %s:\n%s", want, scrape)
		}
	}
	if !strings.Contains(scrape, `ratelimit_backend_errors_total{kind="timeout"}`) {
		t.Errorf("no backend error counts in the scrape")
	}
	r.stop(t)
	return worst, scrape
}

// runFunc is an example's main logic with its inputs and outputs as
// parameters.
type runFunc func(ctx context.Context, args []string, logw io.Writer) error

// Suite runs every check an example's test makes: its app, built by newApp
// on Limiter's manual clock with no further option, through Check; its main
// logic (exampleenv.Run with name and build) on a real socket with Serve,
// on memory and on miniredis; and, wired as the README advises, every
// request answered within its 50 ms budget plus a few milliseconds while
// its Redis is hung (SIGSTOP) or stopped (HungRedis). Once they are done, no
// goroutine may be left but those ignore names: servers, stores and clients
// are all closed.
func Suite(t *testing.T, newApp func(*core.Limiter, ...ratelimit.Option) (http.Handler, error), name string, build exampleenv.Build, ignore ...goleak.Option) {
	run := func(ctx context.Context, args []string, logw io.Writer) error {
		return exampleenv.Run(ctx, name, args, logw, build)
	}
	defer goleak.VerifyNone(t, ignore...)
	t.Run("App", func(t *testing.T) {
		limiter, clock := Limiter(t)
		h, err := newApp(limiter)
		if err != nil {
			t.Fatal(err)
		}
		Check(t, h, clock)
	})
	t.Run("Run", func(t *testing.T) { Serve(t, run) })
	t.Run("RunWithRedis", func(t *testing.T) { Serve(t, run, "-redis", MiniRedisURL(t)) })
	t.Run("RunWithRedisHung", func(t *testing.T) {
		_, scrape := HungRedis(t, run, redisproc.Start(t))
		if testing.Verbose() {
			t.Logf("scrape after the outage:\n%s", scrape)
		}
	})
}
