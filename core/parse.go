package core

import (
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ParsePolicy reads a policy from its compact form:
//
//	policy = rate *( ";" param )
//	rate   = limit "/" period | limit  ; the latter for algorithm=concurrency
//	period = unit | 1*DIGIT unit | Go duration ("1h30m") | ["1"] ("w" | "week" | "mo" | "month")
//	unit   = "us" | "ms" | "s" | "sec" | "m" | "min" | "h" | "hour" | "d" | "day"
//	param  = "burst=" 1*DIGIT | "algorithm=" algorithm | "name=" text
//	       | "max_delay=" period | "shadow=" ("true" | "false") | "tz=" zone
//
// Periods of days and shorter count from the Unix epoch; "1w", "1mo", and
// "1d" with tz= are calendar windows (fixed_window unless sliding_window is
// named). "M" is refused rather than read as a minute. A concurrency limit
// without a period has a one-minute lifetime. Examples: "100/1m",
// "10/s;burst=20;algorithm=token_bucket", "1000/1mo;tz=Europe/Paris",
// "20;algorithm=concurrency". Errors are *PolicyError matching
// ErrInvalidPolicy, naming the bad part and its offset.
func ParsePolicy(s string) (Policy, error) {
	var p Policy
	fail := func(off int, part, reason string) (Policy, error) {
		return Policy{}, &PolicyError{Input: s, Offset: off, Value: part, Reason: reason, Err: ErrInvalidPolicy}
	}
	segs := splitOffsets(s, ';')
	rate := segs[0]
	slash := strings.IndexByte(rate.text, '/')
	noPeriod := slash < 0 // allowed for a concurrency limit alone
	if noPeriod {
		slash = len(rate.text)
	}
	limText, limOff := trimmed(segment{rate.text[:slash], rate.off})
	if noPeriod && (limText == "" || strings.TrimLeft(limText, "0123456789") != "") {
		return fail(limOff, limText, `want "<limit>/<period>", e.g. "100/1m"`)
	}
	if limText == "" || strings.TrimLeft(limText, "0123456789") != "" {
		return fail(limOff, limText, "limit must be a whole number")
	}
	limit, err := strconv.Atoi(limText)
	if err != nil || limit > MaxLimit {
		return fail(limOff, limText, "limit is out of range")
	}
	p.Limit = limit
	perText, perOff := "", 0
	if !noPeriod {
		perText, perOff = trimmed(segment{rate.text[slash+1:], rate.off + slash + 1})
	}
	if noPeriod {
		// The window comes from the algorithm, below.
	} else if cal, reason := parseCalendar(perText); reason != "" {
		return fail(perOff, perText, reason)
	} else if cal != "" {
		p.Calendar = cal
	} else {
		window, reason := parsePeriod(perText)
		if reason != "" {
			return fail(perOff, perText, reason)
		}
		p.Window = window
	}

	seen := map[string]bool{}
	for _, seg := range segs[1:] {
		text, off := trimmed(seg)
		key, val, ok := strings.Cut(text, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if key == "algo" {
			key = "algorithm" // an alias: both spellings count as one parameter
		}
		val = strings.TrimSpace(val)
		if !ok {
			return fail(off, text, `want "key=value" with key burst, algorithm, max_delay, shadow, tz or name`)
		}
		if seen[key] {
			return fail(off, text, key+" is given twice")
		}
		seen[key] = true
		switch key {
		case "burst":
			b, err := strconv.Atoi(val)
			if err != nil || b < 0 || strings.TrimLeft(val, "0123456789") != "" {
				return fail(off, text, "burst must be a whole number, 0 or more")
			}
			p.Burst = b
		case "algorithm":
			a, err := ParseAlgorithm(val)
			if err != nil {
				return Policy{}, &PolicyError{Input: s, Offset: off, Value: text, Reason: "unknown algorithm; want one of " + algorithmList(), Err: ErrUnknownAlgorithm}
			}
			p.Algorithm = a
		case "max_delay":
			d, reason := parsePeriod(val)
			if reason != "" {
				return fail(off, text, "max_delay: "+reason)
			}
			p.MaxDelay = d
		case "shadow":
			v, err := strconv.ParseBool(val)
			if err != nil {
				return fail(off, text, "shadow must be true or false")
			}
			p.Shadow = v
		case "name":
			if val == "" {
				return fail(off, text, "name must not be empty")
			}
			p.Name = val
		case "tz":
			switch {
			case p.Calendar == "" && p.Window == 24*time.Hour:
				p.Calendar, p.Window = "day", 0
			case p.Calendar == "":
				return fail(off, text, "tz applies to the calendar periods 1d, 1w and 1mo")
			}
			if val == "" {
				return fail(off, text, "tz must name a zone, e.g. tz=Europe/Paris or tz=UTC")
			}
			p.Zone = val
		default:
			return fail(off, text, "unknown parameter; want burst, algorithm, max_delay, shadow, tz or name")
		}
	}
	if noPeriod {
		if p.Algorithm != Concurrency {
			part, off := trimmed(rate)
			return fail(off, part, `want "<limit>/<period>", e.g. "100/1m"`)
		}
		p.Window = time.Minute // a slot's default lifetime
	}
	if p.Calendar != "" && p.Algorithm == "" {
		p.Algorithm = FixedWindow // the calendar's usual algorithm
	}
	if err := p.Validate(); err != nil {
		if pe, ok := err.(*PolicyError); ok {
			pe.Input = s // quote what the caller wrote
		}
		return Policy{}, err
	}
	return p, nil
}

// MustParsePolicy is ParsePolicy for policies fixed in source code; it panics
// on error.
func MustParsePolicy(s string) Policy {
	p, err := ParsePolicy(s)
	if err != nil {
		panic(err)
	}
	return p
}

var units = map[string]time.Duration{
	"us": time.Microsecond, "µs": time.Microsecond, "ms": time.Millisecond,
	"s": time.Second, "sec": time.Second, "m": time.Minute, "min": time.Minute,
	"h": time.Hour, "hour": time.Hour, "d": 24 * time.Hour, "day": 24 * time.Hour,
}

// parseCalendar reads a calendar period, "1w" or "1mo" (also "w",
// "week", "mo", "month"), as Policy.Calendar. It returns "" for any other
// period, and a reason for a count of weeks or months other than one or
// for "M", which would otherwise read as a minute.
func parseCalendar(s string) (string, string) {
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	unit := s[digits:]
	if unit == "M" {
		return "", `"M" is ambiguous; write m for minutes or mo for a calendar month`
	}
	var cal string
	switch strings.ToLower(unit) {
	case "w", "week":
		cal = "week"
	case "mo", "month":
		cal = "month"
	default:
		return "", ""
	}
	if digits > 0 && strings.TrimLeft(s[:digits], "0") != "1" {
		return "", "a calendar period is one week (1w) or one month (1mo); for other lengths use days (14d), which are counted from the Unix epoch"
	}
	return cal, ""
}

// parsePeriod reads "s", "5m", "2d" or a Go duration. It returns a reason
// when the text is not a period.
func parsePeriod(s string) (time.Duration, string) {
	if s == "" {
		return 0, "missing period; want a unit (s, m, h, d) or a duration such as 5m"
	}
	if u, ok := units[strings.ToLower(s)]; ok {
		return u, ""
	}
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	if digits > 0 {
		if u, ok := units[strings.ToLower(s[digits:])]; ok {
			n, err := strconv.ParseInt(s[:digits], 10, 64)
			if err != nil || n <= 0 || n > int64(maxWindow/u) {
				return 0, "period is zero or out of range"
			}
			return time.Duration(n) * u, ""
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, "unknown period; want a unit (us, ms, s, m, h, d), a count and a unit (5m), or a Go duration (1h30m)"
	}
	if d <= 0 {
		return 0, "period must be positive"
	}
	return d, ""
}

type segment struct {
	text string
	off  int
}

func splitOffsets(s string, sep byte) []segment {
	var out []segment
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == sep {
			out = append(out, segment{s[start:i], start})
			start = i + 1
		}
	}
	return out
}

// trimmed returns the segment's text without surrounding spaces and the
// offset at which that text starts.
func trimmed(seg segment) (string, int) {
	lead := len(seg.text) - len(strings.TrimLeftFunc(seg.text, unicode.IsSpace))
	return strings.TrimSpace(seg.text), seg.off + lead
}
