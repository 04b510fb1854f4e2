// Package exampleenv is the plumbing the example servers share, so that
// each example's main package shows only what differs between frameworks:
// the command-line flags (-addr, -redis), the rate-limit store they select
// (in memory by default, Redis with -redis), and serving an http.Handler
// until the context ends.
package exampleenv
