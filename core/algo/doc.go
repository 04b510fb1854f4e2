// Package algo holds the six rate-limiting algorithms as pure functions: each
// takes a policy's Params, a key's state, a cost and the instant now, and
// returns an Answer and the state to store if the check is admitted. None
// reads a clock or allocates; only CommitSlidingLog, the sliding log's second
// step, writes into the log it is given, up to Limit entries. Every state
// type's zero value is an empty key. The memory store runs these functions;
// the Redis scripts follow them step for step, held to identical decisions
// by a differential test.
//
// Time is integer microseconds since the Unix epoch and every stored quantity
// an integer below 2^53, so Go and Lua agree exactly; the one floating-point
// computation (the sliding window estimate) is the same sequence of IEEE
// operations in both.
//
// Every algorithm follows these rules:
//
//   - A denied check returns the state unchanged.
//   - A state may be dropped ResetAfter after an admitted check: an absent
//     state then means the same.
//   - now never moves a state backwards: a caller whose clock lags the
//     stored time gets no refund, and its RetryAfter is exact on its own
//     clock.
//   - A cost of 0 evaluates without consuming (a peek).
package algo
