package backendtest_test

import (
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
)

// TestReference runs the suite against the model backend, so the suite
// proves itself: its vectors and properties hold for the plain algorithms.
func TestReference(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) core.Backend { return backendtest.NewReference() })
}
