package peers

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// memKeys are 1,000 distinct keys.
func memKeys() []string {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	return keys
}

// BenchmarkMemOursGCRA: the memory store's GCRA through a Limiter, serially,
// on the system clock, 1,000 keys round robin, 1,000 per second per key.
func BenchmarkMemOursGCRA(b *testing.B) {
	store, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	lim := core.NewLimiter(store)
	p := core.Policy{Limit: 1000, Window: time.Second, Algorithm: core.GCRA}
	keys := memKeys()
	ctx := context.Background()
	k := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lim.Allow(ctx, keys[k], p); err != nil {
			b.Fatal(err)
		}
		if k++; k == len(keys) {
			k = 0
		}
	}
}

// BenchmarkMemSethvargo is BenchmarkMemOursGCRA on sethvargo/go-limiter's
// memorystore, 1,000 tokens per second.
func BenchmarkMemSethvargo(b *testing.B) {
	st, err := memorystore.New(&memorystore.Config{Tokens: 1000, Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(context.Background())
	keys := memKeys()
	ctx := context.Background()
	k := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, _, err := st.Take(ctx, keys[k]); err != nil {
			b.Fatal(err)
		}
		if k++; k == len(keys) {
			k = 0
		}
	}
}
