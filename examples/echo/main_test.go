package main

import (
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampletest"
)

func TestExample(t *testing.T) {
	exampletest.Suite(t, func(l *core.Limiter) (http.Handler, error) { return newApp(l) }, run)
}

// TestMain checks that run leaves no goroutine behind once its context
// ends: servers, stores and clients are all closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
