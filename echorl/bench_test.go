package echorl_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ratelimit-go/ratelimit/echorl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

// benches serve GET / with 204 from an Echo server (see httpsuite.Benches).
var benches = httpsuite.Benches[echo.MiddlewareFunc]{New: echorl.New, Engine: func(mws ...echo.MiddlewareFunc) http.Handler {
	e := echo.New()
	e.Use(mws...)
	e.GET("/", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	return e
}}

func BenchmarkBare(b *testing.B)          { benches.Bare(b) }
func BenchmarkAllow(b *testing.B)         { benches.Allow(b) }
func BenchmarkAllowRemoteIP(b *testing.B) { benches.AllowRemoteIP(b) }
func BenchmarkDeny(b *testing.B)          { benches.Deny(b) }
func BenchmarkBareParallel(b *testing.B)  { benches.BareParallel(b) }
func BenchmarkAllowParallel(b *testing.B) { benches.AllowParallel(b) }
