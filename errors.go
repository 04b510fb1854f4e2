package ratelimit

import (
	"errors"
	"fmt"
)

// ErrInvalidConfig reports a Middleware that cannot be built: a missing key
// function, an invalid policy or route, an unknown header mode. Errors from
// New and Middleware.With match it (or core.ErrInvalidPolicy for a bad
// policy) with errors.Is.
var ErrInvalidConfig = errors.New("ratelimit: invalid middleware configuration")

// ErrNoKeyFunc reports a Middleware built without WithKeyFunc. The key is
// always an explicit choice. It matches ErrInvalidConfig.
var ErrNoKeyFunc = fmt.Errorf("%w: no key function; use WithKeyFunc", ErrInvalidConfig)

// ErrNegativeCost is reported to observers and the error handler when the
// cost function returns a negative cost, a programming error that is
// handled like a limiter failure.
var ErrNegativeCost = errors.New("ratelimit: cost function returned a negative cost")
