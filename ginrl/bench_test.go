package ginrl_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit/ginrl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

// benches serve GET / with 204 from a Gin engine (see httpsuite.Benches).
var benches = httpsuite.Benches[gin.HandlerFunc]{New: ginrl.New, Engine: func(mws ...gin.HandlerFunc) http.Handler {
	r := gin.New()
	r.Use(mws...)
	r.GET("/", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	return r
}}

func BenchmarkBare(b *testing.B)          { benches.Bare(b) }
func BenchmarkAllow(b *testing.B)         { benches.Allow(b) }
func BenchmarkAllowRemoteIP(b *testing.B) { benches.AllowRemoteIP(b) }
func BenchmarkDeny(b *testing.B)          { benches.Deny(b) }
func BenchmarkBareParallel(b *testing.B)  { benches.BareParallel(b) }
func BenchmarkAllowParallel(b *testing.B) { benches.AllowParallel(b) }
