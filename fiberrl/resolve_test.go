package fiberrl_test

import (
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ratelimit-go/ratelimit/fiberrl"
)

// TestResolverAgreesWithFiber: on random apps (static routes, parameters,
// optional parameters, wildcards, under every case and slash setting) and
// random paths, the pattern Use middleware resolves is the pattern of the
// route Fiber then runs, or "" when Fiber runs none.
func TestResolverAgreesWithFiber(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	path := func(from []string, n int, last string) string {
		var b strings.Builder
		for i := range n {
			if i == n-1 && last != "" && rng.IntN(2) == 0 {
				b.WriteString("/" + last)
				continue
			}
			b.WriteString("/" + from[rng.IntN(len(from))])
		}
		return b.String()
	}
	patternParts := []string{"a", "b", "users", "Users", "x-y", "x.y", "me", ":id", ":n", ":id?", "*", "+"}
	pathParts := []string{"a", "b", "users", "USERS", "me", "7", "x-y", "x.y", "a.b", "", "u\u017fers"}
	var req fasthttp.Request
	req.Header.SetMethod("GET")
	addr := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}
	checked, routed := 0, 0
	for n := range 1000 {
		cfg := fiber.Config{CaseSensitive: n%2 == 1, StrictRouting: n%4 >= 2, UnescapePath: n%8 >= 4}
		var rec patternRecorder
		app := newFiber(cfg)
		app.Use(fiberrl.Middleware(rec.middleware(t)))
		var chosen string
		handler := func(c *fiber.Ctx) error {
			chosen = c.Route().Path
			return c.SendStatus(204)
		}
		var patterns []string
		for range 1 + rng.IntN(6) {
			p := path(patternParts, 1+rng.IntN(3), "")
			patterns = append(patterns, p)
			app.Get(p, handler)
		}
		h := app.Handler()
		for range 40 {
			target := path(pathParts, 1+rng.IntN(4), "")
			if rng.IntN(4) == 0 {
				target += "/"
			}
			req.SetRequestURI(target)
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, addr, nil)
			chosen = ""
			h(&ctx)
			if got := rec.last(t); got != chosen {
				t.Fatalf("case-sensitive %v, strict %v, unescaped %v, routes %q, GET %s: resolved %q, Fiber ran %q", cfg.CaseSensitive, cfg.StrictRouting, cfg.UnescapePath, patterns, target, got, chosen)
			}
			checked++
			if chosen != "" {
				routed++
			}
		}
	}
	if routed < checked/5 {
		t.Fatalf("only %d of %d requests matched a route: the generator tests little", routed, checked)
	}
}
