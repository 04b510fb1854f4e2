package backendtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

const (
	concurrentWorkers = 8
	concurrentChecks  = 10 // per worker
)

// runConcurrency races checks on one key at one frozen instant: whatever the
// interleaving, an atomic backend admits exactly the quota, and a
// multi-policy check consumes the same units from every policy or none.
func runConcurrency(t *testing.T, newBackend Factory) {
	b := newBackend(t)
	ctx := context.Background()
	algs := core.Algorithms()
	for i, alg := range algs {
		t.Run(string(alg), func(t *testing.T) {
			prefix := keyPrefix(t)
			clock := core.NewManualClock(time.Date(2026, 12, 24, 18, 0, 0, 500000, time.UTC))
			lim := core.NewLimiter(b, core.WithClock(clock))
			p := core.Policy{Limit: 40, Window: time.Hour, Algorithm: alg}
			q := core.Policy{Limit: 25, Window: 2 * time.Hour, Algorithm: algs[(i+1)%len(algs)], Name: "second"}

			var admitted, units int
			var mu sync.Mutex
			var wg sync.WaitGroup
			errs := make(chan error, concurrentWorkers)
			for w := range concurrentWorkers {
				wg.Go(func() {
					var single, multiUnits int
					out := make([]core.Decision, 2)
					for n := range concurrentChecks {
						d, err := lim.Allow(ctx, prefix+"single", p)
						if err != nil {
							errs <- err
							return
						}
						if d.Allowed {
							single++
						}
						cost := 1 + (w+n)%3
						r, err := lim.Check(ctx, prefix+"multi", []core.Policy{p, q}, cost, out)
						if err != nil {
							errs <- err
							return
						}
						if r.Allowed {
							multiUnits += cost
						}
					}
					mu.Lock()
					admitted += single
					units += multiUnits
					mu.Unlock()
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if admitted != p.Limit {
				t.Errorf("%d concurrent checks of %s at one instant admitted %d, want exactly %d", concurrentWorkers*concurrentChecks, p, admitted, p.Limit)
			}
			u := units
			if u > q.Limit || u < q.Limit-2 {
				t.Errorf("concurrent multi-policy checks admitted %d units under %s, want %d to %d", u, q, q.Limit-2, q.Limit)
			}
			for _, pol := range []core.Policy{p, q} {
				d, err := lim.Peek(ctx, prefix+"multi", pol)
				if err != nil {
					t.Fatal(err)
				}
				if want := pol.Limit - u; d.Remaining != want {
					t.Errorf("%s: %d remaining after %d admitted units, want %d: %s", pol, d.Remaining, u, want, formatDecision(d))
				}
			}
		})
	}
}
