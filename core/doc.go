// Package core holds the rate limiter's vocabulary: policies and algorithms,
// decisions, the clock, the Backend interface that stores implement, and the
// Limiter that ties them together.
//
// A Limiter reads its Clock once per check and passes that instant to the
// Backend, which decides the whole check atomically with its one method, Do,
// over a batch of items (a key, a policy, a cost and an operation each).
// Backends never read a clock, so tests drive time with a ManualClock.
//
// Options follow one rule in every package of the project: a zero value
// means the documented default, and a value outside the documented range is
// refused by the constructor with an error naming the option, never clamped
// and never a panic. Turning a default feature off has an option of its own
// (redisstore.WithoutBatching, ratelimit.WithShaping(nil)).
package core
