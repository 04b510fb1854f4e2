package algo

import "github.com/ratelimit-go/ratelimit/core"

// Log is the state of a sliding-log key: the timestamps of admitted units,
// oldest first, in a ring buffer that never holds more than the policy's
// Limit entries. The zero value is an empty log. A Log is not safe for
// concurrent use; its owner serialises access.
type Log struct {
	buf  []int64
	head int // index of the oldest entry
	n    int
}

// Len returns the number of entries.
func (l *Log) Len() int { return l.n }

// ring returns the buffer index of the i-th oldest entry, for i up to
// len(buf), without a division.
func (l *Log) ring(i int) int {
	if i += l.head; i >= len(l.buf) {
		i -= len(l.buf)
	}
	return i
}

// at returns the i-th oldest entry.
func (l *Log) at(i int) int64 { return l.buf[l.ring(i)] }

// newest returns the newest entry, or 0 for an empty log.
func (l *Log) newest() int64 {
	if l.n == 0 {
		return 0
	}
	return l.at(l.n - 1)
}

// firstAfter returns the index of the oldest entry greater than cutoff.
func (l *Log) firstAfter(cutoff int64) int {
	lo, hi := 0, l.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if l.at(mid) <= cutoff {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// dropThrough removes the entries at or before cutoff.
func (l *Log) dropThrough(cutoff int64) {
	k := l.firstAfter(cutoff)
	if k == 0 {
		return
	}
	l.head = l.ring(k)
	l.n -= k
	if l.n == 0 {
		l.head = 0
	}
}

// push appends count entries of ts, growing the buffer up to limit entries.
func (l *Log) push(ts int64, count int, limit int) {
	if need := l.n + count; need > len(l.buf) {
		size := max(2*len(l.buf), need, 4)
		size = min(size, max(limit, need))
		nb := make([]int64, size)
		for i := 0; i < l.n; i++ {
			nb[i] = l.at(i)
		}
		l.buf, l.head = nb, 0
	}
	for range count {
		l.buf[l.ring(l.n)] = ts
		l.n++
	}
}

// SlidingLog admits a check when the entries newer than now-Window plus
// cost fit in Limit, and returns the timestamp admitted units are recorded
// at (now, or the newest entry if the caller's clock is behind). It does not
// modify the log: CommitSlidingLog records an admitted check.
func SlidingLog(p *core.Params, l *Log, cost, now int64) (Answer, int64) {
	cutoff := now - p.Window
	first := l.firstAfter(cutoff)
	n := int64(l.n - first)
	ts := now
	if l.n > 0 { // an empty log has no newest entry, also before 1970
		ts = max(now, l.newest())
	}
	if n+cost <= p.Limit {
		o := Answer{Allowed: true, Remaining: p.Limit - n - cost}
		switch {
		case cost > 0:
			o.ResetAfter = ts + p.Window - now
		case n > 0:
			o.ResetAfter = l.newest() + p.Window - now
		}
		return o, ts
	}
	k := n + cost - p.Limit // entries that must leave the window first
	o := Answer{
		Remaining:  max(p.Limit-n, 0), // more entries than a lowered limit
		Wait:       l.at(first+int(k)-1) + p.Window - now,
		ResetAfter: l.newest() + p.Window - now,
	}
	return o, ts
}

// CommitSlidingLog records an admitted check: it drops the entries that have
// left the window at now and appends cost entries at ts (from SlidingLog).
func CommitSlidingLog(p *core.Params, l *Log, cost, ts, now int64) {
	if l.n > 0 {
		l.dropThrough(now - p.Window)
	}
	l.push(ts, int(cost), int(p.Limit))
}

// Compact drops the entries that have left the window at now and shrinks the
// buffer when it is mostly empty, returning memory of idle keys.
func (l *Log) Compact(window, now int64) {
	if l.n > 0 {
		l.dropThrough(now - window)
	}
	if len(l.buf) > 8 && l.n < len(l.buf)/4 {
		nb := make([]int64, max(l.n*2, 4))
		for i := 0; i < l.n; i++ {
			nb[i] = l.at(i)
		}
		l.buf, l.head = nb, 0
	}
}
