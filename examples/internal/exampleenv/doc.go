// Package exampleenv is what the example servers share, so that each
// example's main package shows only what differs between frameworks. It
// holds the rate limits (Limits), the command-line flags (-addr, -redis),
// the rate-limit store they select (in memory by default, Redis with
// -redis), and serving an http.Handler until the context ends.
package exampleenv
