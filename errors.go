package ratelimit

import (
	"errors"
	"fmt"

	"github.com/ratelimit-go/ratelimit/core"
)

// ErrInvalidConfig reports a Middleware that cannot be built: a missing key
// function, no policy, an invalid route, an unknown mode.
var ErrInvalidConfig = errors.New("ratelimit: invalid middleware configuration")

var (
	// errNoKeyFunc: the key is always an explicit choice.
	errNoKeyFunc = fmt.Errorf("%w: no key function; use WithKeyFunc", ErrInvalidConfig)
	// errNoPolicy: a Middleware that could never limit a request. To let
	// every request through on purpose, do not install the middleware.
	errNoPolicy = fmt.Errorf("%w: no policy at all: give WithPolicy, WithRoute or WithPlans", ErrInvalidConfig)
	// errNilMiddleware: a method called on a nil *Middleware.
	errNilMiddleware = fmt.Errorf("%w: a nil *Middleware; build it with New", ErrInvalidConfig)
	// errNegativeCost: a bug of the cost function, answered 500 whatever the
	// failure mode.
	errNegativeCost = fmt.Errorf("%w: the cost function returned a negative cost", core.ErrInvalidCost)
)

// RouteError reports a route table entry (WithRoute) that can never match:
// a method that is not an upper-case HTTP token, a pattern not starting with
// "/" or holding white space, or one the adapter's framework never produces
// ("/users/{id}" on Gin). It matches ErrInvalidConfig.
type RouteError struct {
	Method  string // as given
	Pattern string // as given
	Reason  string // what is wrong, and what to write instead
}

// Error names the entry and the problem; it is safe to log.
func (e *RouteError) Error() string {
	return fmt.Sprintf("ratelimit: WithRoute(%q, %q): %s", e.Method, e.Pattern, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *RouteError) Unwrap() error { return ErrInvalidConfig }

// ErrUnknownPlan is reported to observers (Event.Err) and to the error
// handler when the plan function names no plan of WithPlans (or returns "") and
// there is no global policy to fall back on: with WithDenyUnknownPlans, the
// request is answered 403.
var ErrUnknownPlan = errors.New("ratelimit: the plan function named no configured plan")
