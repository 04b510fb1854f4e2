package core_test

import (
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

func TestManualClockMoves(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.FixedZone("X", 3600))
	c := core.NewManualClock(start)
	if got := c.Now(); !got.Equal(start) || got.Location() != time.UTC {
		t.Fatalf("Now() = %v, want %v in UTC", got, start)
	}
	if got := c.Advance(1500 * time.Millisecond); !got.Equal(start.Add(1500*time.Millisecond)) || !c.Now().Equal(got) {
		t.Fatalf("Advance returned %v, Now %v", got, c.Now())
	}
	if got := c.Advance(-time.Hour); !got.Equal(start.Add(1500*time.Millisecond - time.Hour)) {
		t.Fatalf("Advance backwards = %v", got)
	}
	later := time.Date(2100, 1, 1, 0, 0, 0, 1, time.UTC)
	c.Set(later)
	if !c.Now().Equal(later) {
		t.Fatalf("after Set, Now() = %v, want %v", c.Now(), later)
	}
	before := time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)
	c.Set(before)
	if !c.Now().Equal(before) {
		t.Fatalf("after Set before the epoch, Now() = %v", c.Now())
	}
	var zero core.ManualClock
	if !zero.Now().Equal(time.Unix(0, 0)) {
		t.Fatalf("zero ManualClock reads %v, want the Unix epoch", zero.Now())
	}
}

// Concurrent Advance calls are never lost and concurrent readers only ever
// see readings the clock actually passed through. Run with -race.
func TestManualClockConcurrent(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	c := core.NewManualClock(start)
	const workers, steps = 8, 1000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	bad := make(chan time.Time, 1)
	go func() { // a reader racing the writers
		for {
			select {
			case <-stop:
				return
			default:
			}
			now := c.Now()
			d := now.Sub(start)
			if d < 0 || d > workers*steps*time.Microsecond || d%time.Microsecond != 0 {
				select {
				case bad <- now:
				default:
				}
			}
		}
	}()
	for range workers {
		wg.Go(func() {
			prev := start
			for range steps {
				now := c.Advance(time.Microsecond)
				if !now.After(prev) {
					t.Errorf("Advance went from %v to %v", prev, now)
					return
				}
				prev = now
			}
		})
	}
	wg.Wait()
	close(stop)
	if got, want := c.Now(), start.Add(workers*steps*time.Microsecond); !got.Equal(want) {
		t.Fatalf("after %d concurrent advances Now() = %v, want %v", workers*steps, got, want)
	}
	select {
	case now := <-bad:
		t.Fatalf("a reader saw %v, which the clock never read", now)
	default:
	}
}

func TestSystemClock(t *testing.T) {
	// The system clock may read to the microsecond only: compare in µs.
	for range 1000 {
		before := time.Now().UnixMicro()
		got := core.SystemClock().Now().UnixMicro()
		if after := time.Now().UnixMicro(); got < before || got > after {
			t.Fatalf("SystemClock.Now() = %d µs, outside [%d, %d]", got, before, after)
		}
	}
	// Readings never go backwards while the wall clock does not.
	prev := core.SystemClock().Now()
	for range 1000 {
		now := core.SystemClock().Now()
		if now.Before(prev) {
			t.Fatalf("SystemClock went back from %v to %v", prev, now)
		}
		prev = now
	}
}
