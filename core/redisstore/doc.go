// Package redisstore is the Redis Backend: rate-limit state shared by every
// instance of a service, decided inside Redis so that several processes
// enforce one limit exactly.
//
// A Store works over any redis.UniversalClient of github.com/redis/go-redis/v9:
// a single Redis (*redis.Client), Sentinel (the client from
// redis.NewFailoverClient), Redis Cluster (*redis.ClusterClient) or a
// *redis.Ring.
//
// # One script per check
//
// A check (one key, all its policies, one cost) is one call of one Lua script:
// one round trip, atomic, all or nothing across policies. The script evaluates
// every policy first and writes new states only if every one admits the check;
// a denied check or a peek writes nothing at all. The six algorithms are the
// Lua files under lua/, embedded into the binary, each following its Go
// counterpart in package core/algo step for step, and the script dispatches
// on an algorithm code per policy, so mixed multi-policy checks are one call
// too. It runs by EVALSHA and falls back to EVAL when Redis answers NOSCRIPT
// (after SCRIPT FLUSH, a restart or a failover); that is the only retry the
// Store ever makes, because only then is it certain the script did not run.
//
// Under load, checks that arrive while earlier ones are on the wire wait and
// go out together (WithPipelines). Those bound for one Redis node, all of
// them on one Redis or under Sentinel, those of one hash slot on a Cluster,
// share one script call that decides them one after another
// (WithChecksPerCall): a script runs without interleaving, so each check is
// as atomic and all-or-nothing as in its own call, and one that fails (a key
// of the wrong type) answers with its own error while the others proceed.
// Checks that cannot share a call share a pipeline. A script call or
// pipeline that meets NOSCRIPT is sent again with EVAL.
//
// Time is a parameter: the caller's instant travels to Redis as integer
// microseconds and Redis's own clock is never read. Keys whose callers'
// clocks disagree never move backwards: a script clamps now exactly as
// core/algo does.
//
// # Keys
//
// Each (key, policy) pair is one Redis key:
//
//	<prefix>{<tag>}:<policy id>
//
// The tag is the caller's key with '{', '}', '%', spaces, control and non-ASCII
// bytes percent-escaped, or, when that is longer than 96 bytes, a SHA-256
// digest of it; so every key of one check shares one hash slot on a Redis
// Cluster, whatever bytes the caller's key holds. The policy id is a short
// digest of every Policy field, so two policies that differ in any field,
// Name included, never share state. Every key written gets a TTL equal to the
// ResetAfter of the check that wrote it, rounded up to a millisecond: from
// then on an absent key means the same as the stored state. Under a fixed
// window or a sliding window counter that moment is the end of a window, the
// same for every check in it, so only the check that opens a window sets the
// TTL and the others leave it standing (one command less per admitted
// check).
//
// # Failures
//
// Arguments the core rejects (core.ValidateItems) are rejected before any
// round trip with the core's typed errors. Anything Redis or the network
// returns is wrapped in an error naming the operation ("redisstore: check:
// ..."); a check that fails is never reported as admitted.
//
// go-redis retries a command after a network error or timeout (Options.
// MaxRetries, 3 by default). A script that timed out may still have run, so a
// retried check can be counted twice: it can only consume more, never admit
// more than the limit. resilient.RedisOptions sets MaxRetries to -1 to rule
// that out, and ContextTimeoutEnabled so that deadlines bound socket I/O.
package redisstore
