package ratelimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// FuzzMiddleware drives Handle with any key, route and cost: it never
// panics, a request is admitted, denied (429 with Retry-After), refused
// with a 4xx, or, for a negative cost (a bug of the cost function),
// answered 500, and every field written parses back and carries no
// control character.
func FuzzMiddleware(f *testing.F) {
	f.Add("client", "/login", 1, int64(0))
	f.Add("a\r\nSet-Cookie: x", "/", 3, int64(1500))
	f.Add("", "", 0, int64(-1))
	f.Add("\x00\xff", "/login", 99, int64(60_000_000))
	f.Fuzz(func(t *testing.T, key, route string, cost int, advanceMicros int64) {
		clk := core.NewManualClock(time.Date(2026, 5, 5, 5, 5, 5, 0, time.UTC))
		lim := core.NewLimiter(must.Do(memstore.New()), core.WithClock(clk))
		m, err := ratelimit.New(ratelimit.WithLimiter(lim),
			ratelimit.WithKeyFunc(func(keyfuncs.Request) (string, error) { return key, nil }),
			ratelimit.WithCost(func(keyfuncs.Request) int { return cost }),
			ratelimit.WithPolicy(core.MustParsePolicy("3/1s;name=s"), core.MustParsePolicy("10/1m;algorithm=sliding_window;name=m")),
			ratelimit.WithRoute("POST", "/login", core.MustParsePolicy("2/1m;algorithm=token_bucket")),
			ratelimit.WithShaping(nil))
		if err != nil {
			t.Fatal(err)
		}
		r := keyfuncstest.New("192.0.2.1:1")
		r.Verb, r.Pattern = "POST", route
		for i := 0; i < 4; i++ {
			rec := newRecorder()
			v := m.Handle(context.Background(), r, rec, nil)
			switch {
			case v && rec.status == 0:
			case !v && rec.status == 429:
				if rec.h.Get("Retry-After") == "" || rec.h.Get("Retry-After") == "0" {
					t.Fatalf("429 without a positive Retry-After: %v", rec.h)
				}
			case !v && rec.status >= 400 && rec.status < 500:
			case !v && rec.status == 500 && cost < 0:
			default:
				t.Fatalf("verdict %v status %d", v, rec.status)
			}
			for k, vs := range rec.h {
				for _, s := range vs {
					if strings.ContainsAny(s, "\r\n\x00") {
						t.Fatalf("%s carries a control character: %q", k, s)
					}
				}
				if k == "Ratelimit" || k == "Ratelimit-Policy" {
					if _, err := httpsfv.UnmarshalList(vs); err != nil {
						t.Fatalf("%s %q: %v", k, vs, err)
					}
				}
			}
			if advanceMicros > 0 {
				clk.Advance(time.Duration(advanceMicros%(120_000_000)) * time.Microsecond)
			}
		}
	})
}
