package exampleenv

import (
	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// Limits returns the options of the rate limits every example serves, on
// limiter, followed by opts (the metrics observer Run adds). Each example
// attaches one more policy itself, on POST /login, where its framework
// registers the route.
func Limits(limiter *core.Limiter, opts ...ratelimit.Option) []ratelimit.Option {
	return append([]ratelimit.Option{
		ratelimit.WithLimiter(limiter),
		// The client IP. Behind a proxy, use a keyfuncs.IPResolver with
		// WithTrustedProxies instead of RemoteIP. Not a header such as
		// X-API-Key before authentication has checked it: a client that
		// sends a new one with each request gets a new quota each time
		// (keyfuncs.ContextValue keys by the authenticated caller).
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
		// Two policies checked together: a request passes only if both
		// admit it, and a denial consumes neither.
		ratelimit.WithRoute("GET", "/search",
			core.MustParsePolicy("10/1s;name=burst"),
			core.MustParsePolicy("1000/1h;algorithm=fixed_window;name=hourly")),
		ratelimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/healthz" }),
	}, opts...)
}
