package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit/examples/internal/exampletest"
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

// TestMain checks that run leaves no goroutine behind once its context
// ends: servers, stores and clients are all closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
