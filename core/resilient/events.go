package resilient

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// State is the circuit breaker's state.
type State uint8

// The breaker's states.
const (
	// Closed: checks go to the primary. The zero value.
	Closed State = iota
	// Open: checks go straight to the failure mode until the next probe is
	// due.
	Open
	// HalfOpen: one probe is in flight to the primary; every other check
	// goes to the failure mode until it answers.
	HalfOpen
)

// String returns "closed", "open" or "half-open".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "unknown"
}

// EventKind says what an Event reports.
type EventKind uint8

// The kinds of events.
const (
	// EventStateChange: the breaker moved from Event.From to Event.To.
	EventStateChange EventKind = iota + 1
	// EventFailure: a call to the primary failed; Event.Err says why.
	EventFailure
	// EventLateResult: a call abandoned at the budget has finished in the
	// primary; its result was discarded. Event.Err is its error, if any.
	EventLateResult
)

// String returns the kind's name.
func (k EventKind) String() string {
	switch k {
	case EventStateChange:
		return "state-change"
	case EventFailure:
		return "failure"
	case EventLateResult:
		return "late-result"
	}
	return "unknown"
}

// Event is something the wrapper reports to the hook set with WithEvents.
type Event struct {
	Kind EventKind
	// Op is the operation involved: "check", "peek" or "reset".
	Op string
	// From and To are the breaker's states, for EventStateChange.
	From, To State
	// Err is the failure's cause, for EventFailure and EventLateResult.
	Err error
	// Time is the wrapper's clock reading when the event happened.
	Time time.Time
}

// Stats are the wrapper's counters since it was created. Every count is
// cumulative except State and Abandoned, which are current values.
type Stats struct {
	// State is the breaker's state.
	State State
	// PrimaryCalls counts calls made to the primary (checks, peeks, resets).
	PrimaryCalls uint64
	// Failures counts primary calls that failed, timeouts included.
	Failures uint64
	// Timeouts counts primary calls abandoned at the budget.
	Timeouts uint64
	// ShortCircuits counts operations that did not reach the primary
	// because the breaker was open or too many calls were abandoned.
	ShortCircuits uint64
	// Opens counts transitions to Open.
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

// Source says which part of the wrapper answered a check: the same values
// as core.Source, which the wrapper also sets on every Decision it returns.
type Source = core.Source

// The sources, as core names them.
const (
	// SourcePrimary: the primary answered (or the error is the caller's).
	SourcePrimary = core.SourcePrimary
	// SourceDenyCache: the local deny cache denied the check.
	SourceDenyCache = core.SourceDenyCache
	// SourceFallback: the fallback backend answered.
	SourceFallback = core.SourceFallback
	// SourceFailOpen: the primary was unavailable; the check was admitted.
	SourceFailOpen = core.SourceFailOpen
	// SourceFailClosed: the primary was unavailable; the check was denied.
	SourceFailClosed = core.SourceFailClosed
	// SourceUnavailable: the primary was unavailable and an error was
	// returned.
	SourceUnavailable = core.SourceUnavailable
)

// Report tells a caller how one check was answered: whether its decision
// came from the primary or from a failure mode. Attach one to a context with
// WithReport before the check; the wrapper fills it in. A Report belongs to
// one check at a time.
type Report struct {
	// Source is what answered. SourcePrimary (the zero value) when the
	// primary did.
	Source Source
	// Err is why the primary did not answer, when it did not.
	Err error
}

type reportKey struct{}

// WithReport returns a context that makes the wrapper record in r how the
// check made with it was answered. It is how a fail-open admission is told
// apart from a real one.
func WithReport(ctx context.Context, r *Report) context.Context {
	return context.WithValue(ctx, reportKey{}, r)
}

// answered marks the decisions the wrapper returns with source, which
// answered them in the primary's place, and reports it (report).
func answered(ctx context.Context, out []core.Decision, source Source, cause error) {
	for i := range out {
		out[i].Source = source
	}
	report(ctx, source, cause)
}

// report records source and err in the context's Report, if it carries one.
func report(ctx context.Context, source Source, err error) {
	if r, ok := ctx.Value(reportKey{}).(*Report); ok && r != nil {
		r.Source = source
		r.Err = err
	}
}
