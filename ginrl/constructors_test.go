package ginrl_test

import (
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/ginrl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

// TestConstructors: New leaks no goroutine and refuses patterns in
// net/http's syntax.
func TestConstructors(t *testing.T) {
	httpsuite.RunConstructors(t, func(opts ...ratelimit.Option) (any, error) { return ginrl.New(opts...) }, httpsuite.Constructors{
		Route:      func(m *ratelimit.Middleware, ps ...core.Policy) any { return ginrl.Route(m, ps...) },
		Middleware: func(m *ratelimit.Middleware) any { return ginrl.Middleware(m) },
		CheckServed: func(m *ratelimit.Middleware) error {
			r := gin.New()
			r.POST("/login", func(*gin.Context) {})
			return ginrl.CheckPatterns(m, r.Routes()...)
		},
	})
}
