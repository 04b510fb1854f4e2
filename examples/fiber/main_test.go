package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit/examples/internal/exampletest"
	"github.com/ratelimit-go/ratelimit/internal/fibertest"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
)

func TestApp(t *testing.T) {
	limiter, clock := exampletest.Limiter(t)
	app, err := newApp(limiter)
	if err != nil {
		t.Fatal(err)
	}
	exampletest.Check(t, fibertest.Handler(app), clock)
}

func TestRun(t *testing.T) { exampletest.Serve(t, run) }

func TestRunWithRedis(t *testing.T) {
	exampletest.Serve(t, run, "-redis", exampletest.MiniRedisURL(t))
}

// TestRunWithRedisHung: wired as the README advises, the example answers
// every request within its 50 ms budget plus a few milliseconds while its
// Redis is hung (SIGSTOP) or stopped.
func TestRunWithRedisHung(t *testing.T) {
	_, scrape := exampletest.HungRedis(t, run, redisproc.Start(t))
	if testing.Verbose() {
		t.Logf("scrape after the outage:\n%s", scrape)
	}
}

// TestMain checks that run leaves no goroutine behind once its context
// ends: servers, stores and clients are all closed. Two fasthttp
// goroutines are not run's: the process-wide Date header updater, and a
// stopped server's worker-pool cleaner, which notices the stop only when
// its 10 s sleep ends.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"))
}
