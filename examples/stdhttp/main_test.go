package main

import (
	"testing"

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
