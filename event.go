package ratelimit

import (
	"context"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// Outcome says what the middleware did with a request.
type Outcome uint8

const (
	// OutcomeAllowed: the policies admitted the request.
	OutcomeAllowed Outcome = iota + 1
	// OutcomeDenied: a policy denied the request; it was answered 429.
	OutcomeDenied
	// OutcomeSkipped: a skip rule, keyfuncs.ErrSkip, a cost of 0 or the
	// absence of any policy for the route let the request through
	// unchecked.
	OutcomeSkipped
	// OutcomeRefused: the request's key, plan or cost was unusable (a
	// *keyfuncs.MissingKeyError, core.ErrInvalidKey,
	// core.ErrCostExceedsCapacity, ErrUnknownPlan), answered 4xx by the
	// error handler, or the key or plan function failed, answered 500.
	OutcomeRefused
	// OutcomeFailedOpen: the limiter failed and the request proceeded
	// unchecked (FailOpen).
	OutcomeFailedOpen
	// OutcomeFailedClosed: the limiter failed and the request was answered
	// 503 by the error handler (FailClosed).
	OutcomeFailedClosed
)

var outcomeNames = [...]string{"", "allowed", "denied", "skipped", "refused", "failed_open", "failed_closed"}

// String returns the outcome in snake case ("failed_open"), suitable as a
// metric label.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && o != 0 {
		return outcomeNames[o]
	}
	return "unknown"
}

// Event describes one request's trip through the middleware, for
// observers (WithObserver).
type Event struct {
	// Outcome says what happened.
	Outcome Outcome
	// Request is the request. Valid only during the observer call.
	Request keyfuncs.Request
	// Key is the rate-limit key, "" when no key was derived.
	Key string
	// Plan is the plan the plan function of WithPlans chose, "" when none did
	// (no WithPlans, a route table entry applied, or the request has no
	// plan or an unknown one, and got the global policies).
	Plan string
	// Policies are the enforced policies of the set the request was checked
	// (or, for a failure or a refused cost, was to be checked) against; nil
	// before a set was chosen (skip rules, key and plan function errors).
	// It must not be modified.
	Policies []core.Policy
	// Cost is the request's cost, 0 when no check was made.
	Cost int
	// Source says who decided: the binding decision's source for
	// OutcomeAllowed and OutcomeDenied, the failure mode's for
	// OutcomeFailedOpen and OutcomeFailedClosed; zero otherwise.
	Source core.Source
	// Result holds the decisions of the check, for OutcomeAllowed and
	// OutcomeDenied. Its Decisions slice is reused after the observer
	// returns: copy what you keep.
	Result core.Result
	// Shadow holds the decisions of the shadow policies (core.Policy.Shadow)
	// of the request's policy set, checked after the enforced ones admitted
	// it: Shadow.Allowed false means the rollout would have denied the
	// request. Empty when the set has no shadow policy or the request was
	// not admitted. Reused after the observer returns, like Result.
	Shadow core.Result
	// ShadowErr is the error of the shadow check, if it failed. It never
	// changes the response.
	ShadowErr error
	// Err is the error behind OutcomeRefused, OutcomeFailedOpen and
	// OutcomeFailedClosed, and a failed write of the response body. It may
	// carry internal details: log it, never send it to a client.
	Err error
}

// Observer is called synchronously for every request the middleware sees,
// after the verdict is reached (and, when the middleware wrote the
// response, after it did). It must be safe for concurrent use and quick. A
// panic in an observer is recovered and counted (Middleware.ObserverPanics);
// the request carries on.
type Observer func(ctx context.Context, e Event)
