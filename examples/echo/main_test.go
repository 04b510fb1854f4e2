package main

import (
	"net/http"
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampletest"
)

func TestExample(t *testing.T) {
	exampletest.Suite(t, func(l *core.Limiter) (http.Handler, error) { return newApp(l) }, run)
}
