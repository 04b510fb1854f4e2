package backendtest

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
)

// Factory returns an empty backend for one test; it registers its own cleanup
// with t.Cleanup. Run may call it several times, and every subtest uses its
// own random key prefix, so a Factory may return views of one shared server.
type Factory func(t *testing.T) core.Backend

// Run runs the whole conformance suite against the backends newBackend
// returns, in subtests named Vectors/<file>/<vector>, Properties/<name>,
// Isolation/<name>, Concurrency/<algorithm> and Contract/<name>.
func Run(t *testing.T, newBackend Factory) {
	t.Helper()
	t.Run("Vectors", func(t *testing.T) { runVectors(t, newBackend) })
	t.Run("Contract", func(t *testing.T) { runContract(t, newBackend) })
	t.Run("Isolation", func(t *testing.T) { runIsolation(t, newBackend) })
	t.Run("Concurrency", func(t *testing.T) { runConcurrency(t, newBackend) })
	t.Run("Properties", func(t *testing.T) { runProperties(t, newBackend) })
	t.Run("PolicyChange", func(t *testing.T) { runPolicyChange(t, newBackend) })
}

// keyPrefix returns a fresh random prefix, so that subtests sharing one
// server never see each other's keys.
func keyPrefix(t *testing.T) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random key prefix: %v", err)
	}
	return "ct:" + hex.EncodeToString(b[:]) + ":"
}
