package ginrl_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit/ginrl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

func init() { gin.SetMode(gin.ReleaseMode) }

// adapter builds Gin engines for the HTTP conformance suite.
type adapter struct{}

func (adapter) Native(r keyfuncs.Request) (string, bool) {
	if c := ginrl.Context(r); c != nil {
		return c.GetHeader(httpsuite.NativeHeader), true
	}
	return "", false
}

func (adapter) Handler(t testing.TB, s httpsuite.Setup) http.Handler {
	r := gin.New()
	if s.Identify {
		r.Use(func(c *gin.Context) {
			if u := c.GetHeader(httpsuite.UserHeader); u != "" {
				c.Set(httpsuite.UserKey, u)
			}
		})
	}
	if s.Global != nil {
		r.Use(ginrl.Middleware(s.Global))
	}
	ok := func(c *gin.Context) { c.String(http.StatusOK, httpsuite.OKBody) }
	for _, rt := range httpsuite.Routes {
		handlers := []gin.HandlerFunc{ok}
		if rt.Path == httpsuite.WorkPath {
			handlers[0] = func(c *gin.Context) {
				status, body, asError := httpsuite.Work(c.Request.Context(), c.GetHeader)
				if asError {
					c.AbortWithStatus(status)
					return
				}
				c.String(status, body)
			}
		}
		if rt.Method == http.MethodPost && rt.Path == "/login" && len(s.RoutePolicies) > 0 {
			handlers = []gin.HandlerFunc{ginrl.Route(s.RouteBase, s.RoutePolicies...), ok}
		}
		r.Handle(rt.Method, rt.Path, handlers...)
		if rt.Method == http.MethodGet { // Gin serves HEAD only where it is registered
			r.Handle(http.MethodHead, rt.Path, handlers...)
		}
	}
	return r
}

func TestConformance(t *testing.T) { httpsuite.Run(t, adapter{}) }

// TestE2E serves the app on a real loopback server and checks that a
// retrying client honouring Retry-After gets through (httpsuite.E2E).
func TestE2E(t *testing.T) { httpsuite.RunE2E(t, adapter{}) }
