// Command gin is a Gin server rate-limited with package ginrl:
//
//	go run ./examples/gin [-addr 127.0.0.1:8080] [-redis redis://127.0.0.1:6379/0]
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
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampleenv"
	"github.com/ratelimit-go/ratelimit/ginrl"
)

func main() { exampleenv.Main("gin", exampleenv.HTTP(newApp)) }

// newApp builds the Gin engine and its rate limits on limiter.
func newApp(limiter *core.Limiter, opts ...ratelimit.Option) (http.Handler, error) {
	m, err := ratelimit.New(exampleenv.Limits(limiter, opts...)...)
	if err != nil {
		return nil, err
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery(), ginrl.Middleware(m))
	r.GET("/", func(c *gin.Context) { c.String(http.StatusOK, "hello\n") })
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok\n") })
	r.GET("/search", func(c *gin.Context) { c.String(http.StatusOK, "results for %q\n", c.Query("q")) })
	// A stricter policy on this route only, on top of the global one.
	r.POST("/login", ginrl.Route(m, core.MustParsePolicy("5/15m;algorithm=fixed_window;name=login")),
		func(c *gin.Context) { c.String(http.StatusOK, "welcome\n") })
	return r, nil
}
