package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit/examples/internal/exampletest"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
)

func TestApp(t *testing.T) {
	limiter, clock := exampletest.Limiter(t)
	h, err := newApp(limiter)
	if err != nil {
		t.Fatal(err)
	}
	exampletest.Check(t, h, clock)
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
// ends: servers, stores and clients are all closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
