package resilient

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// logThrottle writes at most one line per interval and counts the rest, so
// that an outage seen by thousands of requests per second costs a log line
// now and then.
type logThrottle struct {
	l     *slog.Logger // nil: logging is off
	every time.Duration

	mu         sync.Mutex
	last       time.Time
	logged     bool
	suppressed uint64
	total      atomic.Uint64 // lines suppressed since the start, for Stats
}

// log writes msg unless a line was written less than every ago; force writes
// it regardless. attrs must not include "suppressed".
func (t *logThrottle) log(now time.Time, force bool, level slog.Level, msg string, attrs ...slog.Attr) {
	if t.l == nil {
		return
	}
	t.mu.Lock()
	if !force && t.logged && now.Sub(t.last) < t.every && !now.Before(t.last) {
		t.suppressed++
		t.total.Add(1)
		t.mu.Unlock()
		return
	}
	n := t.suppressed
	t.suppressed, t.last, t.logged = 0, now, true
	t.mu.Unlock()
	if n > 0 {
		attrs = append(attrs, slog.Uint64("suppressed", n))
	}
	t.l.LogAttrs(context.Background(), level, msg, attrs...)
}
