package echorl_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/echorl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

func noContent(c echo.Context) error { return c.NoContent(http.StatusNoContent) }

// A denied request reaches neither later middleware nor the handler, and
// Echo's error handler is not involved: the 429 is complete.
func TestDenialStopsTheChain(t *testing.T) {
	httpsuite.DenialStopsTheChain(t, echorl.New, func(mw echo.MiddlewareFunc, c *httpsuite.Chain) http.Handler {
		e := echo.New()
		e.HTTPErrorHandler = func(error, echo.Context) { c.Errors++ }
		e.Use(mw, func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(ctx echo.Context) error { c.Later++; return next(ctx) }
		})
		e.GET("/", func(ctx echo.Context) error { c.Handled++; return noContent(ctx) })
		return e
	})
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
