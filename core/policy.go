package core

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Policy is one rate limit: Limit units per Window, enforced by Algorithm.
// A Policy is a plain value; compare policies with ==. Backends keep separate
// state for every distinct Policy value, so two policies that differ only in
// Name do not share a quota.
type Policy struct {
	// Name identifies the policy in headers and metrics ("per-minute").
	// Optional; printable ASCII only, at most MaxNameLen bytes. An unnamed
	// policy is shown there by its String form without a name ("100/1m").
	Name string
	// Limit is the number of units admitted per Window. Must be > 0.
	Limit int
	// Window is the period Limit applies to (for Concurrency, the lifetime
	// of a slot not given back). Must be > 0 and a whole number of
	// microseconds, the resolution every backend computes in.
	Window time.Duration
	// Burst is the capacity of TokenBucket, GCRA and LeakyBucket: how many
	// units may pass at once. 0 means Limit. Ignored by the window algorithms,
	// whose capacity is Limit.
	Burst int
	// Algorithm selects how the policy is enforced; empty means
	// GCRA.
	Algorithm Algorithm
	// MaxDelay, for LeakyBucket only, is the longest an admitted check may
	// be asked to wait (Decision.Delay); a check that would wait longer is
	// denied, with RetryAfter the first moment it would be admitted within
	// it. 0 means no ceiling but the queue's. A whole number of
	// microseconds.
	MaxDelay time.Duration
	// Shadow marks a policy for a dry run: the HTTP middleware checks it
	// after the enforced policies admitted a request and reports its
	// would-be denials to observers, and it never changes the response or
	// what the enforced policies consume. Not part of the Identity.
	Shadow bool
	// Calendar, for a FixedWindow or SlidingWindow policy, aligns windows
	// to the civil calendar in Zone: "day" (from local midnight), "week"
	// (from Monday, ISO 8601) or "month" (from the first), so days across a
	// daylight-saving change last 23 or 25 hours. Window must then be 0.
	Calendar string
	// Zone is the IANA time zone of a Calendar policy ("Europe/Paris"); ""
	// is UTC. Zone data is built into the program.
	Zone string
}

// Bounds on policies. They keep every quantity an algorithm computes exact in
// the 53-bit integers that both Go and Redis's Lua represent without loss.
const (
	// MaxLimit bounds Limit and Burst.
	MaxLimit = 1_000_000_000
	// maxWindow bounds Window.
	maxWindow = 366 * 24 * time.Hour
	// maxSlidingLogLimit bounds Limit under SlidingLog, which stores one
	// timestamp per admitted unit.
	maxSlidingLogLimit = 100_000
	// MaxNameLen bounds the length of Policy.Name.
	MaxNameLen = 128
	// maxTolerance bounds Burst*Interval for rate-based algorithms (about 31
	// years in microseconds), so that now plus it stays below 2^53 for any
	// date before the year 2200.
	maxTolerance = 1_000_000_000_000_000
)

// Params are a validated policy's numbers in the units the algorithms compute
// with: counts and whole microseconds. See package core/algo.
type Params struct {
	Algorithm Algorithm // resolved, never empty
	Limit     int64     // units per window
	Burst     int64     // resolved capacity for rate-based algorithms
	Window    int64     // window length in microseconds; 0 for a calendar policy (see Bounds)
	// Interval is the emission interval of rate-based algorithms: the time one
	// unit takes to refill or drain, Window/Limit rounded up to a whole
	// microsecond (so a policy never admits faster than its nominal rate).
	// Zero for window algorithms.
	Interval int64
	// Tolerance is Burst*Interval: the time a full bucket takes to refill.
	// Zero for window algorithms.
	Tolerance int64
	// Capacity is the largest cost a single check may carry: Limit for the
	// window algorithms, Burst for the rate-based ones.
	Capacity int64
	// MaxDelay is Policy.MaxDelay in microseconds, 0 for none.
	MaxDelay int64
	// cal is the calendar of a Calendar policy, whose Window is then 0;
	// nil otherwise. See Bounds.
	cal *calendar
}

// Validate reports whether the policy can be enforced. The error is a
// *PolicyError naming the offending field and value; it matches
// ErrInvalidPolicy (and ErrUnknownAlgorithm for an unknown algorithm).
func (p Policy) Validate() error {
	_, err := p.Params()
	return err
}

