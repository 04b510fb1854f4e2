package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// workload describes one bench run: Checks single-unit checks, round-robin
// over Keys keys, against Policy, with a manual clock starting at Start and
// advancing Step after every check.
type workload struct {
	Checks int
	Keys   int
	Policy core.Policy // its Algorithm is replaced by each row's
	Step   time.Duration
	Start  time.Time
}

// result is one row of the report: one algorithm over the whole workload.
type result struct {
	Algorithm core.Algorithm
	Checks    int
	Allowed   int
	// Busy is the summed wall-clock time spent inside Limiter.Allow, the
	// bench's own bookkeeping excluded.
	Busy time.Duration
	// P50 and P99 are nearest-rank percentiles of the per-call latency.
	P50, P99 time.Duration
	// Admitted counts the admitted checks per bucket of simulated time
	// (Bucket long), in order: the curve the plot draws.
	Admitted []int
	Bucket   time.Duration
}

// plotBuckets is the number of points of a row's admitted curve.
const plotBuckets = 100

// AllowedPct is the share of checks admitted, in percent.
func (r result) AllowedPct() float64 {
	if r.Checks == 0 {
		return 0
	}
	return 100 * float64(r.Allowed) / float64(r.Checks)
}

// ChecksPerSec is the throughput of the calls themselves: checks divided by
// the time spent inside them.
func (r result) ChecksPerSec() float64 {
	if r.Busy <= 0 {
		return 0
	}
	return float64(r.Checks) / r.Busy.Seconds()
}

// benchKeys returns the workload's keys, built once so that no formatting
// happens while measuring.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "bench:" + strconv.Itoa(i)
	}
	return keys
}

// measure runs the workload under algorithm a on backend b and returns its
// row. The limiter reads a ManualClock; each call is timed with the
// monotonic wall clock. Before measuring, the workload's keys are Reset under
// the policy so that state left by an earlier run (on Redis) cannot skew the
// counts. The timed loop allocates and formats nothing.
func measure(ctx context.Context, b core.Backend, w workload, a core.Algorithm) (result, error) {
	p := w.Policy
	p.Algorithm = a
	if err := p.Validate(); err != nil {
		return result{}, err
	}
	if w.Checks <= 0 || w.Keys <= 0 {
		return result{}, fmt.Errorf("checks and keys must be positive, got %d and %d", w.Checks, w.Keys)
	}
	clock := core.NewManualClock(w.Start)
	l := core.NewLimiter(b, core.WithClock(clock))
	keys := benchKeys(w.Keys)
	for _, k := range keys {
		if err := l.Reset(ctx, k, p); err != nil {
			return result{}, fmt.Errorf("resetting %s: %w", k, err)
		}
	}
	lat := make([]time.Duration, w.Checks)
	r := result{Algorithm: a, Checks: w.Checks}
	span := w.Step * time.Duration(w.Checks)
	r.Bucket = max(span/plotBuckets, time.Microsecond)
	r.Admitted = make([]int, max(int((span+r.Bucket-1)/r.Bucket), 1))
	runtime.GC() // start every row from the same heap state

	k := 0
	for i := range lat {
		start := time.Now()
		d, err := l.Allow(ctx, keys[k], p)
		lat[i] = time.Since(start)
		if err != nil {
			return result{}, fmt.Errorf("%s: check %d (key %s): %w", a, i, keys[k], err)
		}
		if d.Allowed {
			r.Allowed++
			r.Admitted[min(int(w.Step*time.Duration(i)/r.Bucket), len(r.Admitted)-1)]++
		}
		if k++; k == len(keys) {
			k = 0
		}
		clock.Advance(w.Step)
	}

	for _, d := range lat {
		r.Busy += d
	}
	slices.Sort(lat)
	r.P50 = percentile(lat, 50)
	r.P99 = percentile(lat, 99)
	return r, nil
}

// percentile returns the nearest-rank q-th percentile of sorted, which must
// not be empty.
func percentile(sorted []time.Duration, q int) time.Duration {
	rank := (q*len(sorted) + 99) / 100 // ceil(q/100 * n)
	return sorted[max(rank, 1)-1]
}
