package algo

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/ratelimit-go/ratelimit/core"
)

const maxWindow = 366 * 24 * time.Hour

const sec = int64(time.Second / time.Microsecond)

func TestWindowStart(t *testing.T) {
	t.Parallel()
	tests := []struct{ now, window, want int64 }{
		{0, 10, 0}, {9, 10, 0}, {10, 10, 10}, {-1, 10, -10}, {-10, 10, -10}, {-11, 10, -20},
		{year2100 + 7, 60 * sec, year2100 - year2100%(60*sec)},
	}
	for _, tt := range tests {
		if got := windowStart(tt.now, tt.window); got != tt.want {
			t.Errorf("windowStart(%d, %d) = %d, want %d", tt.now, tt.window, got, tt.want)
		}
	}
}

func TestFixedWindow(t *testing.T) {
	t.Parallel()
	p := mustParams(t, core.Policy{Limit: 3, Window: time.Minute, Algorithm: core.FixedWindow})
	w := p.Window
	base := windowStart(unix2023, w)
	m := newMachine(t, p)
	if o := m.commit(2, base+10); !o.Allowed || o.Remaining != 1 || o.ResetAfter != w-10 {
		t.Fatalf("first check: %+v", o)
	}
	if o := m.decide(0, base+20); !o.Allowed || o.Remaining != 1 || o.ResetAfter != w-20 {
		t.Fatalf("cost 0 evaluates without consuming: %+v", o)
	}
	if o := m.commit(2, base+30); o.Allowed || o.Remaining != 1 || o.retryAfter() != w-30 || o.ResetAfter != w-30 {
		t.Fatalf("over the limit: %+v, want a denial until the window ends", o)
	}
	if o := m.commit(1, base+w-1); !o.Allowed || o.Remaining != 0 || o.ResetAfter != 1 {
		t.Fatalf("last unit at the window's last microsecond: %+v", o)
	}
	// The edge: a fresh window admits the whole limit again one microsecond
	// later, so 2x Limit passes within two microseconds. This is the
	// algorithm's documented cost, pinned here.
	for i := range 3 {
		if o := m.commit(1, base+w); !o.Allowed || o.Remaining != int64(2-i) {
			t.Fatalf("unit %d at the next window: %+v", i, o)
		}
	}
	if o := m.commit(1, base+w); o.Allowed || o.retryAfter() != w {
		t.Fatalf("fourth unit at the window start: %+v, want RetryAfter of a whole window", o)
	}
	// A caller one window behind counts in the newest window: no fresh quota.
	if o := m.commit(1, base+5); o.Allowed || o.retryAfter() != 2*w-5 || o.Remaining != 0 {
		t.Fatalf("clock a window behind: %+v, want a denial until the newest window ends on its own clock", o)
	}
}

func TestFixedWindowNegativeTime(t *testing.T) {
	t.Parallel()
	p := mustParams(t, core.Policy{Limit: 1, Window: time.Second, Algorithm: core.FixedWindow})
	m := newMachine(t, p)
	if o := m.commit(1, -1); !o.Allowed || o.ResetAfter != 1 {
		t.Fatalf("at -1µs: %+v, want the window [-1s, 0) ending in 1µs", o)
	}
	if o := m.commit(1, -1); o.Allowed || o.retryAfter() != 1 {
		t.Fatalf("second unit at -1µs: %+v", o)
	}
	if o := m.commit(1, 0); !o.Allowed {
		t.Fatalf("at the epoch, a new window: %+v", o)
	}
}

func TestSlidingWindow(t *testing.T) {
	t.Parallel()
	p := mustParams(t, core.Policy{Limit: 10, Window: 10 * time.Second, Algorithm: core.SlidingWindow})
	w := p.Window
	base := windowStart(unix2023, w)
	m := newMachine(t, p)
	if o := m.commit(10, base+w/2); !o.Allowed || o.Remaining != 0 || o.ResetAfter != 2*w-w/2 {
		t.Fatalf("fill the window: %+v", o)
	}
	// At 30% into the next window the estimate is 10*0.7 = 7: three fit.
	at := base + w + 3*w/10
	if o := m.decide(3, at); !o.Allowed || o.Remaining != 0 {
		t.Fatalf("estimate 7 + 3: %+v", o)
	}
	// Four fit once 10*(1-e/w) <= 6, at e = 40%: RetryAfter is that instant.
	o := m.decide(4, at)
	if o.Allowed || o.retryAfter() != w/10 || o.Remaining != 3 || o.ResetAfter != w-3*w/10 {
		t.Fatalf("estimate 7 + 4: %+v, want RetryAfter %d", o, w/10)
	}
	if m.decide(4, at+o.retryAfter()-1).Allowed || !m.decide(4, at+o.retryAfter()).Allowed {
		t.Fatal("RetryAfter is not the first microsecond that fits")
	}
}

