package memstore_test

import (
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

// TestConformance runs the shared backend suite against the store, with
// the background sweeper on so that it sweeps while the suite runs.
func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) core.Backend {
		s := must.Do(memstore.New(memstore.WithSweepInterval(time.Millisecond)))
		t.Cleanup(func() { s.Close() })
		return s
	})
}
