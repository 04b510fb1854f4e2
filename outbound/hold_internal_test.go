package outbound

import (
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

// TestHoldKeepsTheLaterAndStaysBounded: a shorter hold never cuts a longer
// one short (two responses of one host may arrive in any order), and past
// maxHeld keys, expired holds go first, then the one ending soonest.
func TestHoldKeepsTheLaterAndStaysBounded(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := core.NewManualClock(t0)
	tr := must.Do(New(core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock)), core.MustParsePolicy("1/1s")))
	tr.hold("a", t0.Add(time.Minute))
	tr.hold("a", t0.Add(time.Second))
	if got := tr.held["a"]; !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("a shorter hold replaced a longer one: held until %v", got)
	}

	// Full: two expired holds, the rest ending at t0 + 1 h + i s.
	tr.held = map[string]time.Time{"expired": t0.Add(-time.Second), "expired too": t0}
	for i := range maxHeld - 2 {
		tr.held[strconv.Itoa(i)] = t0.Add(time.Hour + time.Duration(i)*time.Second)
	}
	tr.hold("new", t0.Add(2*time.Hour))
	if len(tr.held) != maxHeld-1 || !tr.held["0"].Equal(t0.Add(time.Hour)) {
		t.Fatalf("past the bound with two expired holds: %d holds, want %d, every unexpired one kept", len(tr.held), maxHeld-1)
	}
	tr.hold("new too", t0.Add(2*time.Hour))
	tr.hold("newer", t0.Add(2*time.Hour))
	if _, ok := tr.held["0"]; ok || len(tr.held) != maxHeld || tr.held["newer"].IsZero() {
		t.Fatalf("past the bound with none expired: %d holds, the soonest kept %v", len(tr.held), ok)
	}
}