// When the current window is full, RetryAfter is found in the next window.
func TestSlidingWindowRetryInNextWindow(t *testing.T) {
	t.Parallel()
	p := mustParams(t, core.Policy{Limit: 4, Window: 4 * time.Second, Algorithm: core.SlidingWindow})
	w := p.Window
	base := windowStart(unix2023, w)
	m := newMachine(t, p)
	m.commit(4, base+w-1)
	// At base+w-1 the current window holds 4; in the next window the
	// estimate is 4*(1-e/w) and 2 units fit when it reaches 2, at e = w/2.
	o := m.decide(2, base+w-1)
	if o.Allowed || o.retryAfter() != 1+w/2 {
		t.Fatalf("%+v, want RetryAfter %d", o, 1+w/2)
	}
	// A whole capacity fits only once the window has fully slid out.
	if o := m.decide(4, base+w-1); o.Allowed || o.retryAfter() != 1+w {
		t.Fatalf("full capacity: %+v, want RetryAfter %d", o, 1+w)
	}
}

func TestTokenBucket(t *testing.T) {
	t.Parallel()
	// 10 per second, burst 5: one unit every 100ms.
	p := mustParams(t, core.Policy{Limit: 10, Window: time.Second, Burst: 5, Algorithm: core.TokenBucket})
	iv := p.Interval
	now := int64(unix2023)
	m := newMachine(t, p)
	if o := m.commit(5, now); !o.Allowed || o.Remaining != 0 || o.ResetAfter != 5*iv {
		t.Fatalf("empty the bucket: %+v", o)
	}
	if o := m.commit(2, now+iv/2); o.Allowed || o.retryAfter() != 2*iv-iv/2 || o.Remaining != 0 {
		t.Fatalf("two more after half an interval: %+v, want RetryAfter %d", o, 2*iv-iv/2)
	}
	if o := m.commit(2, now+2*iv); !o.Allowed || o.Remaining != 0 || o.ResetAfter != 5*iv {
		t.Fatalf("after two intervals: %+v", o)
	}
	// A caller 1s behind sees the bucket as of the stored instant: no
	// refill for the time it lags, and a RetryAfter exact on its own clock.
	lag := now + 2*iv - sec
	if o := m.commit(1, lag); o.Allowed || o.retryAfter() != sec+iv {
		t.Fatalf("lagging caller: %+v, want RetryAfter %d", o, sec+iv)
	}
	if o := m.decide(0, now+2*iv+5*iv); !o.Allowed || o.Remaining != 5 || o.ResetAfter != 0 {
		t.Fatalf("full again: %+v", o)
	}
}

func TestGCRA(t *testing.T) {
	t.Parallel()
	// 2 per second, burst 3: interval 500ms, tolerance 1.5s.
	p := mustParams(t, core.Policy{Limit: 2, Window: time.Second, Burst: 3, Algorithm: core.GCRA})
	iv := p.Interval
	now := int64(unix2023)
	var tat GCRAState
	var o Answer
	for i := range 3 {
		if o, tat = GCRA(p, tat, 1, now); !o.Allowed || o.Remaining != int64(2-i) || o.ResetAfter != int64(i+1)*iv {
			t.Fatalf("unit %d: %+v", i, o)
		}
	}
	if tat.TAT != now+3*iv {
		t.Fatalf("tat = %d, want now+3 intervals", tat.TAT-now)
	}
	if o, _ = GCRA(p, tat, 1, now); o.Allowed || o.retryAfter() != iv || o.ResetAfter != 3*iv {
		t.Fatalf("fourth unit: %+v", o)
	}
	if o, _ = GCRA(p, tat, 2, now+iv/2); o.Allowed || o.retryAfter() != 2*iv-iv/2 {
		t.Fatalf("two units: %+v", o)
	}
	// Before 1970 an empty key is still empty.
	if o, tat = GCRA(p, GCRAState{}, 3, -year2100); !o.Allowed || tat.TAT != -year2100+3*iv {
		t.Fatalf("empty key before 1970: %+v, tat %d", o, tat)
	}
}