// Params validates the policy and returns its computed parameters.
func (p Policy) Params() (Params, error) {
	bad := func(field, value, reason string) (Params, error) {
		return Params{}, &PolicyError{Policy: p.Name, Field: field, Value: value, Reason: reason, Err: ErrInvalidPolicy}
	}
	if !p.Algorithm.valid() {
		return Params{}, &PolicyError{Policy: p.Name, Field: "algorithm", Value: strconv.Quote(string(p.Algorithm)),
			Reason: "unknown algorithm; want one of " + algorithmList(), Err: ErrUnknownAlgorithm}
	}
	alg := p.Algorithm.resolve()
	var cal *calendar
	if p.Calendar != "" || p.Zone != "" {
		var reason string
		switch {
		case p.Calendar == "":
			return bad("tz", strconv.Quote(p.Zone), "applies to calendar windows only (1d, 1w, 1mo; Policy.Calendar)")
		case p.Algorithm != FixedWindow && p.Algorithm != SlidingWindow:
			return bad("calendar", strconv.Quote(p.Calendar), "applies to fixed_window and sliding_window only")
		case p.Window != 0:
			return bad("window", p.Window.String(), "must be 0 with a calendar, which sets the window")
		}
		switch p.Calendar {
		case calDay, calWeek, calMonth:
		default:
			return bad("calendar", strconv.Quote(p.Calendar), `unknown calendar period; want "day", "week" or "month"`)
		}
		if cal, reason = calendarOf(p.Calendar, p.Zone); reason != "" {
			return bad("tz", strconv.Quote(p.Zone), reason)
		}
		p.Window = time.Duration(cal.longest()) * time.Microsecond
	}
	switch {
	case p.Limit <= 0:
		return bad("limit", strconv.Itoa(p.Limit), "must be at least 1")
	case p.Limit > MaxLimit:
		return bad("limit", strconv.Itoa(p.Limit), fmt.Sprintf("must be at most %d", MaxLimit))
	case alg == SlidingLog && p.Limit > maxSlidingLogLimit:
		return bad("limit", strconv.Itoa(p.Limit), fmt.Sprintf("sliding_log stores one timestamp per unit and allows at most %d; use sliding_window for large limits", maxSlidingLogLimit))
	case alg == Concurrency && p.Limit > maxSlidingLogLimit:
		return bad("limit", strconv.Itoa(p.Limit), fmt.Sprintf("a concurrency limit stores one instant per slot and allows at most %d", maxSlidingLogLimit))
	case p.Window <= 0:
		return bad("window", p.Window.String(), "must be positive")
	case p.Window > maxWindow:
		return bad("window", p.Window.String(), "must be at most "+maxWindow.String())
	case p.Window%time.Microsecond != 0:
		return bad("window", p.Window.String(), "must be a whole number of microseconds")
	case p.Burst < 0:
		return bad("burst", strconv.Itoa(p.Burst), "must not be negative (0 means the limit)")
	case p.Burst > MaxLimit:
		return bad("burst", strconv.Itoa(p.Burst), fmt.Sprintf("must be at most %d", MaxLimit))
	case p.Burst > 0 && p.Burst != p.Limit && !alg.rateBased():
		return bad("burst", strconv.Itoa(p.Burst), "applies to gcra, token_bucket and leaky_bucket; the capacity of "+string(alg)+" is its limit")
	case p.MaxDelay < 0:
		return bad("max_delay", p.MaxDelay.String(), "must not be negative (0 means no ceiling)")
	case p.MaxDelay > 0 && alg != LeakyBucket:
		return bad("max_delay", p.MaxDelay.String(), "applies to leaky_bucket only, the algorithm that asks admitted checks to wait")
	case p.MaxDelay > maxWindow:
		return bad("max_delay", p.MaxDelay.String(), "must be at most "+maxWindow.String())
	case p.MaxDelay%time.Microsecond != 0:
		return bad("max_delay", p.MaxDelay.String(), "must be a whole number of microseconds")
	}
	if len(p.Name) > MaxNameLen {
		return bad("name", strconv.Quote(p.Name[:16])+"...", fmt.Sprintf("is %d bytes; at most %d", len(p.Name), MaxNameLen))
	}
	for i := 0; i < len(p.Name); i++ {
		if c := p.Name[i]; c < 0x20 || c > 0x7e {
			return bad("name", strconv.Quote(p.Name), fmt.Sprintf("byte %d is 0x%02x; only printable ASCII is allowed", i, c))
		}
	}
	w := int64(p.Window / time.Microsecond)
	if alg == Concurrency {
		alg = SlidingLog // its slots are a log of the instants they were taken
	}
	pr := Params{Algorithm: alg, Limit: int64(p.Limit), Burst: int64(p.Burst), Window: w, Capacity: int64(p.Limit), MaxDelay: int64(p.MaxDelay / time.Microsecond), cal: cal}
	if cal != nil {
		pr.Window = 0 // its windows vary in length
	}
	if pr.Burst == 0 {
		pr.Burst = pr.Limit
	}
	if alg.rateBased() {
		if w < pr.Limit {
			return bad("limit", strconv.Itoa(p.Limit), fmt.Sprintf("%d per %s is finer than one unit per microsecond, the finest rate %s keeps; use a longer window", p.Limit, p.Window, alg))
		}
		pr.Interval = (w + pr.Limit - 1) / pr.Limit
		if pr.Burst > maxTolerance/pr.Interval {
			return bad("burst", strconv.Itoa(int(pr.Burst)), fmt.Sprintf("burst times the interval of %dµs exceeds %dµs", pr.Interval, int64(maxTolerance)))
		}
		pr.Tolerance = pr.Burst * pr.Interval
		pr.Capacity = pr.Burst
	}
	return pr, nil
}

