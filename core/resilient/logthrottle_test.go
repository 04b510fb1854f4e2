package resilient_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

// TestLogRateLimited: an outage writes at most one line per interval, the
// next line counts the suppressed ones, and recovery is always logged.
func TestLogRateLimited(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	f := newFaulty(t)
	clk := core.NewManualClock(t0)
	b := must.Do(resilient.New(f, resilient.WithClock(clk), resilient.WithFailOpen(),
		resilient.WithBreaker(2, time.Second), resilient.WithLogger(logger, 10*time.Second)))
	ctx := context.Background()
	f.set(failing)
	for range 1000 { // 5 s of outage, a check every 5 ms
		if _, err := backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now()); err != nil {
			t.Fatal(err)
		}
		clk.Advance(5 * time.Millisecond)
	}
	if got := buf.lines(); len(got) != 1 || !strings.Contains(got[0], "primary backend failed") {
		t.Fatalf("5 s of outage logged %d lines: %q", len(got), got)
	}
	clk.Advance(5 * time.Second)
	_, _ = backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now()) // a probe that fails
	got := buf.lines()
	if len(got) != 2 || !strings.Contains(got[1], "suppressed=") {
		t.Fatalf("after the interval: %q", got)
	}
	f.set(healthy)
	clk.Advance(time.Second)
	_, _ = backendtest.CheckOne(ctx, b, "k", perSecond, 1, clk.Now())
	got = buf.lines()
	if len(got) != 3 || !strings.Contains(got[2], "breaker closed") {
		t.Fatalf("recovery not logged: %q", got)
	}
	if s := b.Stats(); s.LogSuppressed == 0 {
		t.Fatalf("suppressed lines not counted: %+v", s)
	}
	t.Logf("log lines: %q; stats %+v", got, b.Stats())
}
