// Package redisstore is the Redis Backend: state shared by every instance of
// a service and decided inside Redis, over any redis.UniversalClient of
// go-redis v9 (a single Redis, Sentinel, a Cluster or a Ring).
//
// A check (one key, all its policies, one cost) is one call of one Lua
// script: atomic, all or nothing across policies, and a denial or a peek
// writes nothing. The scripts follow package core/algo step for step. They
// run by EVALSHA, with EVAL after NOSCRIPT, the only retry the Store makes,
// since only then is it certain the script did not run. Under load, checks
// that arrive while others are on the wire go out together (WithPipelines);
// those bound for one node share one script call that decides them one after
// another (WithChecksPerCall), each as atomic as alone. The caller's instant
// travels as integer microseconds; Redis's clock is never read.
//
// Each (key, policy) pair is one Redis key, <prefix>{<tag>}:<policy id>: the
// tag is the caller's key percent-escaped (or a SHA-256 digest when that is
// longer than 96 bytes), so a check's keys share one Cluster hash slot, and
// the policy id is a digest of every Policy field. Every key written
// expires at the ResetAfter of the check that wrote it.
//
// Invalid arguments get the core's typed errors before any round trip; a
// Redis or network error is wrapped as "redisstore: check: ...", and a check
// that fails is never reported as admitted. go-redis retries a timed-out
// command, which may count a check twice (never admit more):
// resilient.RedisOptions turns that off.
package redisstore
