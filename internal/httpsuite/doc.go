// Package httpsuite is the HTTP conformance suite that every framework
// adapter (net/http, Gin, Echo, Fiber) runs, so that a client sees the
// same status codes, the same header fields, the same keys and the same
// per-route, multi-policy, skip and failure behaviour whatever framework
// serves it.
//
// An adapter implements Adapter (build an app with the suite's Routes and
// a given Setup, as an http.Handler, and read a header through its accessor
// of the framework's request) and calls Run from a test:
//
//	func TestConformance(t *testing.T) { httpsuite.Run(t, adapter{}) }
//
// Time is a core.ManualClock throughout, so nothing waits, E2E included: a
// real loopback server and a retrying client honouring Retry-After, whose
// backoff advances the clock instead of sleeping.
package httpsuite
