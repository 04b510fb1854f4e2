package peers

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	fiberlimiter "github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/valyala/fasthttp"
	"golang.org/x/time/rate"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/echorl"
	"github.com/ratelimit-go/ratelimit/fiberrl"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// The adapters against the limiter their framework ships, as its users
// pick it first: 1,000 client addresses, 100 per minute (a limit never
// reached for the allow rows), the app's handler driven directly.

// ourOptions are the adapters' options: the memory store, the peer
// address as the key, the default headers, policy as given.
func ourOptions(b testing.TB, p core.Policy) []ratelimit.Option {
	store, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	return []ratelimit.Option{ratelimit.WithLimiter(core.NewLimiter(store)), ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithPolicy(p)}
}

// fiberApp serves GET / with 204 behind mw.
func fiberApp(mw fiber.Handler) fasthttp.RequestHandler {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(mw)
	app.Get("/", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
	return app.Handler()
}

func fiberOurs(b testing.TB, limit int, alg core.Algorithm) fasthttp.RequestHandler {
	mw, err := fiberrl.New(ourOptions(b, core.Policy{Name: "api", Limit: limit, Window: time.Minute, Algorithm: alg})...)
	if err != nil {
		b.Fatal(err)
	}
	return fiberApp(mw)
}

func fiberTheirs(limit int, sliding bool) fasthttp.RequestHandler {
	cfg := fiberlimiter.Config{Max: limit, Expiration: time.Minute}
	if sliding {
		cfg.LimiterMiddleware = fiberlimiter.SlidingWindow{}
	}
	return fiberApp(fiberlimiter.New(cfg))
}

// runFiber serves requests from the 1,000 addresses round robin, after warm
// rounds, and fails unless 99% of the timed answers have status want.
func runFiber(b *testing.B, h fasthttp.RequestHandler, warm, want int) {
	addrs := make([]net.Addr, 1000)
	for i := range addrs {
		addrs[i] = &net.TCPAddr{IP: net.IPv4(10, 0, byte(i/250), byte(i%250)), Port: 1234}
	}
	var req fasthttp.Request
	req.Header.SetMethod("GET")
	req.SetRequestURI("/")
	ctx := new(fasthttp.RequestCtx)
	loop(b, len(addrs), warm, want, func(i int) int {
		ctx.Init(&req, addrs[i], nil)
		h(ctx)
		return ctx.Response.StatusCode()
	})
}

func BenchmarkFiberOursAllow(b *testing.B) {
	runFiber(b, fiberOurs(b, 1_000_000_000, core.FixedWindow), 1, http.StatusNoContent)
}
func BenchmarkFiberTheirsAllow(b *testing.B) {
	runFiber(b, fiberTheirs(1_000_000_000, false), 1, http.StatusNoContent)
}
func BenchmarkFiberOursDeny(b *testing.B) {
	runFiber(b, fiberOurs(b, 100, core.FixedWindow), 101, http.StatusTooManyRequests)
}
func BenchmarkFiberTheirsDeny(b *testing.B) {
	runFiber(b, fiberTheirs(100, false), 101, http.StatusTooManyRequests)
}
func BenchmarkFiberOursSlidingDeny(b *testing.B) {
	runFiber(b, fiberOurs(b, 100, core.SlidingWindow), 101, http.StatusTooManyRequests)
}
func BenchmarkFiberTheirsSlidingDeny(b *testing.B) {
	runFiber(b, fiberTheirs(100, true), 101, http.StatusTooManyRequests)
}

// echoApp serves GET / with 204 behind mw.
func echoApp(mw echo.MiddlewareFunc) http.Handler {
	e := echo.New()
	e.Use(mw)
	e.GET("/", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	return e
}

func echoOurs(b testing.TB, limit int) http.Handler {
	mw, err := echorl.New(ourOptions(b, core.Policy{Name: "api", Limit: limit, Window: time.Minute, Algorithm: core.TokenBucket})...)
	if err != nil {
		b.Fatal(err)
	}
	return echoApp(mw)
}

// echoTheirs is Echo's RateLimiter over its memory store (x/time/rate),
// keyed by the peer address, refilling limit per minute with a burst of
// limit.
func echoTheirs(limit int) http.Handler {
	store := echomw.NewRateLimiterMemoryStoreWithConfig(echomw.RateLimiterMemoryStoreConfig{
		Rate: rate.Limit(float64(limit) / 60), Burst: limit, ExpiresIn: 3 * time.Minute})
	return echoApp(echomw.RateLimiterWithConfig(echomw.RateLimiterConfig{
		Store: store,
		IdentifierExtractor: func(c echo.Context) (string, error) {
			h, _, err := net.SplitHostPort(c.Request().RemoteAddr)
			return h, err
		},
	}))
}

func BenchmarkEchoOursAllow(b *testing.B) {
	run(b, echoOurs(b, 1_000_000), 1, http.StatusNoContent)
}
func BenchmarkEchoTheirsAllow(b *testing.B) {
	run(b, echoTheirs(1_000_000), 1, http.StatusNoContent)
}
func BenchmarkEchoOursDeny(b *testing.B) {
	run(b, echoOurs(b, 100), 101, http.StatusTooManyRequests)
}
func BenchmarkEchoTheirsDeny(b *testing.B) { run(b, echoTheirs(100), 101, http.StatusTooManyRequests) }

// fiberFloorDeny writes our 429 (its five header fields and body) as
// constants, with no key and no limiter: what the fuller answer costs
// Fiber by itself.
func fiberFloorDeny(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set("Ratelimit-Policy", `"default";q=100;w=60`)
	h.Set("Ratelimit", `"default";r=0;t=60`)
	h.Set("Retry-After", "60")
	h.Set("X-Content-Type-Options", "nosniff")
	h.SetContentType("application/problem+json")
	c.Status(http.StatusTooManyRequests)
	return c.Send(body429)
}

func BenchmarkFiberFloorDeny(b *testing.B) {
	runFiber(b, fiberApp(fiberFloorDeny), 0, http.StatusTooManyRequests)
}

// serverWriter is a ResponseWriter as a server keeps one: its header map
// reused and cleared between requests, nothing copied. The recorder of run
// clones the header map at WriteHeader, which costs more than the fields
// themselves, and more than Echo's limiter does on an admitted request.
type serverWriter struct {
	h    http.Header
	code int
}

func (w *serverWriter) Header() http.Header         { return w.h }
func (w *serverWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *serverWriter) WriteHeader(code int)        { w.code = code }

// runServer is run into a serverWriter.
func runServer(b *testing.B, h http.Handler, warm, want int) {
	reqs := requests()
	w := &serverWriter{h: http.Header{}}
	loop(b, len(reqs), warm, want, func(i int) int {
		clear(w.h)
		w.code = http.StatusOK
		h.ServeHTTP(w, reqs[i])
		return w.code
	})
}

func BenchmarkEchoOursAllowServer(b *testing.B) {
	runServer(b, echoOurs(b, 1_000_000), 1, http.StatusNoContent)
}
func BenchmarkEchoTheirsAllowServer(b *testing.B) {
	runServer(b, echoTheirs(1_000_000), 1, http.StatusNoContent)
}
func BenchmarkEchoOursDenyServer(b *testing.B) {
	runServer(b, echoOurs(b, 100), 101, http.StatusTooManyRequests)
}
func BenchmarkEchoTheirsDenyServer(b *testing.B) {
	runServer(b, echoTheirs(100), 101, http.StatusTooManyRequests)
}

// echoFloor writes the two header fields of our admitted response as
// constants, with no key and no limiter.
func echoFloor(next echo.HandlerFunc) echo.HandlerFunc {
	policy, left := []string{`"default";q=1000000;w=60`}, []string{`"default";r=999999;t=1`}
	return func(c echo.Context) error {
		h := c.Response().Header()
		h["Ratelimit-Policy"], h["Ratelimit"] = policy, left
		return next(c)
	}
}

func BenchmarkEchoFloorAllowServer(b *testing.B) {
	runServer(b, echoApp(echoFloor), 0, http.StatusNoContent)
}
