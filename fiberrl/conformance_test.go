package fiberrl_test

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/ratelimit-go/ratelimit/fiberrl"
	"github.com/ratelimit-go/ratelimit/internal/fibertest"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// adapter builds Fiber apps for the HTTP conformance suite.
type adapter struct{}

func (adapter) Native(r keyfuncs.Request) (string, bool) {
	if c := fiberrl.Ctx(r); c != nil {
		return c.Get(httpsuite.NativeHeader), true
	}
	return "", false
}

func (adapter) Handler(t testing.TB, s httpsuite.Setup) http.Handler {
	return fibertest.Handler(newApp(s))
}

// newApp builds the suite's app: Setup.Global with App.Use, the per-route
// middleware in POST /login's handler list.
func newApp(s httpsuite.Setup) *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	if s.Identify {
		app.Use(func(c *fiber.Ctx) error {
			if u := c.Get(httpsuite.UserHeader); u != "" {
				c.Locals(httpsuite.UserKey, u)
			}
			return c.Next()
		})
	}
	if s.Global != nil {
		app.Use(fiberrl.Middleware(s.Global))
	}
	ok := func(c *fiber.Ctx) error { return c.SendString(httpsuite.OKBody) }
	for _, rt := range httpsuite.Routes {
		handlers := []fiber.Handler{ok}
		if rt.Path == httpsuite.WorkPath {
			handlers[0] = func(c *fiber.Ctx) error {
				status, body, asError := httpsuite.Work(c.UserContext(), func(k string) string { return c.Get(k) })
				if asError {
					return fiber.NewError(status)
				}
				return c.Status(status).SendString(body)
			}
		}
		if rt.Method == http.MethodPost && rt.Path == "/login" && len(s.RoutePolicies) > 0 {
			handlers = []fiber.Handler{fiberrl.Route(s.RouteBase, s.RoutePolicies...), ok}
		}
		if rt.Method == http.MethodGet {
			app.Get(rt.Path, handlers...) // also registers HEAD, as users' apps do
		} else {
			app.Add(rt.Method, rt.Path, handlers...)
		}
	}
	return app
}

func TestConformance(t *testing.T) { httpsuite.Run(t, adapter{}) }
