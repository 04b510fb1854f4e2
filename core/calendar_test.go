package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// zoned returns the instant of a wall-clock time in zone.
func zoned(t *testing.T, zone string, y int, m time.Month, d, h, min int) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	return time.Date(y, m, d, h, min, 0, 0, loc)
}

// TestCalendarBounds pins the windows of calendar policies: local days,
// ISO weeks and months, across daylight-saving changes (23- and 25-hour
// days, a zone whose clocks skip midnight) and month lengths.
func TestCalendarBounds(t *testing.T) {
	t.Parallel()
	utc := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }
	tests := []struct {
		policy     string
		at         time.Time
		start, end time.Time
	}{
		// Paris: winter is UTC+1, summer UTC+2; 2026-03-29 has 23 hours, 2026-10-25 has 25.
		{"1/1d;tz=Europe/Paris", zoned(t, "Europe/Paris", 2026, 3, 29, 12, 0), utc(2026, 3, 28, 23), utc(2026, 3, 29, 22)},
		{"1/1d;tz=Europe/Paris", zoned(t, "Europe/Paris", 2026, 10, 25, 2, 30), utc(2026, 10, 24, 22), utc(2026, 10, 25, 23)},
		{"1/1d;tz=Europe/Paris", zoned(t, "Europe/Paris", 2026, 7, 1, 23, 59), utc(2026, 6, 30, 22), utc(2026, 7, 1, 22)},
		// New York at 23:00 local is the next UTC day, but still this local day.
		{"1/1d;tz=America/New_York", zoned(t, "America/New_York", 2026, 12, 4, 23, 0), utc(2026, 12, 4, 5), utc(2026, 12, 5, 5)},
		// Santiago skips from 00:00 to 01:00 on 2026-09-06: that day starts at 01:00 local (04:00 UTC).
		{"1/1d;tz=America/Santiago", zoned(t, "America/Santiago", 2026, 9, 6, 12, 0), utc(2026, 9, 6, 4), utc(2026, 9, 7, 3)},
		{"1/1d;tz=America/Santiago", utc(2026, 9, 6, 3).Add(-time.Microsecond), utc(2026, 9, 5, 4), utc(2026, 9, 6, 4)},
		// ISO weeks start on Monday: 2026-12-04 is a Friday; 2027-01-01 is in the week of Monday 2026-12-28.
		{"1/1w", utc(2026, 12, 4, 12), utc(2026, 11, 30, 0), utc(2026, 12, 7, 0)},
		{"1/1w;tz=Asia/Tokyo", zoned(t, "Asia/Tokyo", 2027, 1, 1, 0, 0), utc(2026, 12, 27, 15), utc(2027, 1, 3, 15)},
		{"1/1w", utc(2026, 11, 30, 0), utc(2026, 11, 30, 0), utc(2026, 12, 7, 0)},
		// Months: their own lengths, leap years, and the DST change inside March.
		{"1/1mo", utc(2028, 2, 29, 23), utc(2028, 2, 1, 0), utc(2028, 3, 1, 0)},
		{"1/1mo;tz=Europe/Paris", zoned(t, "Europe/Paris", 2026, 3, 31, 23, 59), utc(2026, 2, 28, 23), utc(2026, 3, 31, 22)},
		{"1/1mo;tz=Europe/Paris", zoned(t, "Europe/Paris", 2026, 12, 31, 23, 59), utc(2026, 11, 30, 23), utc(2026, 12, 31, 23)},
		// Half-hour zones.
		{"1/1d;tz=Asia/Kolkata", utc(2026, 12, 4, 19), utc(2026, 12, 4, 18).Add(30 * time.Minute), utc(2026, 12, 5, 18).Add(30 * time.Minute)},
	}
	for _, tt := range tests {
		p := core.MustParsePolicy(tt.policy)
		pr, err := p.Params()
		if err != nil {
			t.Fatal(err)
		}
		start, end := pr.Bounds(tt.at.UnixMicro())
		if start != tt.start.UnixMicro() || end != tt.end.UnixMicro() {
			t.Errorf("%s at %v: window [%v, %v), want [%v, %v)", tt.policy, tt.at.UTC(),
				time.UnixMicro(start).UTC(), time.UnixMicro(end).UTC(), tt.start, tt.end)
		}
		// Asked again (from the cached window) and at its edges.
		if s, e := pr.Bounds(tt.at.UnixMicro()); s != start || e != end {
			t.Errorf("%s: a second call gave another window", tt.policy)
		}
		if s, _ := pr.Bounds(end); s != end {
			t.Errorf("%s: the window after [%v, %v) starts at %v", tt.policy, start, end, s)
		}
		if _, e := pr.Bounds(start - 1); e != start {
			t.Errorf("%s: the window before [%v, %v) ends at %v", tt.policy, start, end, e)
		}
	}
}

