package redisstore

import "github.com/ratelimit-go/ratelimit/core"

// ScriptSHA returns the SHA-1 of the check script, for tests that inspect
// Redis's script cache.
func ScriptSHA() string { return checkScript.Hash() }

// StateKey returns the Redis key of key's state under p.
func StateKey(prefix, key string, p core.Policy) string {
	return redisKeys(prefix, key, []core.Policy{p}, &policyCache{})[0]
}

// WithoutBatching is withoutBatching, for the benchmarks' comparison row.
var WithoutBatching = withoutBatching
