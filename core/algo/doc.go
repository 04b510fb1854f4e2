// Package algo holds the six rate-limiting algorithms as pure functions: each
// takes a policy's Params, the key's current state, a cost and the instant
// now, and returns an Answer and the state to store if the check is
// admitted. None of them reads a clock, allocates, or writes anywhere; only
// CommitSlidingLog, the sliding log's second step, writes into the log it
// is given and grows its buffer, up to Limit entries.
//
// Five of them have one shape, Func: a state value in, the outcome and the
// next state out (GCRA, FixedWindow, SlidingWindow, TokenBucket,
// LeakyBucket). The sliding log keeps a buffer of timestamps that a store
// updates in place rather than copying per check, so it is two steps:
// SlidingLog decides, CommitSlidingLog writes. (A state value that shares
// the buffer and carries its admission until the next read fits Func too,
// but cost the sliding log 15% per check.) Every state type has
// ExpiresAt(*core.Params), and its zero value is an empty key.
//
// The memory store runs these functions directly. The Redis scripts in
// core/redisstore follow them step for step, and a differential test holds
// the two to identical decisions.
//
// # Units
//
// Time is integer microseconds since the Unix epoch; every stored quantity
// is an integer below 2^53, so Go's int64 and Lua's doubles agree exactly.
// The one computation in floating point, the sliding window estimate, is
// written as the same sequence of IEEE operations in Go and in Lua, so both
// round identically.
//
// # Rules every algorithm follows
//
//   - A denied check returns the state unchanged; callers store nothing.
//   - When several policies are checked together, callers evaluate all of
//     them first and store the new states only if every one admits.
//   - After an admitted check the state can be dropped ResetAfter later: from
//     then on an absent state means exactly the same thing (that is the TTL).
//   - now never moves a key's state backwards: when a caller's clock is
//     behind the time stored for the key, the stored time is used for the
//     state and the caller's now only for the durations reported back, so a
//     lagging instance gets no refund and its RetryAfter is still exact on its
//     own clock.
//   - A cost of 0 evaluates without consuming: Remaining and ResetAfter as
//     they stand. Backends implement Peek with it.
package algo
