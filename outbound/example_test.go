package outbound_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/outbound"
)

// A client that sends a partner API at most 2 requests an hour; with a
// shared store (Redis) the limit holds across every instance.
func Example() {
	partner := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer partner.Close()

	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	transport, err := outbound.New(core.NewLimiter(store), core.MustParsePolicy("2/1h;name=partner"))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: transport}

	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", partner.URL, nil)
		res, err := client.Do(req)
		if err != nil {
			fmt.Println("not sent:", errors.Is(err, context.DeadlineExceeded))
		} else {
			fmt.Println(res.StatusCode)
			res.Body.Close()
		}
		cancel()
	}
	// Output:
	// 200
	// 200
	// not sent: true
}