// GCRA is the token bucket's meter form: both decide the same over any
// schedule.
func TestGCRAMatchesTokenBucket(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 5))
	for round := range rounds {
		pol := randomPolicy(r, core.GCRA)
		pg := mustParams(t, pol)
		pol.Algorithm = core.TokenBucket
		pt := mustParams(t, pol)
		g, tb := newMachine(t, pg), newMachine(t, pt)
		for i, s := range schedule(r, pg, unix2023, 40) {
			og, ot := g.commit(s.cost, s.now), tb.commit(s.cost, s.now)
			if og != ot {
				t.Fatalf("round %d step %d %+v cost %d: GCRA %+v, token bucket %+v", round, i, pol, s.cost, og, ot)
			}
		}
	}
}

func TestLeakyBucketShapes(t *testing.T) {
	t.Parallel()
	// 4 per second, queue of 3: drains one unit every 250ms.
	p := mustParams(t, core.Policy{Limit: 4, Window: time.Second, Burst: 3, Algorithm: core.LeakyBucket})
	iv := p.Interval
	now := int64(unix2023)
	m := newMachine(t, p)
	for i := range 3 {
		o := m.commit(1, now)
		if !o.Allowed || o.delay() != int64(i)*iv || o.Remaining != int64(2-i) || o.ResetAfter != int64(i+1)*iv {
			t.Fatalf("request %d: %+v, want Delay %d", i, o, int64(i)*iv)
		}
	}
	if o := m.commit(1, now); o.Allowed || o.delay() != 0 || o.retryAfter() != iv {
		t.Fatalf("queue full: %+v", o)
	}
	// One and a half intervals later the next request waits for the rest
	// of the backlog.
	if o := m.commit(1, now+iv+iv/2); !o.Allowed || o.delay() != 3*iv-(iv+iv/2) {
		t.Fatalf("after draining: %+v, want Delay %d", o, 3*iv-(iv+iv/2))
	}
	// At now+3 intervals one unit is still queued: three do not fit until
	// it has drained.
	if o := m.commit(3, now+3*iv); o.Allowed || o.retryAfter() != iv || o.Remaining != 2 {
		t.Fatalf("three units into a queue holding one: %+v", o)
	}
}

func TestSlidingLog(t *testing.T) {
	t.Parallel()
	p := mustParams(t, core.Policy{Limit: 3, Window: 10 * time.Second, Algorithm: core.SlidingLog})
	w := p.Window
	now := int64(unix2023)
	m := newMachine(t, p)
	// Two units in the same microsecond are both recorded.
	if o := m.commit(1, now); !o.Allowed || o.Remaining != 2 {
		t.Fatalf("first: %+v", o)
	}
	if o := m.commit(1, now); !o.Allowed || o.Remaining != 1 {
		t.Fatalf("second in the same µs: %+v", o)
	}
	if o := m.commit(1, now+5*sec); !o.Allowed || o.Remaining != 0 || o.ResetAfter != w {
		t.Fatalf("third: %+v", o)
	}
	// Room for two needs both entries at now to leave: at now+w (entries at
	// or before now-w are out of the trailing window).
	if o := m.decide(2, now+sec); o.Allowed || o.retryAfter() != w-sec || o.ResetAfter != 5*sec+w-sec {
		t.Fatalf("two more: %+v", o)
	}
	if o := m.decide(3, now+w); o.Allowed || o.retryAfter() != 5*sec {
		t.Fatalf("three at now+w: %+v", o)
	}
	if o := m.decide(2, now+w); !o.Allowed || o.Remaining != 0 {
		t.Fatalf("two at now+w: %+v", o)
	}
	if o := m.decide(2, now+w-1); o.Allowed || o.retryAfter() != 1 {
		t.Fatalf("two at now+w-1: %+v", o)
	}
}

