package algo

import "github.com/ratelimit-go/ratelimit/core"

// Adjust applies core.OpRefund (units < 0, of a charge taken at at) or
// core.OpCharge (units > 0; with at other than now, a renewal of the charge
// taken at at) at now to st, a state of this package, and returns the state
// to store (the zero value when empty). A *Log is adjusted in place. Lua
// does the same in core/redisstore's lua/*_adjust.
func Adjust[S any](p *core.Params, st S, units, at, now int64) S {
	if units > 0 && at != now {
		st = Adjust(p, st, -units, at, now)
	}
	var next any
	switch s := any(st).(type) {
	case GCRAState:
		next = s.adjust(p, units, now)
	case TokenBucketState:
		next = s.adjust(p, units, now)
	case LeakyBucketState:
		next = s.adjust(p, units, now)
	case FixedWindowState:
		next = s.adjust(p, units, at, now)
	case SlidingWindowState:
		next = s.adjust(p, units, at, now)
	case *Log:
		s.adjust(p, units, at, now)
		return st
	default:
		return st
	}
	return next.(S)
}

// maxCount bounds a window's count after a charge, as maxBacklog bounds a
// backlog: both stay exact in a Lua number.
const maxCount = maxBacklog

// addBacklog returns backlog plus units intervals, within [0, maxBacklog],
// without overflowing for any units.
func addBacklog(backlog, units, interval int64) int64 {
	lim := maxBacklog/interval + 1
	units = min(max(units, -lim), lim)
	return min(max(backlog+units*interval, 0), maxBacklog)
}

// adjust applies a refund or a charge to a GCRA state: the arrival time
// moves by units intervals, never before now.
func (s GCRAState) adjust(p *core.Params, units, now int64) GCRAState {
	backlog := int64(0)
	if s.TAT != 0 {
		backlog = rescale(max(s.TAT-now, 0), s.Interval, p.Interval)
	}
	if backlog = addBacklog(backlog, units, p.Interval); backlog == 0 {
		return GCRAState{}
	}
	return GCRAState{TAT: now + backlog, Interval: p.Interval}
}

// adjustQueue moves a bucket's backlog (µs as of last, written at interval
// from) by units intervals, as of max(last, now).
func adjustQueue(p *core.Params, backlog, last, from, units, now int64) (int64, int64) {
	at, b := now, int64(0)
	if backlog > 0 {
		at = max(last, now)
		b = rescale(max(backlog-(at-last), 0), from, p.Interval)
	}
	return addBacklog(b, units, p.Interval), at
}

// adjust applies a refund or a charge to a token bucket: units tokens are
// taken (a charge, even below empty) or given back up to the burst.
func (s TokenBucketState) adjust(p *core.Params, units, now int64) TokenBucketState {
	used, last := adjustQueue(p, s.Used, s.Last, s.Interval, units, now)
	if used == 0 {
		return TokenBucketState{}
	}
	return TokenBucketState{Used: used, Last: last, Interval: p.Interval}
}

// adjust applies a refund or a charge to a leaky bucket: its level moves by
// units, down to empty or above its capacity.
func (s LeakyBucketState) adjust(p *core.Params, units, now int64) LeakyBucketState {
	level, last := adjustQueue(p, s.Level, s.Last, s.Interval, units, now)
	if level == 0 {
		return LeakyBucketState{}
	}
	return LeakyBucketState{Level: level, Last: last, Interval: p.Interval}
}

// adjust applies a refund or a charge to a fixed window: a charge adds to
// the current window's count, past the limit; a refund takes from it only
// while at lies in that window.
func (s FixedWindowState) adjust(p *core.Params, units, at, now int64) FixedWindowState {
	start, end, n := s.view(p, now)
	if units < 0 {
		if at < start || at >= end {
			return s // the charge's window is over, or not begun
		}
		n = max(n+units, 0)
	} else {
		n = min(n+min(units, maxCount), maxCount)
	}
	if n == 0 {
		return FixedWindowState{}
	}
	return FixedWindowState{Start: start, Count: n}
}

// adjust applies a refund or a charge to a sliding window counter: a charge
// adds to the current window's count; a refund takes from the count of the
// window at fell in, the current one or the one before, and from none once
// that window no longer counts.
func (s SlidingWindowState) adjust(p *core.Params, units, at, now int64) SlidingWindowState {
	w, _, prev, curr := swView(p, s, now)
	switch {
	case units > 0:
		curr = min(curr+min(units, maxCount), maxCount)
	case at >= w.start && at < w.start+w.lc:
		curr = max(curr+units, 0)
	case at >= w.start-w.lp && at < w.start:
		prev = max(prev+units, 0)
	default:
		return s
	}
	if prev == 0 && curr == 0 {
		return SlidingWindowState{}
	}
	return SlidingWindowState{Start: w.start, Prev: prev, Curr: curr}
}

// adjust applies a refund or a charge to a sliding log in place: a charge
// appends units entries at now, keeping the newest Limit; a refund removes
// up to -units entries at the first timestamp at or after at, and nothing
// once that charge has left the window.
func (l *Log) adjust(p *core.Params, units, at, now int64) {
	if units > 0 {
		ts := now
		if l.n > 0 {
			ts = max(now, l.newest())
			l.dropThrough(now - p.Window)
		}
		l.push(ts, int(min(units, p.Limit)), int(p.Limit))
		if extra := l.n - int(p.Limit); extra > 0 {
			l.head = l.ring(extra)
			l.n -= extra
		}
		return
	}
	if at+p.Window <= now { // that charge has left the window: the entries left are others'
		return
	}
	i := l.firstAfter(at - 1)
	if i == l.n {
		return
	}
	ts, k := l.at(i), 0
	for i+k < l.n && k < int(min(-units, int64(l.n))) && l.at(i+k) == ts {
		k++
	}
	// Shift the entries after the removed ones back by k.
	for j := i; j+k < l.n; j++ {
		l.buf[l.ring(j)] = l.at(j + k)
	}
	l.n -= k
	if l.n == 0 {
		l.head = 0
	}
}
