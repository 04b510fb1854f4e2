package ginrl_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/ginrl"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// A global policy per client IP on the engine, and a stricter one on
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
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(ginrl.Middleware(m))
	r.GET("/", func(c *gin.Context) { c.String(http.StatusOK, "hello") })
	r.POST("/login", ginrl.Route(m, core.MustParsePolicy("1/5m;algorithm=sliding_log;name=login")),
		func(c *gin.Context) { c.String(http.StatusOK, "welcome") })

	for _, req := range []*http.Request{
		httptest.NewRequest("GET", "/", nil),
		httptest.NewRequest("POST", "/login", nil),
		httptest.NewRequest("POST", "/login", nil),
	} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		fmt.Println(strings.TrimSpace(fmt.Sprintln(req.Method, req.URL.Path, rec.Code, rec.Header().Get("RateLimit"), rec.Header().Get("Retry-After"))))
	}
	// Output:
	// GET / 200 "api";r=99;t=1
	// POST /login 200 "api";r=98;t=2, "login";r=0;t=300
	// POST /login 429 "api";r=98;t=2, "login";r=0;t=300 300
}

// Per authenticated user, with the policy of the user's plan: the
// authentication middleware stores the user and the plan with Context.Set,
// the key function and the plan function read them back (ginrl.Context
// reaches the *gin.Context itself where that is needed).
func Example_perUser() {
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.ContextValue("user")), // 401 without one
		ratelimit.WithPlans(func(r keyfuncs.Request) (string, error) {
			return ginrl.Context(r).GetString("plan"), nil
		}, map[string][]core.Policy{
			"free": {core.MustParsePolicy("100/1h;name=free")},
			"pro":  {core.MustParsePolicy("10000/1h;name=pro")},
		}),
		ratelimit.WithDenyUnknownPlans(), // 403 for a user with no known plan
	)
	if err != nil {
		panic(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(func(c *gin.Context) { // a stand-in for real authentication
		if user := c.GetHeader("X-User"); user != "" {
			plan := "free"
			if user == "alice" {
				plan = "pro"
			}
			c.Set("user", user)
			c.Set("plan", plan)
		}
	})
	r.Use(ginrl.Middleware(m))
	r.GET("/", func(c *gin.Context) { c.String(http.StatusOK, "hello") })

	for _, user := range []string{"alice", "bob", ""} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-User", user)
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		fmt.Println(strings.TrimSpace(fmt.Sprintln(rec.Code, rec.Header().Get("RateLimit"))))
	}
	// Output:
	// 200 "pro";r=9999;t=1
	// 200 "free";r=99;t=36
	// 401
}
