package fiberrl_test

import (
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/fiberrl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

// TestConstructors: New leaks no goroutine and refuses patterns in
// net/http's syntax.
func TestConstructors(t *testing.T) {
	httpsuite.RunConstructors(t, func(opts ...ratelimit.Option) (any, error) { return fiberrl.New(opts...) }, httpsuite.Constructors{
		Route:      func(m *ratelimit.Middleware, ps ...core.Policy) any { return fiberrl.Route(m, ps...) },
		Middleware: func(m *ratelimit.Middleware) any { return fiberrl.Middleware(m) },
		CheckServed: func(m *ratelimit.Middleware) error {
			app := fiber.New()
			app.Post("/login", func(*fiber.Ctx) error { return nil })
			return fiberrl.CheckPatterns(m, app.GetRoutes()...)
		},
	})
}