// The log never holds more than Limit entries, however the checks come, and
// Compact gives memory back once entries leave the window.
func TestLogGrowthBoundedAndCompact(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(6, 6))
	for _, limit := range []int{1, 3, 4, 9, 100, 1000} {
		p := mustParams(t, core.Policy{Limit: limit, Window: time.Second, Algorithm: core.SlidingLog})
		l := new(Log)
		now := int64(unix2023)
		for range 20 * limit {
			now += r.Int64N(2 * p.Window / p.Limit)
			cost := 1 + r.Int64N(min(p.Limit, 5))
			if o, ts := SlidingLog(p, l, cost, now); o.Allowed {
				CommitSlidingLog(p, l, cost, ts, now)
			}
			if l.Len() > limit || len(l.buf) > limit {
				t.Fatalf("limit %d: log holds %d entries in a buffer of %d", limit, l.Len(), len(l.buf))
			}
			for i := 1; i < l.Len(); i++ {
				if l.at(i) < l.at(i-1) {
					t.Fatalf("limit %d: entries out of order at %d", limit, i)
				}
			}
		}
		// Fill the log, then let it idle past the window.
		for l.Len() < limit {
			o, ts := SlidingLog(p, l, 1, now)
			if !o.Allowed {
				now += p.Window / p.Limit
				continue
			}
			CommitSlidingLog(p, l, 1, ts, now)
		}
		newest := l.newest()
		if got := l.ExpiresAt(p); got != newest+p.Window {
			t.Fatalf("ExpiresAt = %d, want newest+window", got)
		}
		l.Compact(p.Window, newest+p.Window-1)
		if l.Len() == 0 || l.newest() != newest {
			t.Fatalf("limit %d: Compact dropped entries still in the window", limit)
		}
		l.Compact(p.Window, newest+p.Window)
		if l.Len() != 0 || (limit > 8 && len(l.buf) > 4) {
			t.Fatalf("limit %d: after the window, Len %d Cap %d; want an empty, small buffer", limit, l.Len(), len(l.buf))
		}
		if o, ts := SlidingLog(p, l, 1, now+10*p.Window); !o.Allowed || ts != now+10*p.Window {
			t.Fatalf("limit %d: compacted log does not admit: %+v", limit, o)
		}
	}
}

// Compact keeps the entries still in the window, in order, when it shrinks.
func TestCompactKeepsLiveEntries(t *testing.T) {
	t.Parallel()
	p := mustParams(t, core.Policy{Limit: 64, Window: 64 * time.Microsecond, Algorithm: core.SlidingLog})
	l := new(Log)
	for i := range int64(64) {
		CommitSlidingLog(p, l, 1, 1000+i, 1000+i)
	}
	// At 1000+63+60 only the entries after 1000+59 remain: 4 of them.
	l.Compact(p.Window, 1000+63+60)
	if l.Len() != 4 || len(l.buf) >= 64 {
		t.Fatalf("Len %d Cap %d, want 4 entries in a smaller buffer", l.Len(), len(l.buf))
	}
	for i := range 4 {
		if l.at(i) != int64(1060+i) {
			t.Fatalf("entry %d = %d, want %d", i, l.at(i), 1060+i)
		}
	}
}

func TestAnswerDecision(t *testing.T) {
	t.Parallel()
	pol := core.Policy{Name: "x", Limit: 7, Window: time.Second}
	admitted := Answer{Allowed: true, Remaining: 3, Wait: 4, ResetAfter: 2_500_000}
	if admitted.retryAfter() != 0 || admitted.delay() != 4 {
		t.Fatalf("admitted: RetryAfter %d Delay %d, want 0 and 4", admitted.retryAfter(), admitted.delay())
	}
	d := decisionOf(admitted, pol)
	want := core.Decision{Allowed: true, Limit: 7, Remaining: 3, ResetAfter: 2500 * time.Millisecond, Delay: 4 * time.Microsecond}
	if d != want {
		t.Fatalf("Decision = %+v, want %+v", d, want)
	}
	denied := Answer{Remaining: 0, Wait: 1, ResetAfter: 2_500_000}
	if denied.retryAfter() != 1 || denied.delay() != 0 {
		t.Fatalf("denied: RetryAfter %d Delay %d, want 1 and 0", denied.retryAfter(), denied.delay())
	}
	d = decisionOf(denied, pol)
	want = core.Decision{Limit: 7, RetryAfter: time.Microsecond, ResetAfter: 2500 * time.Millisecond}
	if d != want {
		t.Fatalf("Decision = %+v, want %+v", d, want)
	}
}

// Fill overwrites every field, so a reused Decision keeps nothing of the
// previous one.
func TestAnswerFillOverwrites(t *testing.T) {
	t.Parallel()
	a := core.Policy{Name: "a", Limit: 7, Window: time.Second}
	b := core.Policy{Name: "b", Limit: 9, Window: time.Minute, Algorithm: core.LeakyBucket}
	d := decisionOf(Answer{Allowed: true, Remaining: 3, Wait: 4, ResetAfter: 5}, b)
	denied := Answer{Remaining: 1, Wait: 2, ResetAfter: 6}
	denied.Fill(&d, &a)
	if want := decisionOf(denied, a); d != want {
		t.Fatalf("Fill over a used Decision = %+v, want %+v", d, want)
	}
	admitted := Answer{Allowed: true, Remaining: 3, Wait: 4, ResetAfter: 5}
	admitted.Fill(&d, &b)
	if want := decisionOf(admitted, b); d != want || d.RetryAfter != 0 {
		t.Fatalf("Fill over a denial = %+v, want %+v", d, want)
	}
}

