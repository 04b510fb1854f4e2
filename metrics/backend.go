package metrics

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/resilient"
)

// Backend returns b with the latency of every call recorded in
// ratelimit_backend_call_duration_seconds{op}, op being "check", "peek",
// "adjust" (a refund or a charge) or "reset", as in
// resilient.PrimaryEvent.Op; wrap the primary inside
// core/resilient to see the store's own latency. The result is
// core.Bounded when b is; errors pass through unchanged.
func (c *Collector) Backend(b core.Backend) core.Backend {
	return &instrumented{b: b, check: c.latency.WithLabelValues("check"), peek: c.latency.WithLabelValues("peek"),
		adjust: c.latency.WithLabelValues("adjust"), reset: c.latency.WithLabelValues("reset")}
}

type instrumented struct {
	b                          core.Backend
	check, peek, adjust, reset prometheus.Observer
}

// Bounded implements core.Bounded with the answer of the instrumented
// backend.
func (i *instrumented) Bounded() bool { b, ok := i.b.(core.Bounded); return ok && b.Bounded() }

func (i *instrumented) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	start := time.Now()
	err := i.b.Do(ctx, items, now, out)
	o := i.check
	if len(items) > 0 {
		switch items[0].Op {
		case core.OpPeek:
			o = i.peek
		case core.OpRefund, core.OpCharge:
			o = i.adjust
		case core.OpReset:
			o = i.reset
		}
	}
	o.Observe(time.Since(start).Seconds())
	return err
}

// ResilientEvents returns the hook to install with resilient.WithEvents: it
// counts breaker transitions (ratelimit_breaker_transitions_total{to}) and
// failed primary calls by kind (ratelimit_backend_errors_total{kind}).
func (c *Collector) ResilientEvents() func(resilient.PrimaryEvent) {
	return func(e resilient.PrimaryEvent) {
		switch e.Kind {
		case "state_change":
			if slices.Contains(stateLabels[:], e.To) {
				c.trans.WithLabelValues(e.To).Inc()
			}
		case "failure":
			c.errKinds[errorKind(e.Err)].Inc()
		}
	}
}

// The kinds of backend errors, as labels.
var errorKinds = [...]string{"other", "timeout", "refused", "script", "out_of_memory", "cluster", "overloaded"}

// errorKind classifies a primary's error as an index of errorKinds.
func errorKind(err error) int {
	var ne net.Error
	switch {
	case err == nil:
		return 0
	case errors.Is(err, resilient.ErrOverloaded):
		return 6
	case errors.Is(err, resilient.ErrBudgetExceeded), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return 1
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), strings.Contains(err.Error(), "EOF"):
		return 2
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "OOM "):
		return 4
	case strings.Contains(msg, "CROSSSLOT"), strings.Contains(msg, "MOVED"), strings.Contains(msg, "ASK "),
		strings.Contains(msg, "CLUSTERDOWN"), strings.Contains(msg, "TRYAGAIN"):
		return 5
	case strings.Contains(msg, "NOSCRIPT"), strings.Contains(msg, "ERR Error running script"), strings.Contains(msg, "user_script"), strings.Contains(msg, "ERR ratelimit"):
		return 3
	}
	return 0
}
