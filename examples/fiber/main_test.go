package main

import (
	"testing"

	"github.com/ratelimit-go/ratelimit/examples/internal/exampletest"
)

func TestApp(t *testing.T) {
	limiter, clock := exampletest.Limiter(t)
	app, err := newApp(limiter)
	if err != nil {
		t.Fatal(err)
	}
	exampletest.Check(t, exampletest.Fiber(app), clock)
}

func TestRun(t *testing.T) { exampletest.Serve(t, run) }

func TestRunWithRedis(t *testing.T) {
	exampletest.Serve(t, run, "-redis", exampletest.MiniRedisURL(t))
}
