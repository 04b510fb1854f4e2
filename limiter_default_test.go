package ratelimit_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
)

// TestDefaultStoreIsBounded: the store a Middleware makes for itself holds
// at most a million states, so that a flood of new keys cannot exhaust
// memory. A new key past them meets the failure mode; a key it holds is
// still limited. (Not parallel: it holds a million states.)
func TestDefaultStoreIsBounded(t *testing.T) {
	p := core.MustParsePolicy("1/1h;name=p")
	m := mustNew(t, ratelimit.WithKeyFunc(byHeader), ratelimit.WithPolicy(p), ratelimit.WithFailureMode(ratelimit.FailClosed))
	ctx := context.Background()
	for i := range 1_000_000 {
		if _, err := m.Limiter().Allow(ctx, "k"+strconv.Itoa(i), p); err != nil {
			t.Fatalf("state %d: %v", i+1, err)
		}
	}
	for key, want := range map[string]int{"new": http.StatusServiceUnavailable, "k7": http.StatusTooManyRequests} {
		rec := newRecorder()
		if m.Handle(ctx, req("GET", "/", key), rec, nil) || rec.status != want {
			t.Errorf("key %q with a million states held: status %d, want %d", key, rec.status, want)
		}
	}
}
