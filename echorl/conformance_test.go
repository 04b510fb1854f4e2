package echorl_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit/echorl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// adapter builds Echo servers for the HTTP conformance suite.
type adapter struct{}

func (adapter) Native(r keyfuncs.Request) (string, bool) {
	if c := echorl.Context(r); c != nil {
		return c.Request().Header.Get(httpsuite.NativeHeader), true
	}
	return "", false
}

func (adapter) Handler(t testing.TB, s httpsuite.Setup) http.Handler {
	e := echo.New()
	if s.Identify {
		e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				if u := c.Request().Header.Get(httpsuite.UserHeader); u != "" {
					c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), httpsuite.UserKey, u)))
				}
				return next(c)
			}
		})
	}
	if s.Global != nil {
		e.Use(echorl.Middleware(s.Global))
	}
	ok := func(c echo.Context) error { return c.String(http.StatusOK, httpsuite.OKBody) }
	for _, rt := range httpsuite.Routes {
		var mws []echo.MiddlewareFunc
		if rt.Method == http.MethodPost && rt.Path == "/login" && len(s.RoutePolicies) > 0 {
			mws = append(mws, echorl.Route(s.RouteBase, s.RoutePolicies...))
		}
		h := ok
		if rt.Path == httpsuite.WorkPath {
			h = func(c echo.Context) error {
				status, body, asError := httpsuite.Work(c.Request().Context(), c.Request().Header.Get)
				if asError {
					return echo.NewHTTPError(status)
				}
				return c.String(status, body)
			}
		}
		e.Add(rt.Method, rt.Path, h, mws...)
		if rt.Method == http.MethodGet { // Echo serves HEAD only where it is registered
			e.Add(http.MethodHead, rt.Path, ok, mws...)
		}
	}
	return e
}

func TestConformance(t *testing.T) { httpsuite.Run(t, adapter{}) }

// TestE2E serves the app on a real loopback server and checks that a
// retrying client honouring Retry-After gets through (httpsuite.E2E).
func TestE2E(t *testing.T) { httpsuite.RunE2E(t, adapter{}) }
