package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// A Limiter over the memory store, driven by a manual clock.
func Example() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	lim := core.NewLimiter(store, core.WithClock(clock))
	perSecond := core.MustParsePolicy("2/s;name=api")

	for range 3 {
		d, _ := lim.Allow(context.Background(), "client-1", perSecond)
		fmt.Println(d.Allowed, d.Remaining, d.RetryAfter)
	}
	clock.Advance(500 * time.Millisecond)
	d, _ := lim.Allow(context.Background(), "client-1", perSecond)
	fmt.Println(d.Allowed, d.Remaining, d.RetryAfter)
	// Output:
	// true 1 0s
	// true 0 0s
	// false 0 500ms
	// true 0 0s
}

// A store that holds at most a fixed number of states refuses new keys when
// full, and keeps serving the keys it has.
func ExampleWithMaxKeys() {
	store, err := memstore.New(memstore.WithMaxKeys(1))
	if err != nil {
		panic(err)
	}
	lim := core.NewLimiter(store, core.WithClock(core.NewManualClock(time.Unix(0, 0))))
	p := core.MustParsePolicy("10/m")
	ctx := context.Background()

	_, err = lim.Allow(ctx, "first", p)
	fmt.Println(err)
	_, err = lim.Allow(ctx, "second", p)
	fmt.Println(err)
	d, err := lim.Allow(ctx, "first", p)
	fmt.Println(d.Remaining, err, store.Len())
	// Output:
	// <nil>
	// memstore: store is full
	// 8 <nil> 1
}
