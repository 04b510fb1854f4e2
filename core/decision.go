package core

import "time"

// Decision is a backend's answer for one policy of a check.
type Decision struct {
	// Allowed reports whether this policy admits the check. A multi-policy
	// check is admitted only when every policy admits it (see Result).
	Allowed bool
	// Source says what decided: SourcePrimary (the zero value) when the
	// Limiter's backend did, or, behind core/resilient, the deny cache, the
	// fallback, or a failure mode.
	Source Source
	// Limit is the policy's quota (Policy.Limit), for headers.
	Limit int
	// Remaining is the number of units left: after this check when it was
	// admitted, as they stand when it was not. Never negative.
	Remaining int
	// RetryAfter is zero when Allowed. Otherwise it is the earliest moment,
	// from now, at which the same check succeeds if nothing else consumes in
	// between: exact to the microsecond, never "the end of the window" unless
	// that is the answer.
	RetryAfter time.Duration
	// ResetAfter is the time until the key is back to its full quota under
	// this policy, assuming no further checks. Zero when it already is.
	ResetAfter time.Duration
	// Delay is how long the caller should hold an admitted request so that
	// admitted requests leave at a constant rate. Only LeakyBucket sets it;
	// zero otherwise and whenever the check was not admitted.
	Delay time.Duration
}

// Source says what decided a check: the backend itself, or a part of a
// wrapper (core/resilient, core/lease) answering in its place.
type Source uint8

const (
	// SourcePrimary: the Limiter's backend decided (behind core/resilient,
	// its primary).
	SourcePrimary Source = iota
	// SourceDenyCache: a local cache of the primary's denials denied.
	SourceDenyCache
	// SourceFallback: a fallback backend decided because the primary could
	// not.
	SourceFallback
	// SourceFailOpen: the primary could not decide; the check was admitted.
	SourceFailOpen
	// SourceFailClosed: the primary could not decide; the check was denied.
	SourceFailClosed
	// SourceLease: admitted from units a lease (core/lease) had already
	// consumed in the store.
	SourceLease
)

var sourceNames = [...]string{"primary", "deny_cache", "fallback", "fail_open", "fail_closed", "lease"}

// String returns the source in snake case ("deny_cache"), suitable as a
// metric label.
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "unknown"
}

// Result is the outcome of a multi-policy check (Limiter.Check).
type Result struct {
	// Allowed reports whether every policy admitted the check. When false,
	// nothing was consumed from any policy.
	Allowed bool
	// Decisions holds one decision per policy, in the order given.
	Decisions []Decision
	// Policies are the policies the decisions are for, Policies[i] for
	// Decisions[i]: the policies given to Limiter.Check (not copied: they
	// must not be modified). nil for Limiter.Do, whose items say it.
	Policies []Policy
	// Binding is the index in Decisions of the policy that decided the
	// outcome: when denied, the denying policy with the longest RetryAfter;
	// when admitted, the policy with the fewest units remaining (the longer
	// ResetAfter breaks ties).
	Binding int
	// At is the instant the check was decided at, the Limiter's clock
	// reading: the Item.At of a later OpRefund of what it consumed.
	At time.Time
}

// Decision returns the binding decision, or the zero Decision if the result
// holds none.
func (r Result) Decision() Decision {
	if r.Binding < 0 || r.Binding >= len(r.Decisions) {
		return Decision{}
	}
	return r.Decisions[r.Binding]
}

// bind computes Result.Allowed and Result.Binding from per-policy decisions.
// It reads the fields it compares, not whole Decisions: a store may have
// just written them field by field, and a wider load stalls on such stores.
func bind(ds []Decision) (allowed bool, binding int) {
	allowed = true
	for i := range ds {
		if !ds[i].Allowed {
			if allowed || ds[i].RetryAfter > ds[binding].RetryAfter {
				binding = i
			}
			allowed = false
		}
	}
	if !allowed {
		return false, binding
	}
	for i := range ds {
		d, b := &ds[i], &ds[binding]
		if d.Remaining < b.Remaining || (d.Remaining == b.Remaining && d.ResetAfter > b.ResetAfter) {
			binding = i
		}
	}
	return true, binding
}
