package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

// small is a workload whose allowed counts are worked out by hand: two keys,
// each checked once a second (the clock advances 500ms per check and the
// keys alternate), twenty checks per key, against 4 per 8 seconds. The start
// is a multiple of 8s, so fixed windows begin with the run.
var small = workload{
	Checks: 40,
	Keys:   2,
	Policy: core.Policy{Limit: 4, Window: 8 * time.Second},
	Step:   500 * time.Millisecond,
	Start:  time.Unix(1_700_000_000, 0),
}

func TestMeasureSmallWorkloadCounts(t *testing.T) {
	// Per key, checks at t = 0, 1, ..., 19 seconds:
	//   fixed_window: windows [0,8) [8,16) [16,24) admit 4 each: 12.
	//   sliding_log: 0-3 admitted, then each leaves 8s later: 8-11, 16-19: 12.
	//   gcra, token_bucket, leaky_bucket: burst 4 plus one unit per 2s.
	//     The k-th admission (from 0) needs 2(k+1) <= t+8, t >= 2k-6:
	//     k = 0..6 at t = 0..6, then k = 7..12 at t = 8, 10, ..., 18: 13.
	want := map[core.Algorithm]int{
		core.FixedWindow: 24, core.SlidingLog: 24,
		core.GCRA: 26, core.TokenBucket: 26, core.LeakyBucket: 26,
	}
	store := must.Do(memstore.New())
	for a, n := range want {
		r, err := measure(context.Background(), store, small, a)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if r.Allowed != n || r.Checks != small.Checks || r.Algorithm != a {
			t.Errorf("%s: %+v, want %d of %d allowed", a, r, n, small.Checks)
		}
		if r.P50 <= 0 || r.P99 < r.P50 || r.Busy < r.P99 {
			t.Errorf("%s: timings p50 %v p99 %v busy %v are inconsistent", a, r.P50, r.P99, r.Busy)
		}
	}
}

// A second run on the same store starts from a clean state: measure resets
// the keys first, so the counts repeat exactly.
func TestMeasureRepeatsOnSameBackend(t *testing.T) {
	store := must.Do(memstore.New())
	for _, a := range core.Algorithms() {
		first, err := measure(context.Background(), store, small, a)
		if err != nil {
			t.Fatal(err)
		}
		again, err := measure(context.Background(), store, small, a)
		if err != nil {
			t.Fatal(err)
		}
		if first.Allowed != again.Allowed {
			t.Errorf("%s: %d allowed, then %d on the same store", a, first.Allowed, again.Allowed)
		}
	}
}

// The seed workload's counts, worked out by hand. Per key: 200 checks, 0.5s
// apart, starting 20s into a 60s fixed window.
//   - fixed_window: 80 checks in the first (partial) window, all admitted;
//     120 in the next, 100 admitted: 180 per key.
//   - sliding_log: 100 admitted over the first 50s, none until the first
//     leaves the trailing minute at 60s, then all 80 remaining: 180.
//   - gcra: burst 100 plus one unit per 600ms never runs out within 100s
//     at 2 checks a second: all 200.
func TestMeasureSeedWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 checks per algorithm")
	}
	seed := workload{Checks: 200_000, Keys: 1_000, Policy: core.MustParsePolicy("100/1m"), Step: 500 * time.Microsecond, Start: time.Unix(1_700_000_000, 0)}
	store := must.Do(memstore.New())
	for a, n := range map[core.Algorithm]int{core.FixedWindow: 180_000, core.SlidingLog: 180_000, core.GCRA: 200_000} {
		r, err := measure(context.Background(), store, seed, a)
		if err != nil {
			t.Fatal(err)
		}
		if r.Allowed != n {
			t.Errorf("%s: %d allowed, want %d", a, r.Allowed, n)
		}
	}
}

func TestMeasureErrors(t *testing.T) {
	store := must.Do(memstore.New())
	bad := small
	bad.Policy.Limit = 0
	if _, err := measure(context.Background(), store, bad, core.GCRA); !errors.Is(err, core.ErrInvalidPolicy) {
		t.Errorf("invalid policy: %v", err)
	}
	empty := small
	empty.Keys = 0
	if _, err := measure(context.Background(), store, empty, core.GCRA); err == nil {
		t.Error("zero keys accepted")
	}
	if _, err := measure(context.Background(), failing{}, small, core.GCRA); !errors.Is(err, errDown) {
		t.Errorf("failing backend: %v", err)
	}
}

var errDown = errors.New("backend down")

// failing is a Backend whose every call fails.
type failing struct{}

func (failing) Do(context.Context, []core.Item, time.Time, []core.Decision) error {
	return errDown
}

func TestPercentile(t *testing.T) {
	lat := make([]time.Duration, 200)
	for i := range lat {
		lat[i] = time.Duration(i + 1)
	}
	for _, tt := range []struct {
		q    int
		want time.Duration
	}{{50, 100}, {99, 198}, {100, 200}, {1, 2}, {0, 1}} {
		if got := percentile(lat, tt.q); got != tt.want {
			t.Errorf("p%d = %d, want %d", tt.q, got, tt.want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one = %d", got)
	}
}
