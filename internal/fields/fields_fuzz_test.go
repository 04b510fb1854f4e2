package fields

import (
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/sink"
)

// FuzzHeaders holds the header writer to its promise: for any policy name
// and any decision, every field it writes parses back as the structured
// field it claims to be, names round-trip, r is never negative, and a
// denied policy's t is at least 1.
func FuzzHeaders(f *testing.F) {
	f.Add("api", 100, int64(60_000_000), 42, true, int64(0), int64(17_000_000), uint8(0))
	f.Add(`q"uo\te`, 1, int64(1), -5, false, int64(1), int64(1), uint8(0))
	f.Add("", 5, int64(1_500_000), 0, false, int64(2_500_001), int64(9_000_000), uint8(1))
	f.Add("new\r\nline", 10, int64(1_000_000), 3, true, int64(0), int64(0), uint8(2))
	f.Add("\x00\xff", 7, int64(3_000_000), 7, true, int64(0), int64(0), uint8(3))
	f.Fuzz(func(t *testing.T, name string, limit int, windowMicros int64, rem int, allowed bool, retryMicros, resetMicros int64, mode uint8) {
		p := core.Policy{Name: name, Limit: limit, Window: time.Duration(windowMicros) * time.Microsecond}
		m := Mode(mode % uint8(None+1))
		other := "other"
		if name == other {
			other = "another"
		}
		s, err := NewSet(m, []core.Policy{p, {Name: other, Limit: 1, Window: time.Second}})
		if err != nil {
			if p.Validate() == nil {
				t.Fatalf("valid policy %+v rejected: %v", p, err)
			}
			checkSFString(t, name) // the escaper itself must still be sound
			return
		}
		d := core.Decision{Allowed: allowed, Limit: limit, Remaining: rem,
			RetryAfter: time.Duration(retryMicros) * time.Microsecond, ResetAfter: time.Duration(resetMicros) * time.Microsecond}
		if allowed {
			d.RetryAfter = 0
		}
		ds := []core.Decision{d, {Allowed: true, Limit: 1, Remaining: 1}}
		rec := sink.NewRecorder()
		s.WriteHeaders(rec, ds, 0, nil)
		for k, vs := range rec.H {
			for _, v := range vs {
				if strings.ContainsAny(v, "\r\n\x00") {
					t.Fatalf("%s carries a control character: %q", k, v)
				}
			}
		}
		switch m {
		case Draft11:
			pol, lim := parseDraft11(t, rec)
			it := lim[0].(httpsfv.Item)
			if it.Value != PolicyName(p) || pol[0].(httpsfv.Item).Value != PolicyName(p) {
				t.Fatalf("name %q came back as %v", PolicyName(p), it.Value)
			}
			r, _ := it.Params.Get("r")
			tt, _ := it.Params.Get("t")
			if r.(int64) < 0 || (!allowed && tt.(int64) < 1) {
				t.Fatalf("r=%v t=%v for %+v", r, tt, d)
			}
		case Draft07:
			if _, err := httpsfv.UnmarshalDictionary(rec.H.Values(hdrRateLimit)); err != nil {
				t.Fatalf("RateLimit %q: %v", rec.H.Get(hdrRateLimit), err)
			}
			if _, err := httpsfv.UnmarshalList(rec.H.Values(hdrRateLimitPolicy)); err != nil {
				t.Fatalf("RateLimit-Policy %q: %v", rec.H.Get(hdrRateLimitPolicy), err)
			}
		case Draft06, XRateLimit:
			for k, vs := range rec.H {
				if k == hdrRateLimitPolicy {
					if _, err := httpsfv.UnmarshalList(vs); err != nil {
						t.Fatalf("%s %q: %v", k, vs, err)
					}
					continue
				}
				it, err := httpsfv.UnmarshalItem(vs)
				if err != nil {
					t.Fatalf("%s %q: %v", k, vs, err)
				}
				if n, ok := it.Value.(int64); !ok || n < 0 {
					t.Fatalf("%s = %v, want a non-negative integer", k, it.Value)
				}
			}
		case None:
			if len(rec.H) != 0 {
				t.Fatalf("None wrote %v", rec.H)
			}
		}
	})
}

// checkSFString checks that any string, escaped, parses as an sf-string and
// comes back unchanged when it was printable ASCII.
func checkSFString(t *testing.T, s string) {
	t.Helper()
	enc := string(appendSFString(nil, s))
	it, err := httpsfv.UnmarshalItem([]string{enc})
	if err != nil {
		t.Fatalf("escaped %q as %q, which does not parse: %v", s, enc, err)
	}
	printable := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			printable = false
		}
	}
	if printable && it.Value != s {
		t.Fatalf("%q came back as %v", s, it.Value)
	}
}
