// Command stdhttp is a net/http server rate-limited with package stdhttp:
//
//	go run ./examples/stdhttp [-addr 127.0.0.1:8080] [-redis redis://127.0.0.1:6379/0]
//		[-redis-budget 50ms] [-on-redis-failure fallback|open|closed] [-metrics-addr 127.0.0.1:9090]
//
// Requests are keyed by the client IP. GET /search is limited to 10 per
// second and 1000 per hour, checked together; GET /healthz is not limited;
// every other request to 100 per minute, and POST /login also to 5 per 15
// minutes. State lives in memory unless -redis names a Redis to share it
// between instances. Redis is wired as the README advises
// (exampleenv.OpenLimiter): a 50 ms latency budget, go-redis
// set up with resilient.RedisOptions, and a failure mode chosen by flag, so
// that a hung or stopped Redis costs a request at most the budget.
package main

import (
	"fmt"
	"net/http"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampleenv"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

func main() { exampleenv.Main("stdhttp", exampleenv.HTTP(newApp)) }

// newApp builds the ServeMux, wrapped in the rate limiter, on limiter.
func newApp(limiter *core.Limiter, opts ...ratelimit.Option) (http.Handler, error) {
	m, err := ratelimit.New(exampleenv.Limits(limiter, opts...)...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") })
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "results for %q\n", r.URL.Query().Get("q"))
	})
	// A stricter policy on this route only, on top of the global one.
	mux.Handle("POST /login", stdhttp.Route(m, core.MustParsePolicy("5/15m;algorithm=fixed_window;name=login"))(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "welcome") })))
	// Wrapping the mux itself lets the route table see its patterns.
	return stdhttp.Middleware(m)(mux), nil
}
