package redisstore

// ScriptSHA returns the SHA-1 of the check script, for tests that inspect
// Redis's script cache.
func ScriptSHA() string { return checkScript.Hash() }