// Capacity is the largest cost a single check against the policy may carry:
// Limit for the window algorithms, Burst (or Limit when Burst is 0) for
// TokenBucket, GCRA and LeakyBucket. It does not validate the policy.
func (p Policy) Capacity() int {
	if p.Algorithm.rateBased() && p.Burst > 0 {
		return p.Burst
	}
	return p.Limit
}

// CheckCost returns a *CostError if cost is not positive or exceeds the
// capacity of p.
func (p Policy) CheckCost(cost int) error {
	if cost <= 0 {
		return &CostError{Policy: p.Name, Cost: cost, Capacity: p.Capacity(), Err: ErrInvalidCost}
	}
	if c := p.Capacity(); cost > c {
		return &CostError{Policy: p.Name, Cost: cost, Capacity: c, Err: ErrCostExceedsCapacity}
	}
	return nil
}

// String formats the policy in the grammar ParsePolicy reads, e.g.
// "100/1m;burst=20;algorithm=token_bucket;name=api" or
// "10/1s;algorithm=leaky_bucket;max_delay=500ms". Parsing the result gives
// back an equal Policy for any policy ParsePolicy can produce.
func (p Policy) String() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(p.Limit))
	b.WriteByte('/')
	switch p.Calendar {
	case "":
		b.WriteString(formatWindow(p.Window))
	case calWeek:
		b.WriteString("1w")
	case calMonth:
		b.WriteString("1mo")
	default:
		b.WriteString("1d")
	}
	if p.Burst != 0 {
		b.WriteString(";burst=")
		b.WriteString(strconv.Itoa(p.Burst))
	}
	if p.Algorithm != "" {
		b.WriteString(";algorithm=")
		b.WriteString(string(p.Algorithm))
	}
	if p.MaxDelay != 0 {
		b.WriteString(";max_delay=")
		b.WriteString(formatWindow(p.MaxDelay))
	}
	if p.Name != "" {
		b.WriteString(";name=")
		b.WriteString(p.Name)
	}
	if p.Shadow {
		b.WriteString(";shadow=true")
	}
	if p.Zone != "" || p.Calendar == calDay {
		b.WriteString(";tz=")
		b.WriteString(cmp.Or(p.Zone, "UTC"))
	}
	return b.String()
}

// formatWindow writes d in the largest unit that divides it exactly.
func formatWindow(d time.Duration) string {
	if d > 0 {
		for _, u := range []struct {
			d    time.Duration
			name string
		}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}} {
			if d%u.d == 0 {
				return strconv.FormatInt(int64(d/u.d), 10) + u.name
			}
		}
	}
	return d.String()
}

// Identity is what a backend finds a policy's state by. For a named policy
// it is the name, the resolved algorithm, the window, calendar and zone, so
// a deploy that changes a named policy's Limit or Burst keeps every key's
// state and applies the new numbers to it at once; for an unnamed policy it
// is every field. Under new numbers every algorithm keeps the units a client
// used (60 used of 100 leaves 40 of 100, 140 of 200), a part of a unit
// counting whole; Remaining is never negative.
type Identity struct {
	Name      string
	Algorithm Algorithm // resolved: never empty
	Window    time.Duration
	Calendar  string
	Zone      string
	Limit     int // 0 for a named policy
	Burst     int // 0 for a named policy
}

// Identity returns the identity of p; see Identity.
func (p Policy) Identity() Identity {
	id := Identity{Name: p.Name, Algorithm: p.Algorithm.resolve(), Window: p.Window, Calendar: p.Calendar, Zone: p.Zone}
	if p.Name == "" {
		id.Limit, id.Burst = p.Limit, p.Burst
	}
	return id
}
