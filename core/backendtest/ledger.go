package backendtest

import (
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// ledger records every admission of a forward trace per key and policy and
// checks it against what the algorithm may admit, independently of any
// backend's arithmetic: at most Limit units per aligned window (fixed and
// sliding window) or trailing window (sliding log), and units*Interval <=
// span + Burst*Interval between two admissions (token bucket, GCRA, leaky
// bucket).
type ledger struct {
	entries map[stateKey][]admission
}

type admission struct {
	at   int64 // microseconds
	cost int64
}

func newLedger() *ledger { return &ledger{entries: make(map[stateKey][]admission)} }

// reset forgets the key's history under the step's policies, as the backend
// did.
func (l *ledger) reset(s Step) {
	for _, p := range s.Policies {
		delete(l.entries, stateKey{s.Key, p.Identity()})
	}
}

// admit records an admitted check of s at now and reports a violation.
func (l *ledger) admit(s Step, now time.Time) error {
	at := now.UnixMicro()
	for _, p := range s.Policies {
		pr, err := p.Params()
		if err != nil {
			return err
		}
		k := stateKey{s.Key, p.Identity()}
		h := append(l.entries[k], admission{at: at, cost: int64(s.Cost)})
		l.entries[k] = h
		switch pr.Algorithm {
		case core.FixedWindow, core.SlidingWindow:
			start, _ := pr.Bounds(at)
			var n int64
			for _, a := range h {
				if a.at >= start {
					n += a.cost
				}
			}
			if n > pr.Limit {
				return fmt.Errorf("%s admitted %d units in the window starting at %d µs", p, n, start)
			}
		case core.SlidingLog:
			var n int64
			for _, a := range h {
				if a.at > at-pr.Window {
					n += a.cost
				}
			}
			if n > pr.Limit {
				return fmt.Errorf("sliding log %s admitted %d units in the trailing window ending at %d µs", p, n, at)
			}
		case core.TokenBucket, core.GCRA, core.LeakyBucket:
			var units int64
			for i := len(h) - 1; i >= 0; i-- {
				units += h[i].cost
				if units*pr.Interval > at-h[i].at+pr.Tolerance {
					return fmt.Errorf("%s admitted %d units between %d µs and %d µs, more than its burst and rate allow", p, units, h[i].at, at)
				}
			}
		}
	}
	return nil
}
