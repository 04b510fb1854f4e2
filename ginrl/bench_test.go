package ginrl_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit/ginrl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// engine serves GET / with 204, behind mws.
func engine(mws ...gin.HandlerFunc) *gin.Engine {
	r := gin.New()
	r.Use(mws...)
	r.GET("/", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	return r
}

// allowAll is middleware over the memory store with the default headers
// and a policy far above b.N, so that every request is admitted.
func allowAll(b *testing.B, kf keyfuncs.KeyFunc) gin.HandlerFunc {
	mw, err := ginrl.New(httpsuite.AllowOptions(kf)...)
	if err != nil {
		b.Fatal(err)
	}
	return mw
}

// BenchmarkBare is the baseline: the engine and its handler alone.
func BenchmarkBare(b *testing.B) { httpsuite.Bench(b, engine()) }

// BenchmarkAllow is the allow path with the memory store and the default
// headers, keyed by a constant; subtract BenchmarkBare for what the
// middleware adds.
func BenchmarkAllow(b *testing.B) {
	httpsuite.Bench(b, engine(allowAll(b, keyfuncs.Constant("client"))))
}

// BenchmarkAllowRemoteIP is BenchmarkAllow keyed by the peer address.
func BenchmarkAllowRemoteIP(b *testing.B) { httpsuite.Bench(b, engine(allowAll(b, keyfuncs.RemoteIP))) }

// BenchmarkDeny is a denied request: 1,000 client addresses round robin,
// each past its limit (see httpsuite.BenchDeny); compare BenchmarkAllowRemoteIP.
func BenchmarkDeny(b *testing.B) {
	mw, err := ginrl.New(httpsuite.DenyOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	httpsuite.BenchDeny(b, engine(mw))
}

// BenchmarkBareParallel is BenchmarkBare on every P.
func BenchmarkBareParallel(b *testing.B) { httpsuite.BenchParallel(b, engine()) }

// BenchmarkAllowParallel is BenchmarkAllow on every P, all on one key.
func BenchmarkAllowParallel(b *testing.B) {
	httpsuite.BenchParallel(b, engine(allowAll(b, keyfuncs.Constant("client"))))
}
