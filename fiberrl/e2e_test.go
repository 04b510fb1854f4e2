package fiberrl_test

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

// TestE2E serves a Fiber app with its own server (fasthttp) on a loopback
// listener and checks that a retrying client honouring Retry-After gets
// through. The shared check speaks to an http.Handler, so the handler it
// gets is a reverse proxy to the Fiber server: every request crosses a
// real socket into Fiber, and the key (the peer address) is the proxy's,
// the same for every request.
func TestE2E(t *testing.T) {
	t.Parallel()
	httpsuite.E2E(t, func(m *ratelimit.Middleware) http.Handler {
		return httputil.NewSingleHostReverseProxy(serveFiber(t, newApp(httpsuite.Setup{Global: m})))
	})
}

// serveFiber serves app on a loopback listener until the test ends and
// returns its base URL.
func serveFiber(t testing.TB, app *fiber.App) *url.URL {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Listener(ln) }()
	t.Cleanup(func() {
		if err := app.Shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}
}
