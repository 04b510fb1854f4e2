package resilient

import (
	"errors"
	"fmt"

	"github.com/ratelimit-go/ratelimit/core"
)

// Sentinel errors, for use with errors.Is.
var (
	// ErrUnavailable reports that the primary backend could not answer: it
	// failed, it did not answer within the budget, or the circuit breaker is
	// open. Every error the wrapper produces itself matches it; the caller's
	// own errors (invalid arguments, a cancelled context) never do.
	ErrUnavailable = errors.New("resilient: primary backend unavailable")
	// ErrBudgetExceeded reports a primary call that did not answer within the
	// latency budget. Errors wrapping it also match ErrUnavailable.
	ErrBudgetExceeded = errors.New("resilient: primary backend exceeded the latency budget")
	// ErrCircuitOpen reports a call that did not reach the primary because
	// the circuit breaker is open (or a probe is already in flight). Errors
	// wrapping it also match ErrUnavailable.
	ErrCircuitOpen = errors.New("resilient: circuit breaker open")
	// ErrOverloaded reports a call refused because too many earlier calls,
	// abandoned at the budget, are still running in the primary. Errors
	// wrapping it also match ErrUnavailable.
	ErrOverloaded = errors.New("resilient: too many abandoned primary calls still running")
)

// unavailableError is the error of an operation the primary could not serve
// and the configured failure mode did not answer (every failure without a
// failure mode, a Peek without a fallback, a Reset). It matches
// ErrUnavailable and, through Unwrap, its Cause.
type unavailableError struct {
	// Op is the operation: "check", "peek" or "reset".
	Op string
	// Cause is why the primary did not answer: ErrBudgetExceeded,
	// ErrCircuitOpen, ErrOverloaded, or the primary's own error.
	Cause error
	// Fallback is the fallback backend's error when it failed too.
	Fallback error
}

// Error describes the problem; it is safe to log.
func (e *unavailableError) Error() string {
	if e.Fallback != nil {
		return fmt.Sprintf("%v: %s: %v; fallback: %v", ErrUnavailable, e.Op, e.Cause, e.Fallback)
	}
	return fmt.Sprintf("%v: %s: %v", ErrUnavailable, e.Op, e.Cause)
}

// Unwrap returns the cause and the fallback's error, if any.
func (e *unavailableError) Unwrap() []error {
	if e.Fallback != nil {
		return []error{e.Cause, e.Fallback}
	}
	return []error{e.Cause}
}

// Is makes every unavailableError match ErrUnavailable.
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

// callerError reports whether err is the caller's doing rather than the
// primary's: a typed validation error of package core. Such errors pass
// through unchanged and never count against the primary's health.
func callerError(err error) bool {
	return errors.Is(err, core.ErrInvalidPolicy) ||
		errors.Is(err, core.ErrUnknownAlgorithm) ||
		errors.Is(err, core.ErrInvalidCost) ||
		errors.Is(err, core.ErrCostExceedsCapacity) ||
		errors.Is(err, core.ErrInvalidKey) ||
		errors.Is(err, core.ErrNoPolicy)
}
