package echorl_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/echorl"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// A global policy per client IP on the server, and a stricter one on
// POST /login attached where the route is registered: a sliding log, exact
// in any five minutes.
func Example() {
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
	)
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(echorl.Middleware(m))
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "hello") })
	e.POST("/login", func(c echo.Context) error { return c.String(http.StatusOK, "welcome") },
		echorl.Route(m, core.MustParsePolicy("1/5m;algorithm=sliding_log;name=login")))

	for _, req := range []*http.Request{
		httptest.NewRequest("GET", "/", nil),
		httptest.NewRequest("POST", "/login", nil),
		httptest.NewRequest("POST", "/login", nil),
	} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		fmt.Println(strings.TrimSpace(fmt.Sprintln(req.Method, req.URL.Path, rec.Code, rec.Header().Get("RateLimit"), rec.Header().Get("Retry-After"))))
	}
	// Output:
	// GET / 200 "api";r=99;t=1
	// POST /login 200 "api";r=98;t=2, "login";r=0;t=300
	// POST /login 429 "api";r=98;t=2, "login";r=0;t=300 300
}

// Per authenticated user: the authentication middleware stores the user
// with Context.Set, and keyfuncs.ContextValue reads it back (echorl.Context
// reaches the echo.Context itself where that is needed).
func Example_perUser() {
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.ContextValue("user")), // 401 without one
		ratelimit.WithPolicy(core.MustParsePolicy("1/1m;name=per-user")),
	)
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc { // a stand-in for real authentication
		return func(c echo.Context) error {
			if user := c.Request().Header.Get("X-User"); user != "" {
				c.Set("user", user)
			}
			return next(c)
		}
	})
	e.Use(echorl.Middleware(m))
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "hello") })

	for _, user := range []string{"alice", "alice", "bob", ""} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-User", user)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		fmt.Println(strings.TrimSpace(fmt.Sprintln(user, rec.Code, rec.Header().Get("RateLimit"))))
	}
	// Output:
	// alice 200 "per-user";r=0;t=60
	// alice 429 "per-user";r=0;t=60
	// bob 200 "per-user";r=0;t=60
	// 401
}
