package echorl_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/echorl"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

func noContent(c echo.Context) error { return c.NoContent(http.StatusNoContent) }

// A denied request reaches neither later middleware nor the handler, and
// Echo's error handler is not involved: the 429 is complete.
func TestDenialStopsTheChain(t *testing.T) {
	t.Parallel()
	mw, err := echorl.New(ratelimit.WithLimiter(httpsuite.Limiter()), ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("1/1m;name=p")))
	if err != nil {
		t.Fatal(err)
	}
	var later, handled, errs int
	e := echo.New()
	e.HTTPErrorHandler = func(error, echo.Context) { errs++ }
	e.Use(mw, func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { later++; return next(c) }
	})
	e.GET("/", func(c echo.Context) error { handled++; return noContent(c) })
	if rec := httpsuite.Do(e, "GET", "/"); rec.Code != http.StatusNoContent {
		t.Fatalf("first: %d", rec.Code)
	}
	rec := httpsuite.Do(e, "GET", "/")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" || rec.Header().Get("Content-Type") != fields.ContentTypeProblem {
		t.Fatalf("second: %d %v", rec.Code, rec.Header())
	}
	if later != 1 || handled != 1 || errs != 0 {
		t.Fatalf("later middleware ran %d times, handler %d, error handler %d; want 1, 1, 0", later, handled, errs)
	}
}

// The request view reports Echo's pattern, parameters and all, and no
// pattern for a request that matched no route (httpsuite.RoutePatterns).
func TestRoutePatterns(t *testing.T) {
	httpsuite.RoutePatterns(t, "/files/*", func(m *ratelimit.Middleware) http.Handler {
		e := echo.New()
		e.Use(echorl.Middleware(m))
		e.GET("/users/:id", noContent)
		e.GET("/files/*", noContent)
		return e
	})
}

// TestConstructors: New leaks no goroutine and refuses patterns in
// net/http's syntax.
func TestConstructors(t *testing.T) {
	httpsuite.RunConstructors(t, httpsuite.Constructors[echo.MiddlewareFunc]{
		New: echorl.New, Route: echorl.Route, Middleware: echorl.Middleware,
		CheckServed: func(m *ratelimit.Middleware) error {
			e := echo.New()
			e.POST("/login", func(echo.Context) error { return nil })
			return echorl.CheckPatterns(m, e.Routes()...)
		},
	})
}
