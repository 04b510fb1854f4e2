package algo

import "github.com/ratelimit-go/ratelimit/core"

// Expiry instants: the first instant at which a stored state means the same
// as an absent one (now + ResetAfter of the check that stored it).

// ExpiresAt returns when the GCRA state can be dropped: its TAT.
func (s GCRAState) ExpiresAt(*core.Params) int64 { return s.TAT }

// ExpiresAt returns when the fixed window state can be dropped.
func (s FixedWindowState) ExpiresAt(p *core.Params) int64 {
	_, end := p.Bounds(s.Start)
	return end
}

// ExpiresAt returns when the sliding window state can be dropped.
func (s SlidingWindowState) ExpiresAt(p *core.Params) int64 {
	return s.Start + swReset(swWindowAt(p, s.Start), s.Prev, s.Curr, s.Start)
}

// ExpiresAt returns when the token bucket is full again.
func (s TokenBucketState) ExpiresAt(*core.Params) int64 { return s.Last + s.Used }

// ExpiresAt returns when the leaky bucket's queue is empty.
func (s LeakyBucketState) ExpiresAt(*core.Params) int64 { return s.Last + s.Level }

// ExpiresAt returns when every entry of the log has left the window.
func (l *Log) ExpiresAt(p *core.Params) int64 { return l.newest() + p.Window }
