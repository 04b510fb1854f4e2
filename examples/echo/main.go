// Command echo is an Echo server rate-limited with package echorl:
//
//	go run ./examples/echo [-addr 127.0.0.1:8080] [-redis redis://127.0.0.1:6379/0]
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

	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/echorl"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampleenv"
)

func main() { exampleenv.Main("echo", exampleenv.HTTP(newApp)) }

// newApp builds the Echo server and its rate limits on limiter.
func newApp(limiter *core.Limiter, opts ...ratelimit.Option) (http.Handler, error) {
	m, err := ratelimit.New(exampleenv.Limits(limiter, opts...)...)
	if err != nil {
		return nil, err
	}
	e := echo.New()
	e.Use(echorl.Middleware(m))
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "hello\n") })
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok\n") })
	e.GET("/search", func(c echo.Context) error {
		return c.String(http.StatusOK, fmt.Sprintf("results for %q\n", c.QueryParam("q")))
	})
	// A stricter policy on this route only, on top of the global one.
	e.POST("/login", func(c echo.Context) error { return c.String(http.StatusOK, "welcome\n") },
		echorl.Route(m, core.MustParsePolicy("5/15m;algorithm=fixed_window;name=login")))
	return e, nil
}