// TestAnswerInRegisters pins the size that lets the compiler keep an
// Answer in registers (at most four fields and 32 bytes).
func TestAnswerInRegisters(t *testing.T) {
	t.Parallel()
	if n, size := reflect.TypeFor[Answer]().NumField(), unsafe.Sizeof(Answer{}); n > 4 || size > 32 {
		t.Fatalf("Answer has %d fields and %d bytes; more than 4 fields or 32 bytes puts it in memory on every check", n, size)
	}
}

// Year-2100 instants and the largest tolerances stay exact: a full bucket
// of the longest allowed tolerance still admits and reports exact times.
func TestLargeValues(t *testing.T) {
	t.Parallel()
	p := mustParams(t, core.Policy{Limit: 1, Window: maxWindow, Burst: 31, Algorithm: core.GCRA})
	o, tat := GCRA(p, GCRAState{}, 31, year2100)
	if !o.Allowed || o.ResetAfter != p.Tolerance || tat.TAT != year2100+p.Tolerance {
		t.Fatalf("%+v tat %d", o, tat)
	}
	if o, _ := GCRA(p, tat, 1, year2100); o.Allowed || o.retryAfter() != p.Interval {
		t.Fatalf("%+v", o)
	}
}

// TestSwFirstFitMatchesSearch: the guessed first fit is the one the binary
// search alone (swSearch) finds over the same estimate, rounding included,
// for windows from 1 µs to 2^53 µs, limits from 1 to 2^40, counts over a
// lowered limit, and every kind of range (empty, one offset, the whole
// window).
func TestSwFirstFitMatchesSearch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	for range 300_000 {
		w := 1 + r.Int64N([]int64{10, 1_000_000, 1 << 40, 1 << 53}[r.IntN(4)])
		limit := 1 + r.Int64N([]int64{3, 100, 1 << 20, 1 << 40}[r.IntN(4)])
		prev, curr, cost := r.Int64N(2*limit+1), r.Int64N(limit+1), 1+r.Int64N(limit)
		if r.IntN(8) == 0 {
			prev = 0 // a first window: the estimate stays put
		}
		lo := r.Int64N(w + 1)
		hi := lo - 1 + r.Int64N(w-lo+2)
		if r.IntN(3) == 0 {
			lo, hi = 0, w
		}
		if got, want := swFirstFit(prev, curr, w, lo, hi, cost, limit), swSearch(prev, curr, w, lo, hi, cost, limit); got != want {
			t.Fatalf("swFirstFit(prev %d, curr %d, window %d, [%d, %d], cost %d, limit %d) = %d, the search says %d",
				prev, curr, w, lo, hi, cost, limit, got, want)
		}
	}
}

// swExact's claim, where rounding could break it: at offsets around the
// exact first fit, with prev chosen so that prev*(window-e) lands on
// t*window or one off it, and windows up to swExact's bound, swFits
// agrees with exact arithmetic.
func TestSwExactAgreesWithFloat(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 5))
	checked := 0
	for range 1_000_000 {
		lb := 1 + r.IntN(48)
		limit := int64(1)<<(lb-1) + r.Int64N(int64(1)<<(lb-1)) // bits.Len64(limit) == lb
		w := 1 + r.Int64N(int64(1)<<(49-lb)-1)
		if r.IntN(2) == 0 {
			w = int64(1)<<(49-lb) - 1 - r.Int64N(4) // the bound's edge
		}
		w = max(w, 1)
		curr, cost := r.Int64N(limit+1), r.Int64N(limit+1)
		tt := limit - curr - cost
		e := r.Int64N(w)
		var prev int64
		if tt > 0 {
			prev = tt*w/(w-e) + r.Int64N(3) - 1 // prev*(w-e) around t*w
		} else {
			prev = 1 + r.Int64N(limit)
		}
		if prev <= 0 || !swExact(prev, curr, w, cost, limit) {
			continue
		}
		for d := int64(-2); d <= 2; d++ {
			x := e + d
			if x < 0 || x > w+1 {
				continue
			}
			exact := tt >= 0 && (x >= w || prev*(w-x) <= tt*w)
			if got := swFits(prev, curr, w, x, cost, limit); got != exact {
				t.Fatalf("prev %d, curr %d, window %d, offset %d, cost %d, limit %d: swFits %v, exact %v", prev, curr, w, x, cost, limit, got, exact)
			}
			checked++
		}
	}
	if checked < 1_000_000 {
		t.Fatalf("only %d offsets checked", checked)
	}
}

// decisionOf is o as the decision for p.
func decisionOf(o Answer, p core.Policy) (d core.Decision) {
	o.Fill(&d, &p)
	return d
}
