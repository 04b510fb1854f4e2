// Command fiber is a Fiber server rate-limited with package fiberrl:
//
//	go run ./examples/fiber [-addr 127.0.0.1:8080] [-redis redis://127.0.0.1:6379/0]
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
	"context"
	"fmt"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampleenv"
	"github.com/ratelimit-go/ratelimit/fiberrl"
)

func main() { exampleenv.Main("fiber", build) }

// build builds the app on limiter and serves it with Fiber's own server,
// shutting it down (5 s for requests in flight) when ctx is done.
func build(limiter *core.Limiter, opts ...ratelimit.Option) (exampleenv.Server, error) {
	app, err := newApp(limiter, opts...)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, ln net.Listener) error {
		served := make(chan error, 1)
		go func() { served <- app.Listener(ln) }()
		select {
		case err := <-served:
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := app.ShutdownWithContext(sctx); err != nil {
			return err
		}
		return <-served
	}, nil
}

// newApp builds the Fiber app and its rate limits on limiter.
func newApp(limiter *core.Limiter, opts ...ratelimit.Option) (*fiber.App, error) {
	m, err := ratelimit.New(exampleenv.Limits(limiter, opts...)...)
	if err != nil {
		return nil, err
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(fiberrl.Middleware(m))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("hello\n") })
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok\n") })
	app.Get("/search", func(c *fiber.Ctx) error { return c.SendString(fmt.Sprintf("results for %q\n", c.Query("q"))) })
	// A stricter policy on this route only, on top of the global one.
	app.Post("/login", fiberrl.Route(m, core.MustParsePolicy("5/15m;algorithm=fixed_window;name=login")),
		func(c *fiber.Ctx) error { return c.SendString("welcome\n") })
	return app, nil
}
