// Package redisproc starts real redis-server processes for fault tests: a
// standalone server, a cluster of masters and replicas, and a Sentinel
// group. Each server listens on a free loopback port, keeps its files in the
// test's temporary directory, and is stopped by its PID when the test ends
// (and killed by the kernel if the test binary dies first).
//
// Servers can be stopped, killed, paused (SIGSTOP, so that connections hang
// instead of being refused), resumed (SIGCONT) and restarted on the same
// port. Nothing here touches a server the test did not start.
//
// When redis-server is not installed, Require skips the test with a message
// saying so; under CI=true it fails the test instead, so that CI never passes
// by skipping.
package redisproc
