package lease_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/lease"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// A hot key's checks served from leases: here over the memory store and a
// manual clock, 2,000 checks a second on one key, under a policy that allows
// 100,000 a second. Use the Redis store in production, where a lease saves
// a round trip per request.
func Example() {
	store, err := memstore.New() // redisstore.New(client) in production
	if err != nil {
		log.Fatal(err)
	}
	api := core.MustParsePolicy("100000/1s;name=api")
	leased, err := lease.New(store, []core.Policy{api}) // the policies that may be leased
	if err != nil {
		log.Fatal(err) // a leaky bucket or a concurrency limit is refused: core.ErrUnsupported
	}
	clock := core.NewManualClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	limiter := core.NewLimiter(leased, core.WithClock(clock))

	for range 2000 {
		if _, err := limiter.Allow(context.Background(), "user:42", api); err != nil {
			log.Fatal(err)
		}
		clock.Advance(500 * time.Microsecond)
	}
	st := leased.Stats() // also exported by metrics.Collector.Watch
	fmt.Printf("%d checks: %d leases, %d admitted locally\n", 2000, st.Leases, st.LocalAdmits)
	// Output: 2000 checks: 11 leases, 1890 admitted locally
}
