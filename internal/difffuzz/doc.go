// Package difffuzz holds FuzzDifferential, which decodes arbitrary bytes
// into a rate-limiting trace (policies of all six algorithms, keys, costs,
// clock steps, checks, peeks and resets) and requires the memory store, the
// Redis store on miniredis and the reference model of core/backendtest to
// decide every step identically.
//
// Run it with
//
//	go test ./internal/difffuzz -run '^$' -fuzz FuzzDifferential -fuzztime 30s
//
// The seed corpus lives in testdata/fuzz/FuzzDifferential; any input that
// fails is added there by the fuzzer and replayed by every plain go test.
// TestDifferentialOnRealRedis replays it, with 300 traces of a fixed random
// source, on a real Redis and a real Cluster, whose Lua miniredis's is not.
package difffuzz
