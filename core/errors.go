package core

import (
	"errors"
	"fmt"
)

// Sentinel errors, for use with errors.Is. Errors returned by this module wrap
// one of them, with the details in a *PolicyError or a *CostError.
var (
	// ErrInvalidPolicy reports a policy that cannot be enforced: a missing or
	// non-positive limit or window, a negative burst, an unknown algorithm,
	// numbers out of range, or a malformed policy string.
	ErrInvalidPolicy = errors.New("ratelimit: invalid policy")
	// ErrUnknownAlgorithm reports an algorithm name that is not one of the
	// six. Errors wrapping it also match ErrInvalidPolicy.
	ErrUnknownAlgorithm = errors.New("ratelimit: unknown algorithm")
	// ErrInvalidCost reports a cost of zero or less.
	ErrInvalidCost = errors.New("ratelimit: invalid cost")
	// ErrCostExceedsCapacity reports a cost larger than a policy's capacity:
	// such a check could never succeed, so it is an error, not a denial.
	ErrCostExceedsCapacity = errors.New("ratelimit: cost exceeds capacity")
	// ErrInvalidKey reports an empty key.
	ErrInvalidKey = errors.New("ratelimit: invalid key")
	// ErrNoPolicy reports a check with no policy at all.
	ErrNoPolicy = errors.New("ratelimit: no policy")
)

// PolicyError describes what is wrong with a policy or its text: which
// field, which value, and why; for a malformed policy string (ParsePolicy),
// the input and the offset of the bad part. It matches ErrInvalidPolicy and
// its Err with errors.Is.
type PolicyError struct {
	Policy string // the policy's name, if it has one
	Field  string // "limit", "window", "burst", "algorithm", "name"; "" in a policy string
	Value  string // the offending value, as text; the bad part of Input
	Reason string // what is wrong with it
	Err    error  // ErrInvalidPolicy or ErrUnknownAlgorithm
	Input  string // the whole policy string, when the error is ParsePolicy's
	Offset int    // byte offset of Value in Input
}

// Error describes the problem; it is safe to log.
func (e *PolicyError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%v %q: at offset %d (%q): %s", ErrInvalidPolicy, e.Input, e.Offset, e.Value, e.Reason)
	}
	name := ""
	switch {
	case e.Input != "":
		name = fmt.Sprintf(" %q", e.Input)
	case e.Policy != "":
		name = fmt.Sprintf(" %q", e.Policy)
	}
	return fmt.Sprintf("%v%s: %s %s: %s", e.Err, name, e.Field, e.Value, e.Reason)
}

// Unwrap returns the sentinel error.
func (e *PolicyError) Unwrap() error { return e.Err }

// Is makes every PolicyError match ErrInvalidPolicy, including those whose
// sentinel is ErrUnknownAlgorithm.
func (e *PolicyError) Is(target error) bool { return target == ErrInvalidPolicy }

// CostError reports a cost that is not positive or exceeds a policy's
// capacity. It matches ErrInvalidCost or ErrCostExceedsCapacity.
type CostError struct {
	Policy   string // the policy's name, if it has one
	Cost     int    // the requested cost
	Capacity int    // the policy's capacity (Limit, or Burst for rate-based algorithms)
	Err      error  // ErrInvalidCost or ErrCostExceedsCapacity
}

// Error describes the problem; it is safe to log.
func (e *CostError) Error() string {
	if e.Err == ErrInvalidCost {
		return fmt.Sprintf("%v: cost %d: must be at least 1", e.Err, e.Cost)
	}
	name := ""
	if e.Policy != "" {
		name = fmt.Sprintf(" of policy %q", e.Policy)
	}
	return fmt.Sprintf("%v: cost %d is above the capacity %d%s and could never succeed", e.Err, e.Cost, e.Capacity, name)
}

// Unwrap returns the sentinel error.
func (e *CostError) Unwrap() error { return e.Err }
