package fiberrl_test

import (
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/fiberrl"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// benchApp serves GET / with 204, behind mws.
func benchApp(mws ...fiber.Handler) fasthttp.RequestHandler {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	for _, mw := range mws {
		app.Use(mw)
	}
	app.Get("/", noContent)
	return app.Handler()
}

// allowAll is middleware over the memory store with the default headers
// and a policy far above b.N, so that every request is admitted.
func allowAll(b *testing.B, kf keyfuncs.KeyFunc) fiber.Handler {
	mw, err := fiberrl.New(httpsuite.AllowOptions(kf)...)
	if err != nil {
		b.Fatal(err)
	}
	return mw
}

// newCtx returns a request context for GET / from 192.0.2.1:1234, as the
// server would hand one to the app's handler.
func newCtx() *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod("GET")
	req.SetRequestURI("/")
	fctx := new(fasthttp.RequestCtx)
	fctx.Init(&req, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}, nil)
	return fctx
}

func bench(b *testing.B, h fasthttp.RequestHandler) { benchTarget(b, h, "/") }

func benchParallel(b *testing.B, h fasthttp.RequestHandler) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		fctx := newCtx()
		for pb.Next() {
			fctx.Response.Reset()
			h(fctx)
			if code := fctx.Response.StatusCode(); code != http.StatusNoContent {
				b.Errorf("status %d", code)
				return
			}
		}
	})
}

// BenchmarkDeny is a denied request as a flood of limited clients sends it:
// 1,000 client addresses round robin, keyed by the peer address, each past
// its limit before the timer starts (as httpsuite.BenchDeny does for the
// net/http adapters); compare BenchmarkAllowRemoteIP.
func BenchmarkDeny(b *testing.B) {
	mw, err := fiberrl.New(httpsuite.DenyOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	h := benchApp(mw)
	ctxs := make([]*fasthttp.RequestCtx, httpsuite.DenyClients)
	for i := range ctxs {
		var req fasthttp.Request
		req.Header.SetMethod("GET")
		req.SetRequestURI("/")
		ctxs[i] = new(fasthttp.RequestCtx)
		ctxs[i].Init(&req, &net.TCPAddr{IP: net.IPv4(10, 0, byte(i/250), byte(i%250)), Port: 1234}, nil)
	}
	for range 101 {
		for _, c := range ctxs {
			c.Response.Reset()
			h(c)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := ctxs[i]
		c.Response.Reset()
		h(c)
		if code := c.Response.StatusCode(); code != http.StatusTooManyRequests {
			b.Fatalf("status %d, want 429", code)
		}
		if i++; i == len(ctxs) {
			i = 0
		}
	}
}

// BenchmarkBare is the baseline: the app and its handler alone.
func BenchmarkBare(b *testing.B) { bench(b, benchApp()) }

// BenchmarkAllow is the allow path with the memory store and the default
// headers, keyed by a constant; subtract BenchmarkBare for what the
// middleware adds.
func BenchmarkAllow(b *testing.B) { bench(b, benchApp(allowAll(b, keyfuncs.Constant("client")))) }

// BenchmarkAllowRemoteIP is BenchmarkAllow keyed by the peer address,
// which Fiber gives as a net.Addr: formatting it allocates.
func BenchmarkAllowRemoteIP(b *testing.B) { bench(b, benchApp(allowAll(b, keyfuncs.RemoteIP))) }

// BenchmarkBareParallel is BenchmarkBare on every P.
func BenchmarkBareParallel(b *testing.B) { benchParallel(b, benchApp()) }

// BenchmarkAllowParallel is BenchmarkAllow on every P, all on one key.
func BenchmarkAllowParallel(b *testing.B) {
	benchParallel(b, benchApp(allowAll(b, keyfuncs.Constant("client"))))
}

// routedApp serves 20 static routes and one with a parameter, all 204,
// behind Use middleware with a route table, so that every request's
// pattern is resolved before the check.
func routedApp(b *testing.B) fasthttp.RequestHandler {
	mw, err := fiberrl.New(httpsuite.AllowOptions(keyfuncs.Constant("client"), ratelimit.WithRoute("POST", "/login", core.MustParsePolicy("5/1m;name=login")))...)
	if err != nil {
		b.Fatal(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(mw)
	for i := range 20 {
		app.Get(fmt.Sprintf("/static/%02d", i), noContent)
	}
	app.Get("/users/:id", noContent)
	return app.Handler()
}

// benchTarget serves GET target from newCtx's client with h, failing
// unless the answer is 204.
func benchTarget(b *testing.B, h fasthttp.RequestHandler, target string) {
	fctx := newCtx()
	fctx.Request.SetRequestURI(target)
	b.ReportAllocs()
	for b.Loop() {
		fctx.Response.Reset()
		h(fctx)
		if code := fctx.Response.StatusCode(); code != http.StatusNoContent {
			b.Fatalf("status %d", code)
		}
	}
}

// BenchmarkAllowResolveStatic is BenchmarkAllow with the pattern of the
// last of 21 routes resolved by Use middleware: 20 string comparisons.
func BenchmarkAllowResolveStatic(b *testing.B) { benchTarget(b, routedApp(b), "/static/19") }

// BenchmarkAllowResolveParam is BenchmarkAllow with the pattern of a route
// with a parameter, registered after 20 static ones, resolved by Use
// middleware segment by segment.
func BenchmarkAllowResolveParam(b *testing.B) { benchTarget(b, routedApp(b), "/users/7") }