// TestCalendarEveryDay walks three years of days in zones with DST
// changes: every day is one window, the next begins where it ends, and
// each holds the local noon of its date.
func TestCalendarEveryDay(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"Europe/Paris", "America/Santiago", "America/Havana", "Australia/Lord_Howe", "Asia/Beirut"} {
		pr, err := core.MustParsePolicy("1/1d;tz=" + zone).Params()
		if err != nil {
			t.Fatal(err)
		}
		loc, _ := time.LoadLocation(zone)
		for d := range 3 * 366 {
			noon := time.Date(2025, 1, 1+d, 12, 0, 0, 0, loc)
			start, end := pr.Bounds(noon.UnixMicro())
			if s := time.UnixMicro(start).In(loc); s.Day() != noon.Day() || s.Hour() > 1 {
				t.Fatalf("%s %s: the day starts at %v", zone, noon.Format(time.DateOnly), s)
			}
			if l := time.Duration(end-start) * time.Microsecond; l < 22*time.Hour || l > 26*time.Hour {
				t.Fatalf("%s %s: the day lasts %v", zone, noon.Format(time.DateOnly), l)
			}
			if next, _ := pr.Bounds(end); next != end {
				t.Fatalf("%s %s: a gap after the day", zone, noon.Format(time.DateOnly))
			}
		}
	}
}

func TestParseCalendar(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]core.Policy{
		"1000/1mo;tz=Europe/Paris": {Limit: 1000, Calendar: "month", Zone: "Europe/Paris", Algorithm: core.FixedWindow},
		"5/1w":                     {Limit: 5, Calendar: "week", Algorithm: core.FixedWindow},
		"5/week;name=w":            {Limit: 5, Calendar: "week", Algorithm: core.FixedWindow, Name: "w"},
		"5/1d;tz=UTC":              {Limit: 5, Calendar: "day", Zone: "UTC", Algorithm: core.FixedWindow},
		"5/1d":                     {Limit: 5, Window: 24 * time.Hour}, // the UTC day, counted from the epoch
		"5/month;algorithm=fixed_window;tz=Asia/Tokyo": {Limit: 5, Calendar: "month", Zone: "Asia/Tokyo", Algorithm: core.FixedWindow},
	} {
		p, err := core.ParsePolicy(in)
		if err != nil || p != want {
			t.Errorf("ParsePolicy(%q) = %+v, %v; want %+v", in, p, err, want)
			continue
		}
		if back, err := core.ParsePolicy(p.String()); err != nil || back != p {
			t.Errorf("%q: String() = %q parses to %+v, %v", in, p.String(), back, err)
		}
	}
	for in, want := range map[string]string{
		"10/2mo":                           "one week (1w) or one month (1mo)",
		"10/3w":                            "one week (1w) or one month (1mo)",
		"10/1M":                            `"M" is ambiguous`,
		"10/1m;tz=Europe/Paris":            "tz applies to the calendar periods 1d, 1w and 1mo",
		"10/1mo;tz=Mars/Olympus":           `tz "Mars/Olympus": unknown time zone`,
		"10/1mo;tz=Local":                  "unknown time zone",
		"10/1mo;tz=":                       "tz must name a zone",
		"10/1mo;algorithm=gcra":            "applies to fixed_window and sliding_window only",
		"10/1w;algorithm=token_bucket":     "applies to fixed_window and sliding_window only",
		"10/1d;tz=Europe/Paris;tz=Etc/UTC": "tz is given twice",
	} {
		_, err := core.ParsePolicy(in)
		if !errors.Is(err, core.ErrInvalidPolicy) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePolicy(%q) = %v, want an error saying %q", in, err, want)
		}
	}
	for _, p := range []core.Policy{
		{Limit: 1, Calendar: "year", Algorithm: core.FixedWindow},
		{Limit: 1, Zone: "Europe/Paris", Window: time.Hour, Algorithm: core.FixedWindow},
		{Limit: 1, Calendar: "day", Window: time.Hour, Algorithm: core.FixedWindow},
		{Limit: 1, Calendar: "day"}, // GCRA by default
	} {
		if err := p.Validate(); !errors.Is(err, core.ErrInvalidPolicy) {
			t.Errorf("%+v: Validate = %v, want ErrInvalidPolicy", p, err)
		}
	}
	a := core.Policy{Name: "q", Limit: 1, Calendar: "month", Zone: "Europe/Paris", Algorithm: core.FixedWindow}
	b := a
	b.Zone = "Europe/Berlin"
	if a.Identity() == b.Identity() {
		t.Error("two zones share an identity")
	}
}
