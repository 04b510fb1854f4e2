// Package core holds the rate limiter's vocabulary and its single point of
// dispatch: policies and algorithms, decisions, the clock, the Backend
// interface that stores implement, and the Limiter that ties them together.
//
// A Limiter reads its Clock once per check and passes that instant to the
// Backend, which decides the whole check atomically: one key, one or more
// policies, one cost. Backends never read a clock of their own, so tests drive
// time with a ManualClock and "wait a minute" takes microseconds.
//
// The algorithms themselves live in the backends; package core/algo holds
// them as pure functions over integer-microsecond state, which the in-memory
// store runs directly and the Redis scripts mirror step for step.
package core
