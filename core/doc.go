// Package core holds the rate limiter's vocabulary and its single point of
// dispatch: policies and algorithms, decisions, the clock, the Backend
// interface that stores implement, and the Limiter that ties them together.
//
// A Limiter reads its Clock once per check and passes that instant to the
// Backend, which decides the whole check atomically. A Backend has one
// method for every decision, Do, over a batch of items (a key, a policy, a
// cost and an operation each): a check of one policy is a batch of one, a
// check of several policies a batch of one key, and the descriptors of an
// Envoy request a batch of several keys. Backends never read a clock of
// their own, so tests drive time with a ManualClock and "wait a minute"
// takes microseconds.
//
// The algorithms themselves live in the backends; package core/algo holds
// them as pure functions over integer-microsecond state, which the in-memory
// store runs directly and the Redis scripts mirror step for step.
//
// # Options
//
// Every package of the project reads its functional options by one rule. A
// zero value (0, 0s, nil, "") means the option's documented default, exactly
// as if the option were not given; in particular it never means "off" unless
// off is the default. A value outside the option's documented range (a
// negative size, a negative duration, too many shards) is refused when the
// value is built, never clamped or ignored: constructors that return an
// error return one naming the option (ratelimit.New and the adapters,
// memstore.New, redisstore.New, resilient.New, lease.New,
// keyfuncs.NewIPResolver), and none panics on bad input, so that a
// misconfigured program stops at start instead of running with settings
// nobody asked for. Turning a default feature off has an option of its own
// (redisstore.WithoutBatching, ratelimit.WithShaping(nil)).
package core
