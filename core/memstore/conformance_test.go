package memstore_test

import (
	"runtime"
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

// TestConformance runs the shared backend suite against the store, with a
// goroutine sweeping it while the suite runs.
func TestConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) core.Backend {
		s := must.Do(memstore.New())
		sweeping(t, s)
		return s
	})
}

// sweeping calls s.Sweep in a loop on a goroutine of its own until t ends.
func sweeping(t *testing.T, s *memstore.Store) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				s.Sweep()
				runtime.Gosched()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

func TestMultiKey(t *testing.T) {
	t.Parallel()
	backendtest.RunMultiKey(t, func(*testing.T) core.Backend { return must.Do(memstore.New(memstore.WithShards(4))) })
}
