package fiberrl_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/fiberrl"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// A global policy per client IP on the app, and a stricter one on
// POST /login in the route's handler list: a sliding log, exact in any five
// minutes.
func Example() {
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
	)
	if err != nil {
		panic(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(fiberrl.Middleware(m))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("hello") })
	app.Post("/login", fiberrl.Route(m, core.MustParsePolicy("1/5m;algorithm=sliding_log;name=login")),
		func(c *fiber.Ctx) error { return c.SendString("welcome") })

	for _, target := range []struct{ method, path string }{{"GET", "/"}, {"POST", "/login"}, {"POST", "/login"}} {
		res, err := app.Test(httptest.NewRequest(target.method, target.path, nil), -1)
		if err != nil {
			panic(err)
		}
		res.Body.Close()
		fmt.Println(strings.TrimSpace(fmt.Sprintln(target.method, target.path, res.StatusCode, res.Header.Get("RateLimit"), res.Header.Get("Retry-After"))))
	}
	// Output:
	// GET / 200 "api";r=99;t=1
	// POST /login 200 "api";r=98;t=2, "login";r=0;t=300
	// POST /login 429 "api";r=98;t=2, "login";r=0;t=300 300
}

// Per authenticated user: the authentication middleware stores the user
// with Ctx.Locals, and keyfuncs.ContextValue reads it back (fiberrl.Ctx
// reaches the *fiber.Ctx itself where that is needed).
func Example_perUser() {
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.ContextValue("user")), // 401 without one
		ratelimit.WithPolicy(core.MustParsePolicy("1/1m;name=per-user")),
	)
	if err != nil {
		panic(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(func(c *fiber.Ctx) error { // a stand-in for real authentication
		if user := c.Get("X-User"); user != "" {
			c.Locals("user", user)
		}
		return c.Next()
	})
	app.Use(fiberrl.Middleware(m))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("hello") })

	for _, user := range []string{"alice", "alice", "bob", ""} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-User", user)
		res, err := app.Test(req, -1)
		if err != nil {
			panic(err)
		}
		res.Body.Close()
		fmt.Println(strings.TrimSpace(fmt.Sprintln(user, res.StatusCode, res.Header.Get("RateLimit"))))
	}
	// Output:
	// alice 200 "per-user";r=0;t=60
	// alice 429 "per-user";r=0;t=60
	// bob 200 "per-user";r=0;t=60
	// 401
}
