package main

import (
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampletest"
	"github.com/ratelimit-go/ratelimit/internal/fibertest"
)

func TestExample(t *testing.T) {
	exampletest.Suite(t, func(l *core.Limiter, _ ...ratelimit.Option) (http.Handler, error) {
		app, err := newApp(l)
		if err != nil {
			return nil, err
		}
		return fibertest.Handler(app), nil
	}, "fiber", build,
		// Two fasthttp goroutines are not run's: the process-wide Date
		// header updater, and a stopped server's worker-pool cleaner, which
		// notices the stop only when its 10 s sleep ends.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"))
}
