package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// printResponse is the Response an adapter would implement over its
// framework; this one prints what the middleware writes.
type printResponse struct{}

func (printResponse) SetHeader(name, value string) { fmt.Printf("  %s: %s\n", name, value) }
func (printResponse) Write(status int, contentType string, body []byte) error {
	fmt.Printf("  -> %d %s\n", status, contentType)
	return nil
}

// How an adapter drives the middleware: it hands over a keyfuncs.Request
// and a Response, and calls the next handler only on Continue.
func ExampleMiddleware_Handle() {
	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	mw, err := ratelimit.New(
		ratelimit.WithLimiter(core.NewLimiter(store, core.WithClock(clock))),
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("2/1m;algorithm=fixed_window;name=api")),
	)
	if err != nil {
		panic(err)
	}
	req := keyfuncstest.New("203.0.113.9:4711")
	for i := 1; i <= 3; i++ {
		fmt.Println("request", i)
		if mw.Handle(context.Background(), req, printResponse{}) {
			fmt.Println("  -> next handler")
		}
	}
	// Output:
	// request 1
	//   Ratelimit-Policy: "api";q=2;w=60
	//   Ratelimit: "api";r=1;t=60
	//   -> next handler
	// request 2
	//   Ratelimit-Policy: "api";q=2;w=60
	//   Ratelimit: "api";r=0;t=60
	//   -> next handler
	// request 3
	//   Ratelimit-Policy: "api";q=2;w=60
	//   Ratelimit: "api";r=0;t=60
	//   Retry-After: 60
	//   -> 429 application/problem+json
}
