// Package backendtest is the conformance suite every core.Backend runs
// unchanged (the memory store, and the Redis store on miniredis, a real Redis
// and a Cluster):
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
// Run checks exact decisions step by step (the YAML vectors embedded from
// testdata/conformance), properties of seeded random traces against
// NewReference, the model backend (never more than the limit, a denial
// changes nothing, RetryAfter is exact), key isolation, atomicity under
// concurrency, and typed errors for bad input. Time is a core.ManualClock
// running far ahead of the wall clock, so a backend must not expire a key
// before the ResetAfter it reported; every subtest uses its own key prefix,
// so a Factory may share one server. Step, RandomTrace and Diff serve
// differential tests of other packages.
package backendtest
