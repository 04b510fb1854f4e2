package ratelimit_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// TestCloseStopsTheDefaultStore: a Middleware built without WithLimiter owns
// its memory store; Close stops that store's sweeper (no goroutine is left),
// derived Middlewares share it, and Close is idempotent.
func TestCloseStopsTheDefaultStore(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
		ratelimit.WithPolicy(core.MustParsePolicy("10/1m;name=api")),
	)
	if err != nil {
		t.Fatal(err)
	}
	derived, err := m.With(ratelimit.WithHeaders(ratelimit.HeadersNone))
	if err != nil {
		t.Fatal(err)
	}
	if derived.Limiter() != m.Limiter() {
		t.Fatal("a derived Middleware should share the default limiter")
	}
	if err := derived.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// The store still answers after Close.
	if _, err := m.Limiter().Allow(context.Background(), "k", core.MustParsePolicy("10/1m;name=api")); err != nil {
		t.Fatal(err)
	}
}

// TestCloseLeavesAGivenLimiter: Close never closes a limiter passed with
// WithLimiter; its owner does.
func TestCloseLeavesAGivenLimiter(t *testing.T) {
	existing := goleak.IgnoreCurrent() // only goroutines started below count
	store := memstore.New()
	m, err := ratelimit.New(
		ratelimit.WithLimiter(core.NewLimiter(store)),
		ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
		ratelimit.WithPolicy(core.MustParsePolicy("10/1m;name=api")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if goleak.Find(existing) == nil {
		t.Fatal("Close stopped the sweeper of a store it does not own")
	}
	store.Close()
	goleak.VerifyNone(t, existing)
}
