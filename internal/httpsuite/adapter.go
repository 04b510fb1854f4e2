package httpsuite

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// Route is one route every app built by an Adapter serves.
type Route struct {
	Method string
	Path   string // static: the same pattern on every framework
}

// Routes are the routes an Adapter registers. Adapters whose router does not
// serve HEAD with a GET route's handler (Gin, Echo) also register HEAD for
// every GET route, as their users do. Each handler answers 200
// with the body OKBody and nothing else. POST /login is the route that
// Setup.RoutePolicies attaches per-route middleware to.
var Routes = []Route{
	{"GET", "/"},
	{"GET", "/healthz"},
	{"GET", "/login"},
	{"POST", "/login"},
	{"POST", WorkPath},
}

// WorkPath is the route (POST) whose handler is Work instead of OKBody's.
const WorkPath = "/work"

// Work is the handler of WorkPath, for ctx, the context a handler of the
// framework reads the request's ratelimit.Usage from, and header, the
// request's headers: it sets the final cost of the header X-Test-Cost
// (Usage.SetCost), resets the Usage when X-Test-Reset is present, and
// answers the status of X-Test-Status (200 by default), as an error of the
// framework's kind when X-Test-Error is present (asError). The body is
// OKBody, or "no usage" when ctx carries none. With X-Test-Hold it first
// signals held and waits for release: a slow request.
func Work(ctx context.Context, header func(string) string) (status int, body string, asError bool) {
	status, body = http.StatusOK, OKBody
	if s, err := strconv.Atoi(header("X-Test-Status")); err == nil {
		status = s
	}
	if header("X-Test-Hold") != "" {
		held <- struct{}{}
		<-release
	}
	u := ratelimit.FromContext(ctx)
	if u == nil {
		return status, "no usage", false
	}
	if c, err := strconv.Atoi(header("X-Test-Cost")); err == nil {
		if err := u.SetCost(c); err != nil {
			return http.StatusInternalServerError, err.Error(), false
		}
	}
	if header("X-Test-Reset") != "" {
		if err := u.Reset(ctx); err != nil {
			return http.StatusInternalServerError, err.Error(), false
		}
	}
	return status, body, header("X-Test-Error") != ""
}

// OKBody is the body of every route handler.
const OKBody = "ok"

// Setup says which middleware an app carries.
type Setup struct {
	// Global, when non-nil, is installed around the whole router, the
	// framework's usual place for global middleware (for net/http, around
	// the ServeMux). Route patterns must reach it: an adapter whose
	// router sets the pattern only after global middleware runs must
	// resolve it first, as stdhttp does.
	Global *ratelimit.Middleware
	// RouteBase and RoutePolicies, when RoutePolicies is non-empty, attach
	// per-route middleware to POST /login at registration, in the
	// framework's idiom for per-route middleware (stdhttp.Route(RouteBase,
	// RoutePolicies...)), which builds on RouteBase.Route.
	RouteBase     *ratelimit.Middleware
	RoutePolicies []core.Policy
	// Identify, when set, installs before the rate limiter a stand-in for
	// authentication middleware: it stores the value of the request header
	// UserHeader, when present, in the framework's own per-request store
	// under UserKey (Gin's Context.Set, Fiber's Ctx.Locals, the request
	// context for net/http and Echo), where keyfuncs.ContextValue(UserKey)
	// finds it.
	Identify bool
}

// UserKey is the key under which Identify stores the caller's identity.
var UserKey = userKey{}

type userKey struct{}

// UserHeader is the request header Identify reads the caller's identity from.
const UserHeader = "X-Test-User"

// Adapter builds apps of one framework for the suite.
type Adapter interface {
	// Handler returns an app serving Routes with the middleware of s, as an
	// http.Handler (Fiber through its net/http adaptor). Requests reach it
	// with RemoteAddr and headers exactly as the suite sets them.
	Handler(t testing.TB, s Setup) http.Handler
	// Native returns the request header NativeHeader as the framework's own
	// request object has it, reached through the adapter's accessor
	// (stdhttp.Request, ginrl.Context, echorl.Context, fiberrl.Ctx); ok is
	// false when the accessor finds none behind r.
	Native(r keyfuncs.Request) (value string, ok bool)
}

// NativeHeader is the header Adapter.Native reads.
const NativeHeader = "X-Test-Native"

// held and release hold the requests to WorkPath that ask for it, for the
// suite's concurrency test.
var (
	held    = make(chan struct{}, 16)
	release = make(chan struct{})
)
