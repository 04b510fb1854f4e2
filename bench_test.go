package ratelimit_test

import (
	"context"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/sink"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

func benchHandle(b *testing.B, policies ...core.Policy) {
	m, err := ratelimit.New(
		ratelimit.WithLimiter(core.NewLimiter(must.Do(memstore.New()))),
		ratelimit.WithKeyFunc(keyfuncs.Constant("client")),
		ratelimit.WithPolicy(policies...),
	)
	if err != nil {
		b.Fatal(err)
	}
	r := keyfuncstest.New("192.0.2.1:1")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if !m.Handle(ctx, r, sink.Response{}, nil) {
			b.Fatal("denied")
		}
	}
}

// BenchmarkHandleAllow is the core's allow path: one policy, default
// headers rendered and handed to a Response that drops them.
func BenchmarkHandleAllow(b *testing.B) {
	benchHandle(b, core.MustParsePolicy("1000000000/1h;algorithm=fixed_window;name=api"))
}

// BenchmarkHandleAllowTwoPolicies is the allow path of a two-policy check.
func BenchmarkHandleAllowTwoPolicies(b *testing.B) {
	benchHandle(b, core.MustParsePolicy("1000000000/1h;algorithm=fixed_window;name=hour"),
		core.MustParsePolicy("1000000000/24h;algorithm=fixed_window;name=day"))
}
