// Package backendtest is the conformance suite every core.Backend runs,
// unchanged: the memory store, the Redis store on miniredis, on a real Redis
// and on a Redis Cluster. A backend's test calls Run with a Factory:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, func(t *testing.T) core.Backend {
//			s, err := memstore.New()
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Run checks three things. Vectors: the YAML files in testdata/conformance,
// embedded in this package (the suite runs under -trimpath too), pin exact
// decisions (Allowed, Remaining, RetryAfter,
// ResetAfter, Delay, or a typed error) step by step for all six algorithms.
// Properties: seeded random traces (see RandomTrace) must never admit more
// than an exact algorithm's limit, a denied check must change nothing, the
// same check must succeed exactly at RetryAfter and not 1 ms before, and every
// decision must equal that of NewReference, the model backend. Isolation: keys
// that differ only in '{', '}' or binary bytes, and one key under two
// policies, never share state. Concurrency: checks racing at one instant
// admit exactly the quota, and a multi-policy check consumes from all its
// policies or none. Contract: every Backend method, called directly, answers
// bad input with the typed error and changes nothing.
//
// The suite drives time with a core.ManualClock and assumes nothing about a
// backend beyond the core.Backend contract. Every subtest uses a random key
// prefix, so a Factory may hand out one shared server. Because the manual
// clock runs far ahead of the wall clock, a backend's expiry must not drop a
// key before the ResetAfter it reported has passed on the clock it was given.
//
// The exported trace helpers (Step, RandomTrace, Replay, DiffOutcomes) let
// other packages write differential tests of their own.
package backendtest
