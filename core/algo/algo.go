package algo

import (
	"math"
	"math/bits"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// Answer is an algorithm's answer, in units and microseconds (see
// core.Decision). Wait is RetryAfter when denied and Delay when admitted.
type Answer struct {
	Allowed    bool
	Remaining  int64
	Wait       int64
	ResetAfter int64
}

// Fill writes the outcome into every field of d as the decision for p.
func (o Answer) Fill(d *core.Decision, p *core.Policy) {
	d.Allowed, d.Limit, d.Remaining = o.Allowed, p.Limit, int(o.Remaining)
	wait := time.Duration(o.Wait) * time.Microsecond
	if o.Allowed {
		d.RetryAfter, d.Delay = 0, wait
	} else {
		d.RetryAfter, d.Delay = wait, 0
	}
	d.ResetAfter = time.Duration(o.ResetAfter) * time.Microsecond
	d.Source = core.SourcePrimary
}

// windowStart returns floor(now/window)*window, also for negative now.
func windowStart(now, window int64) int64 {
	m := now % window
	if m < 0 {
		m += window
	}
	return now - m
}

// FixedWindowState is the count of units admitted in the window starting at
// Start. The zero value is an empty key.
type FixedWindowState struct {
	Start int64
	Count int64
}

// FixedWindow admits a check when the units admitted in the current window
// plus cost fit in Limit; RetryAfter and ResetAfter are the window's end.
func FixedWindow(p *core.Params, st FixedWindowState, cost, now int64) (Answer, FixedWindowState) {
	start, end, n := st.view(p, now)
	if n+cost <= p.Limit {
		n += cost
		o := Answer{Allowed: true, Remaining: p.Limit - n}
		if n > 0 {
			o.ResetAfter = end - now
		}
		return o, FixedWindowState{Start: start, Count: n}
	}
	return Answer{Remaining: max(p.Limit-n, 0), Wait: end - now, ResetAfter: end - now}, st
}

// view returns the window a check at now works in and its count.
func (st FixedWindowState) view(p *core.Params, now int64) (start, end, n int64) {
	if p.Window > 0 { // the usual case, inline
		start = windowStart(now, p.Window)
		end = start + p.Window
	} else {
		start, end = p.Bounds(now)
	}
	if st.Count > 0 {
		if st.Start > start { // caller's clock is behind: stay in the newest window
			start, end = p.Bounds(st.Start)
		}
		if st.Start == start {
			n = st.Count
		}
	}
	return start, end, n
}

// SlidingWindowState holds the counts of the window starting at Start and of
// the window before it. The zero value is an empty key.
type SlidingWindowState struct {
	Start int64
	Prev  int64
	Curr  int64
}

// swEstimate is prev weighted by the part of the previous window (of length
// window) still inside a trailing window as long, plus curr: the same IEEE
// operations in the same order as Lua's. Without a previous count it is
// curr exactly, found without a division.
func swEstimate(prev, curr, window, elapsed int64) float64 {
	if elapsed >= window || prev == 0 {
		return float64(curr)
	}
	return float64(prev)*float64(window-elapsed)/float64(window) + float64(curr)
}

// swWindow is a sliding window check's window: it starts at start and
// lasts lc; the one before lasted lp and the next lasts ln.
type swWindow struct{ start, lc, lp, ln int64 }

// swWindowAt returns the window holding now.
func swWindowAt(p *core.Params, now int64) swWindow {
	if w := p.Window; w > 0 {
		return swWindow{windowStart(now, w), w, w, w}
	}
	start, end := p.Bounds(now)
	prev, _ := p.Bounds(start - 1)
	_, next := p.Bounds(end)
	return swWindow{start, end - start, start - prev, next - end}
}

// swFits reports whether cost more units fit under limit at that offset.
func swFits(prev, curr, window, elapsed, cost, limit int64) bool {
	return swEstimate(prev, curr, window, elapsed)+float64(cost) <= float64(limit)
}

// swFirstFit returns the smallest offset e in [lo, hi] at which cost fits,
// or hi+1 if none. Without a previous count the estimate stays put (with a
// negative one it grows), so lo answers for every offset. Otherwise it falls
// linearly: the first fit is exact arithmetic's where swExact holds, else a
// guess checked by two evaluations, finished by a binary search on the side
// the check points to when rounding puts the guess off.
func swFirstFit(prev, curr, window, lo, hi, cost, limit int64) int64 {
	if lo > hi || prev <= 0 {
		if lo <= hi && !swFits(prev, curr, window, lo, cost, limit) {
			return hi + 1
		}
		return lo
	}
	if swExact(prev, curr, window, cost, limit) {
		if t := limit - curr - cost; t >= 0 {
			return min(max(window-int64(uint64(t)*uint64(window)/uint64(prev)), lo), hi+1)
		}
		return hi + 1
	}
	g := float64(window) - math.Floor(float64(limit-curr-cost)*float64(window)/float64(prev))
	e := hi + 1 // g clamped to [lo, hi+1] before converting
	if g < float64(e) {
		e = lo
		if g > float64(lo) {
			e = int64(g)
		}
	}
	if e <= hi && !swFits(prev, curr, window, e, cost, limit) {
		return swSearch(prev, curr, window, e+1, hi, cost, limit)
	}
	if e == lo || !swFits(prev, curr, window, e-1, cost, limit) {
		return e
	}
	return swSearch(prev, curr, window, lo, e-1, cost, limit) // e-1 fits too
}

// swExact reports whether swFits decides every offset e as exact arithmetic
// does (cost fits when prev*(window-e) <= t*window, t = limit-curr-cost):
// with prev*window below 2^53 the product is exact, and with
// window*8*ulp(2*limit) <= 1 no rounding moves a quotient across t, which an
// unfit one exceeds by 1/window (TestSwExactAgreesWithFloat).
func swExact(prev, curr, window, cost, limit int64) bool {
	lw := bits.Len64(uint64(window))
	return 0 <= curr && curr <= limit && 0 <= cost && bits.Len64(uint64(prev))+lw <= 53 && bits.Len64(uint64(limit))+lw <= 49
}

// swSearch is swFirstFit by binary search alone (the estimate only falls as
// the offset grows).
func swSearch(prev, curr, window, lo, hi, cost, limit int64) int64 {
	for lo <= hi {
		mid := lo + (hi-lo)/2
		if swFits(prev, curr, window, mid, cost, limit) {
			hi = mid - 1
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// swReset is the time from now until both counts have slid out.
func swReset(w swWindow, prev, curr, now int64) int64 {
	switch {
	case curr > 0:
		return w.start + 2*w.lc - now
	case prev > 0:
		return max(w.start+w.lp-now, 0)
	}
	return 0
}

// swView is the key's window and counts as seen at now (at: later than now
// when the caller's clock is behind the state's).
func swView(p *core.Params, st SlidingWindowState, now int64) (w swWindow, at, prev, curr int64) {
	w, at = swWindowAt(p, now), now
	if st.Prev != 0 || st.Curr != 0 {
		if st.Start > w.start { // caller's clock is behind
			w, at = swWindow{st.Start, w.ln, w.lc, w.ln}, st.Start
		}
		switch st.Start {
		case w.start:
			prev, curr = st.Prev, st.Curr
		case w.start - w.lp:
			prev = st.Curr
		}
	}
	return w, at, prev, curr
}

// SlidingWindow is the sliding window counter: it admits a check when the
// estimate (swEstimate) plus cost is at most Limit. On a calendar, window is
// the previous window's own length. A denial's RetryAfter is the first
// microsecond at which the estimate has fallen enough for cost, in the
// current window, the next one, or at the start of the one after, where
// both counts are out.
func SlidingWindow(p *core.Params, st SlidingWindowState, cost, now int64) (Answer, SlidingWindowState) {
	limit := p.Limit
	w, at, prev, curr := swView(p, st, now)
	est := swEstimate(prev, curr, w.lp, at-w.start)
	if est+float64(cost) <= float64(limit) {
		o := Answer{Allowed: true, Remaining: floorNonNeg(float64(limit) - est - float64(cost))}
		curr += cost
		o.ResetAfter = swReset(w, prev, curr, now)
		return o, SlidingWindowState{Start: w.start, Prev: prev, Curr: curr}
	}
	o := Answer{Remaining: floorNonNeg(float64(limit) - est), ResetAfter: swReset(w, prev, curr, now)}
	if e := swFirstFit(prev, curr, w.lp, at-w.start+1, w.lc-1, cost, limit); e < w.lc {
		o.Wait = w.start + e - now
	} else { // next window: the current count becomes the previous one
		o.Wait = w.start + w.lc + swFirstFit(curr, 0, w.lc, 0, w.ln-1, cost, limit) - now
	}
	return o, st
}

func floorNonNeg(x float64) int64 {
	if x <= 0 {
		return 0
	}
	return int64(x) // truncation is floor for x > 0
}

// TokenBucketState is how far the bucket is from full, in microseconds of
// refill (one unit is Interval), as of Last. The zero value is a full
// bucket.
type TokenBucketState struct {
	Used int64
	Last int64
	// Interval is the policy's Interval when the state was written; 0 (a
	// state of an earlier version) reads as the current one. See rescale.
	Interval int64
}

// maxBacklog bounds a rescaled backlog: core's bound on Burst*Interval,
// so that now plus it stays exact.
const maxBacklog = 1_000_000_000_000_000

// rescale returns backlog, microseconds of from-interval units, as the same
// units at interval to: a policy whose limit changed keeps the units a
// client used, not the time they take. A part of a unit counts whole, so a
// change never forgives usage; the result is at most maxBacklog. A from of 0
// (a state written before intervals were stored) is to.
func rescale(backlog, from, to int64) int64 {
	if from == to || from == 0 || backlog <= 0 {
		return backlog
	}
	return min((backlog+from-1)/from, maxBacklog/to) * to
}

// TokenBucket holds Burst units and refills one unit every Interval. A check
// is admitted when cost units are in the bucket.
func TokenBucket(p *core.Params, st TokenBucketState, cost, now int64) (Answer, TokenBucketState) {
	last, used := now, int64(0)
	if st.Used > 0 { // a zero Used is a full bucket whatever Last says, also before 1970
		last = max(st.Last, now)
		used = rescale(max(st.Used-(last-st.Last), 0), st.Interval, p.Interval)
	}
	need := cost * p.Interval
	if used+need <= p.Tolerance {
		used += need
		return Answer{Allowed: true, Remaining: (p.Tolerance - used) / p.Interval, ResetAfter: resetAt(last, used, now)},
			TokenBucketState{Used: used, Last: last, Interval: p.Interval}
	}
	return Answer{
		Remaining:  max(p.Tolerance-used, 0) / p.Interval, // used exceeds a lowered capacity
		Wait:       last + used + need - p.Tolerance - now,
		ResetAfter: resetAt(last, used, now),
	}, st
}

func resetAt(last, used, now int64) int64 {
	if used == 0 {
		return 0
	}
	return last + used - now
}

// GCRAState is the theoretical arrival time (TAT) of the next unit, in
// microseconds. The zero value is an empty key.
type GCRAState struct {
	TAT int64
	// Interval is the policy's Interval when the state was written; 0 (a
	// state of an earlier version) reads as the current one. See rescale.
	Interval int64
}

// GCRA keeps the theoretical arrival time (TAT) of the next unit. A check of
// cost units moves it to max(tat, now) + cost*Interval and is admitted when
// that lies at most Tolerance (Burst*Interval) ahead of now. A zero TAT is an
// empty key; the returned state is the one to store.
func GCRA(p *core.Params, st GCRAState, cost, now int64) (Answer, GCRAState) {
	tat := st.TAT
	base := now
	if tat != 0 { // zero is an empty key, also before 1970
		base = now + rescale(max(tat-now, 0), st.Interval, p.Interval)
	}
	newTat := base + cost*p.Interval
	allowAt := newTat - p.Tolerance
	if allowAt <= now {
		return Answer{Allowed: true, Remaining: max(p.Tolerance-(newTat-now), 0) / p.Interval, ResetAfter: newTat - now}, GCRAState{TAT: newTat, Interval: p.Interval}
	}
	return Answer{
		Remaining:  max(p.Tolerance-(base-now), 0) / p.Interval,
		Wait:       allowAt - now,
		ResetAfter: base - now,
	}, st
}

// LeakyBucketState is the queue's backlog in microseconds of draining (one
// unit is Interval), as of Last. The zero value is an empty queue.
type LeakyBucketState struct {
	Level int64
	Last  int64
	// Interval is the policy's Interval when the state was written; 0 (a
	// state of an earlier version) reads as the current one. See rescale.
	Interval int64
}

// LeakyBucket is the queue form: a check joins a queue of Burst units that
// drains one unit every Interval, and is admitted when there is room and,
// with a MaxDelay, when it would wait at most MaxDelay. Delay is the time the
// admitted request waits for the units queued before it, so that admitted
// requests leave at a constant rate. Remaining counts the unit checks that
// would still be admitted now.
func LeakyBucket(p *core.Params, st LeakyBucketState, cost, now int64) (Answer, LeakyBucketState) {
	last, backlog := now, int64(0)
	if st.Level > 0 { // a zero Level is an empty queue whatever Last says, also before 1970
		last = max(st.Last, now)
		backlog = rescale(max(st.Level-(last-st.Last), 0), st.Interval, p.Interval)
	}
	// room is the backlog a unit check may find and still pass: the queue's
	// capacity less one unit, and at most MaxDelay of waiting.
	room := p.Tolerance - p.Interval
	if p.MaxDelay > 0 {
		room = min(room, p.MaxDelay-(last-now))
	}
	need := cost * p.Interval
	wait := last + backlog - now
	if backlog+need <= p.Tolerance && (p.MaxDelay == 0 || wait <= p.MaxDelay) {
		level := backlog + need
		return Answer{
			Allowed:    true,
			Remaining:  leakyRemaining(room, level, p.Interval),
			ResetAfter: resetAt(last, level, now),
			Wait:       wait,
		}, LeakyBucketState{Level: level, Last: last, Interval: p.Interval}
	}
	retry := wait + need - p.Tolerance // until the queue has room
	if p.MaxDelay > 0 {
		retry = max(retry, wait-p.MaxDelay) // until the wait is within MaxDelay
	}
	return Answer{
		Remaining:  leakyRemaining(room, backlog, p.Interval),
		Wait:       retry,
		ResetAfter: resetAt(last, backlog, now),
	}, st
}

// leakyRemaining is the number of unit checks admitted one after another
// from a backlog of level, each needing the backlog it finds to be at most
// room: floor((room-level)/interval)+1, and 0 when level already exceeds
// room (also when a lowered capacity left it so).
func leakyRemaining(room, level, interval int64) int64 {
	if level > room {
		return 0
	}
	return (room-level)/interval + 1
}
