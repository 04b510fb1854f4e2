package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/sink"
)

// TestCalendarHeaders: a monthly quota in a time zone says the current
// month's length in w=, and its reset and Retry-After are the start of the
// next month in that zone, on admissions and denials alike.
func TestCalendarHeaders(t *testing.T) {
	t.Parallel()
	lim, clk := newLimiter(t)
	p := core.MustParsePolicy("2/1mo;tz=Europe/Paris;name=monthly")
	for _, mode := range []ratelimit.HeaderMode{ratelimit.HeadersDraft11, ratelimit.HeadersDraft07} {
		m := keyed(t, lim, ratelimit.WithPolicy(p), ratelimit.WithHeaders(mode))
		key := "k" + mode.String()
		// 22:00 UTC on 28 February is 23:00 in Paris: one hour of February left.
		clk.Set(time.Date(2026, 2, 28, 22, 0, 0, 0, time.UTC))
		want := map[ratelimit.HeaderMode][2]string{
			ratelimit.HeadersDraft11: {`"monthly";q=2;w=2419200`, `"monthly";r=1;t=3600`},
			ratelimit.HeadersDraft07: {`2;w=2419200`, `limit=2, remaining=1, reset=3600`},
		}[mode]
		rec := sink.NewRecorder()
		if !m.Handle(context.Background(), req("GET", "/", key), rec, nil) {
			t.Fatal("first request denied")
		}
		if got := rec.H.Get("Ratelimit-Policy"); got != want[0] {
			t.Errorf("%v: RateLimit-Policy %q, want %q (28 days)", mode, got, want[0])
		}
		if got := rec.H.Get("Ratelimit"); got != want[1] {
			t.Errorf("%v: RateLimit %q, want %q", mode, got, want[1])
		}
		m.Handle(context.Background(), req("GET", "/", key), sink.NewRecorder(), nil)
		rec = sink.NewRecorder()
		if m.Handle(context.Background(), req("GET", "/", key), rec, nil) {
			t.Fatal("third request admitted")
		}
		if got := rec.H.Get("Retry-After"); got != "3600" {
			t.Errorf("%v: Retry-After %q, want 3600", mode, got)
		}
		// March in Paris: 31 days less the hour of the change to summer time.
		clk.Set(time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC))
		rec = sink.NewRecorder()
		if !m.Handle(context.Background(), req("GET", "/", key), rec, nil) {
			t.Fatal("denied in a new month")
		}
		if got, wantW := rec.H.Get("Ratelimit-Policy"), (31*24-1)*3600; got != map[ratelimit.HeaderMode]string{
			ratelimit.HeadersDraft11: `"monthly";q=2;w=2674800`, ratelimit.HeadersDraft07: `2;w=2674800`}[mode] {
			t.Errorf("%v: RateLimit-Policy %q in March, want w=%d", mode, got, wantW)
		}
	}
}
