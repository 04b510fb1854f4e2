package echorl_test

import (
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/echorl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

// TestConstructors: New leaks no goroutine and refuses patterns in
// net/http's syntax.
func TestConstructors(t *testing.T) {
	httpsuite.RunConstructors(t, func(opts ...ratelimit.Option) (any, error) { return echorl.New(opts...) }, httpsuite.Constructors{
		Route:      func(m *ratelimit.Middleware, ps ...core.Policy) any { return echorl.Route(m, ps...) },
		Middleware: func(m *ratelimit.Middleware) any { return echorl.Middleware(m) },
		CheckServed: func(m *ratelimit.Middleware) error {
			e := echo.New()
			e.POST("/login", func(echo.Context) error { return nil })
			return echorl.CheckPatterns(m, e.Routes()...)
		},
	})
}
