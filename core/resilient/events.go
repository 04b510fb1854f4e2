package resilient

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// breakerState is the circuit breaker's state. Stats and PrimaryEvent
// carry it by name, as its String gives it.
type breakerState uint8

// The breaker's states.
const (
	// breakerClosed, "closed": checks go to the primary. The zero value.
	breakerClosed breakerState = iota
	// breakerOpen, "open": checks go straight to the failure mode until
	// the next probe is due.
	breakerOpen
	// breakerHalfOpen, "half_open": one probe is in flight to the primary;
	// every other check goes to the failure mode until it answers.
	breakerHalfOpen
)

// String returns "closed", "open" or "half_open".
func (s breakerState) String() string {
	switch s {
	case breakerClosed:
		return "closed"
	case breakerOpen:
		return "open"
	case breakerHalfOpen:
		return "half_open"
	}
	return "unknown"
}

// PrimaryEvent is something that happened to the primary, reported to the
// hook of WithEvents.
type PrimaryEvent struct {
	// Kind says what happened: "state_change", the breaker moved from From
	// to To; "failure", a call to the primary failed (Err says why);
	// "late_result", a call abandoned at the budget has finished in the
	// primary and its result was discarded (Err is its error, if any).
	Kind string
	// Op is the operation involved: "check", "peek", "adjust" (a refund
	// or a charge) or "reset".
	Op string
	// From and To are the breaker's states for "state_change": "closed",
	// "open" or "half_open".
	From, To string
	// Err is the failure's cause, for "failure" and "late_result".
	Err error
	// Time is the wrapper's clock reading when the event happened.
	Time time.Time
}

// Stats are the wrapper's counters since it was created. Every count is
// cumulative except State and Abandoned, which are current values.
type Stats struct {
	// State is the breaker's state: "closed", "open" or "half_open" (see
	// PrimaryEvent.From).
	State string
	// PrimaryCalls counts calls made to the primary (checks, peeks, resets).
	PrimaryCalls uint64
	// Failures counts primary calls that failed, timeouts included.
	Failures uint64
	// Timeouts counts primary calls abandoned at the budget.
	Timeouts uint64
	// ShortCircuits counts operations that did not reach the primary
	// because the breaker was open or too many calls were abandoned.
	ShortCircuits uint64
	// Opens counts transitions to "open".
	Opens uint64
	// Probes counts probes sent while the breaker was open.
	Probes uint64
	// FailedOpen counts checks admitted by the fail-open mode.
	FailedOpen uint64
	// FailedClosed counts checks denied by the fail-closed mode.
	FailedClosed uint64
	// FallbackChecks counts checks and peeks answered by the fallback.
	FallbackChecks uint64
	// DenyCacheHits counts checks denied by the local deny cache without a
	// round trip.
	DenyCacheHits uint64
	// Abandoned is the number of primary calls abandoned at the budget that
	// are still running.
	Abandoned int64
	// LateResults counts abandoned calls that have since finished.
	LateResults uint64
	// LogSuppressed counts log lines dropped by the log rate limit.
	LogSuppressed uint64
}

// checkReport tells how one check was answered: Source (core.SourcePrimary,
// the zero value, when the primary did) and Err, why the primary did not
// answer. Tests attach one to a check's context with withReport
// (export_test.go) to attribute each check of a fault run.
type checkReport struct {
	Source core.Source
	Err    error
}

// sourceNone is a checkReport's Source when nothing answered and the check
// failed with an error; it is never on a Decision.
const sourceNone = ^core.Source(0)

type reportKey struct{}

func withReport(ctx context.Context, r *checkReport) context.Context {
	return context.WithValue(ctx, reportKey{}, r)
}

// answered marks the decisions the wrapper returns with source, which
// answered them in the primary's place, and reports it (report).
func answered(ctx context.Context, out []core.Decision, source core.Source, cause error) {
	for i := range out {
		out[i].Source = source
	}
	report(ctx, source, cause)
}

// report records source and err in the context's checkReport, if any.
func report(ctx context.Context, source core.Source, err error) {
	if r, ok := ctx.Value(reportKey{}).(*checkReport); ok && r != nil {
		r.Source = source
		r.Err = err
	}
}
