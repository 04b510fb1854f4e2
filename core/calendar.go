package core

import (
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // every instance reads the same zone data, whatever its host has
)

// The calendar periods a window policy may align to (Policy.Calendar).
const (
	calDay   = "day"
	calWeek  = "week"
	calMonth = "month"
)

// calendar is a resolved Policy.Calendar and Policy.Zone: a period of the
// civil calendar in one time zone. Shared by every Params of the same
// period and zone, and safe for concurrent use.
type calendar struct {
	period string
	loc    *time.Location
	// last is the window found last ([start, end) in µs): the next check
	// almost always falls in it.
	last atomic.Pointer[[2]int64]
}

// calendars holds one *calendar per period and zone ("month Europe/Paris").
// Zones and periods are finite, so it is bounded.
var calendars sync.Map

// calendarOf returns the calendar of period, which the caller has checked,
// in the zone named zone ("" is UTC), or a reason when the zone is unknown.
func calendarOf(period, zone string) (*calendar, string) {
	if v, ok := calendars.Load(period + " " + zone); ok {
		return v.(*calendar), ""
	}
	loc := time.UTC
	if zone != "" {
		var err error
		if loc, err = time.LoadLocation(zone); err != nil || zone == "Local" {
			return nil, "unknown time zone; want an IANA name such as Europe/Paris, or UTC"
		}
	}
	v, _ := calendars.LoadOrStore(period+" "+zone, &calendar{period: period, loc: loc})
	return v.(*calendar), ""
}

// bounds returns the window holding now (µs since the epoch): the local
// day, the ISO week or the month, from the first instant of its first day.
func (c *calendar) bounds(now int64) (start, end int64) {
	if w := c.last.Load(); w != nil && now >= w[0] && now < w[1] {
		return w[0], w[1]
	}
	t := time.UnixMicro(now).In(c.loc)
	y, m, d := t.Date()
	switch c.period {
	case calDay:
		start, end = dayStart(y, m, d, c.loc), dayStart(y, m, d+1, c.loc)
	case calWeek:
		d -= (int(t.Weekday()) + 6) % 7 // back to Monday
		start, end = dayStart(y, m, d, c.loc), dayStart(y, m, d+7, c.loc)
	default:
		start, end = dayStart(y, m, 1, c.loc), dayStart(y, m+1, 1, c.loc)
	}
	c.last.Store(&[2]int64{start, end})
	return start, end
}

// dayStart is the first instant of the local date y-m-d (normalized, as
// time.Date does) in microseconds: its midnight, or, in a zone whose clocks
// skip midnight on that date, the end of the skipped hour.
func dayStart(y int, m time.Month, d int, loc *time.Location) int64 {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	want := time.Date(y, m, d, 12, 0, 0, 0, time.UTC) // the normalized date
	if ty, tm, td := t.Date(); ty != want.Year() || tm != want.Month() || td != want.Day() {
		// Midnight does not exist: time.Date answered an instant of the
		// day before, in the zone that ends when the date begins.
		_, t = t.ZoneBounds()
	}
	return t.UnixMicro()
}

// longest is the longest window of the period, which Policy.Params
// validates as it validates a Window: a month of 31 days with an hour
// gained.
func (c *calendar) longest() int64 {
	switch c.period {
	case calDay:
		return int64(25 * time.Hour / time.Microsecond)
	case calWeek:
		return int64(7*24*time.Hour/time.Microsecond) + int64(time.Hour/time.Microsecond)
	}
	return int64(31*24*time.Hour/time.Microsecond) + int64(time.Hour/time.Microsecond)
}

// Bounds returns the start and end (µs since the epoch) of the window of a
// window policy that holds now: a multiple of Window since the epoch, or
// the calendar window in the policy's zone.
func (p *Params) Bounds(now int64) (start, end int64) {
	if p.cal != nil {
		return p.cal.bounds(now)
	}
	start = now - now%p.Window
	if start > now { // now < 0 and not on an edge: floor, not truncation
		start -= p.Window
	}
	return start, start + p.Window
}
