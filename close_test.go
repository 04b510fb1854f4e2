package ratelimit_test

import (
	"context"
	"net/http"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// TestConstructorsStartNoGoroutine builds every form the README shows 100
// times, never closing anything, and requires that no goroutine is left: a
// default Middleware's memory store reclaims on the request path instead of
// in a sweeper nobody could stop. The adapters' modules repeat this for
// ginrl.New, echorl.New and fiberrl.New.
func TestConstructorsStartNoGoroutine(t *testing.T) {
	existing := goleak.IgnoreCurrent()
	opts := []ratelimit.Option{
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
	}
	ctx := context.Background()
	var keep []any
	for range 100 {
		m, err := ratelimit.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		mw, err := stdhttp.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		h := mw(http.NewServeMux())
		fallback := must.Do(resilient.New(must.Do(memstore.New()), resilient.WithFallback(must.Do(memstore.New()))))
		if _, err := core.NewLimiter(fallback).Allow(ctx, "k", core.MustParsePolicy("1/s")); err != nil {
			t.Fatal(err)
		}
		keep = append(keep, m, h, fallback)
	}
	// goleak, not a count of runtime.NumGoroutine: the count includes the
	// runtime's finalizer and cleanup goroutines while they run user code,
	// which a collection during the loop may start for objects of earlier
	// tests. goleak names each goroutine it finds and waits for those that
	// are on their way out.
	goleak.VerifyNone(t, existing)
	runtime.KeepAlive(keep)
}
