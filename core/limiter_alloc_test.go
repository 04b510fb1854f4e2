//go:build !race

package core_test

import (
	"context"
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
)

// The allow path costs the Limiter no allocation, and a multi-policy Check
// with a reused out slice allocates nothing either. (The race detector makes sync.Pool drop items,
// hence the build tag.)
func TestLimiterAllocations(t *testing.T) {
	l := core.NewLimiter(nopBackend{}, core.WithClock(core.NewManualClock(t0)))
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { _, _ = l.Allow(ctx, "k", perSec) }); n != 0 {
		t.Errorf("Allow allocates %.1f times per call", n)
	}
	ps := []core.Policy{perSec, perMin}
	out := make([]core.Decision, 2)
	if n := testing.AllocsPerRun(1000, func() { _, _ = l.Check(ctx, "k", ps, 1, out) }); n != 0 {
		t.Errorf("Check with a reused out slice allocates %.1f times per call", n)
	}
}
