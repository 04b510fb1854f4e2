package algo

// Expiry instants: the first instant at which a stored state means the same
// as an absent one, so a store may drop it. They equal now + ResetAfter of
// the check that stored the state.

// ExpiresAt returns when the fixed window state can be dropped.
func (s FixedWindowState) ExpiresAt(window int64) int64 { return s.Start + window }

// ExpiresAt returns when the sliding window state can be dropped.
func (s SlidingWindowState) ExpiresAt(window int64) int64 {
	if s.Curr > 0 {
		return s.Start + 2*window
	}
	return s.Start + window
}

// ExpiresAt returns when the token bucket is full again.
func (s TokenBucketState) ExpiresAt() int64 { return s.Last + s.Used }

// ExpiresAt returns when the leaky bucket's queue is empty.
func (s LeakyBucketState) ExpiresAt() int64 { return s.Last + s.Level }

// ExpiresAt returns when every entry of the log has left the window.
func (l *Log) ExpiresAt(window int64) int64 { return l.Newest() + window }
