package fiberrl_test

import (
	"errors"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/fiberrl"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// TestNewStartsNoGoroutine: 100 calls of New, never closed, leave no
// goroutine behind (the default memory store has no sweeper).
func TestNewStartsNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	before := runtime.NumGoroutine()
	var keep []any
	for range 100 {
		h, err := fiberrl.New(ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")))
		if err != nil {
			t.Fatal(err)
		}
		keep = append(keep, h)
	}
	if n := runtime.NumGoroutine() - before; n > 0 {
		t.Fatalf("100 calls of New left %d goroutines running", n)
	}
	runtime.KeepAlive(keep)
}

// TestNewRefusesForeignPatterns: a route pattern in net/http's syntax can
// never match on this framework; New says so instead of limiting nothing.
func TestNewRefusesForeignPatterns(t *testing.T) {
	_, err := fiberrl.New(ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithRoute("GET", "/users/{id}", core.MustParsePolicy("1/1m")))
	var re *ratelimit.RouteError
	if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrInvalidConfig) || re.Pattern != "/users/{id}" {
		t.Fatalf("New = %v, want a *ratelimit.RouteError for /users/{id}", err)
	}
}
