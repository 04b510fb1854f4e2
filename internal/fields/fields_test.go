package fields

import (
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/sink"
)

func mustSet(t testing.TB, mode Mode, ps ...core.Policy) *Set {
	t.Helper()
	s, err := NewSet(mode, ps)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDraft11Fields(t *testing.T) {
	t.Parallel()
	api := core.Policy{Name: `a"p\i`, Limit: 100, Window: time.Minute}
	burst := core.Policy{Limit: 10, Window: 1500 * time.Millisecond, Algorithm: core.TokenBucket}
	s := mustSet(t, Draft11, api, burst)
	ds := []core.Decision{
		{Allowed: true, Limit: 100, Remaining: 42, ResetAfter: 16*time.Second + time.Microsecond},
		{Allowed: false, Limit: 10, Remaining: 0, RetryAfter: 200 * time.Millisecond, ResetAfter: 1500 * time.Millisecond},
	}
	rec := sink.NewRecorder()
	s.WriteHeaders(rec, ds, 1, nil)

	pol, lim := parseDraft11(t, rec)
	if len(pol) != 2 || len(lim) != 2 {
		t.Fatalf("want 2 members each, got %q and %q", rec.H.Get(hdrRateLimitPolicy), rec.H.Get(hdrRateLimit))
	}
	want := []struct {
		name    string
		q, w    int64
		r, tsec int64
	}{
		{`a"p\i`, 100, 60, 42, 17},
		{"10/1500ms;algorithm=token_bucket", 10, 2, 0, 1}, // w rounded up; denied: t is RetryAfter rounded up
	}
	for i, w := range want {
		pi, li := pol[i].(httpsfv.Item), lim[i].(httpsfv.Item)
		if pi.Value != w.name || li.Value != w.name {
			t.Errorf("member %d names %v and %v, want %q", i, pi.Value, li.Value, w.name)
		}
		checkParam(t, pi.Params, "q", w.q)
		checkParam(t, pi.Params, "w", w.w)
		checkParam(t, li.Params, "r", w.r)
		checkParam(t, li.Params, "t", w.tsec)
	}
}

// parseDraft11 parses the two fields rec holds as the structured lists
// draft 11 says they are.
func parseDraft11(t *testing.T, rec *sink.Recorder) (pol, lim httpsfv.List) {
	t.Helper()
	pol, err := httpsfv.UnmarshalList(rec.H.Values(hdrRateLimitPolicy))
	if err != nil {
		t.Fatalf("RateLimit-Policy %q: %v", rec.H.Get(hdrRateLimitPolicy), err)
	}
	lim, err = httpsfv.UnmarshalList(rec.H.Values(hdrRateLimit))
	if err != nil {
		t.Fatalf("RateLimit %q: %v", rec.H.Get(hdrRateLimit), err)
	}
	return pol, lim
}

func checkParam(t *testing.T, p *httpsfv.Params, name string, want int64) {
	t.Helper()
	v, ok := p.Get(name)
	if !ok {
		t.Errorf("parameter %s missing", name)
		return
	}
	if v != want {
		t.Errorf("parameter %s = %v, want %d", name, v, want)
	}
}

func TestSingleValueModesReportBinding(t *testing.T) {
	t.Parallel()
	a := core.Policy{Name: "a", Limit: 100, Window: time.Minute}
	b := core.Policy{Name: "b", Limit: 1000, Window: time.Hour}
	ds := []core.Decision{
		{Allowed: true, Limit: 100, Remaining: 99, ResetAfter: 600 * time.Millisecond},
		{Allowed: true, Limit: 1000, Remaining: 5, ResetAfter: 3599*time.Second + 1},
	}
	cases := []struct {
		mode Mode
		want map[string]string
	}{
		{Draft07, map[string]string{
			hdrRateLimit:       "limit=1000, remaining=5, reset=3600",
			hdrRateLimitPolicy: "100;w=60, 1000;w=3600",
		}},
		{Draft06, map[string]string{
			hdrLimit: "1000", hdrRemaining: "5", hdrReset: "3600",
			hdrRateLimitPolicy: "100;w=60, 1000;w=3600",
		}},
		{XRateLimit, map[string]string{hdrXLimit: "1000", hdrXRemaining: "5", hdrXReset: "3600"}},
		{None, map[string]string{}},
	}
	for _, c := range cases {
		t.Run(strconv.Itoa(int(c.mode)), func(t *testing.T) {
			rec := sink.NewRecorder()
			mustSet(t, c.mode, a, b).WriteHeaders(rec, ds, 1, nil)
			if len(rec.H) != len(c.want) {
				t.Errorf("fields %v, want %v", rec.H, c.want)
			}
			for k, v := range c.want {
				if got := rec.H.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if c.mode == Draft07 {
				d, err := httpsfv.UnmarshalDictionary(rec.H.Values(hdrRateLimit))
				if err != nil {
					t.Fatal(err)
				}
				if m, _ := d.Get("remaining"); m.(httpsfv.Item).Value != int64(5) {
					t.Errorf("remaining = %v", m)
				}
			}
		})
	}
}

func TestSecondsRounding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d          time.Duration
		ceil, retr int64
	}{
		{0, 0, 1}, {-time.Second, 0, 1}, {time.Microsecond, 1, 1}, {time.Second, 1, 1},
		{time.Second + time.Microsecond, 2, 2}, {59*time.Second + 999*time.Millisecond, 60, 60},
	} {
		if got := ceilSeconds(c.d); got != c.ceil {
			t.Errorf("ceilSeconds(%v) = %d, want %d", c.d, got, c.ceil)
		}
		if got := retryAfterSeconds(c.d); got != c.retr {
			t.Errorf("retryAfterSeconds(%v) = %d, want %d", c.d, got, c.retr)
		}
	}
}

func TestRemainingNeverNegative(t *testing.T) {
	t.Parallel()
	p := core.Policy{Name: "p", Limit: 3, Window: time.Second}
	rec := sink.NewRecorder()
	mustSet(t, XRateLimit, p).WriteHeaders(rec, []core.Decision{{Remaining: -4, Limit: 3, RetryAfter: time.Second}}, 0, nil)
	if got := rec.H.Get(hdrXRemaining); got != "0" {
		t.Errorf("remaining %q, want 0", got)
	}
}

func TestPolicySetRejectsDuplicateNames(t *testing.T) {
	t.Parallel()
	p := core.Policy{Name: "x", Limit: 1, Window: time.Second}
	q := core.Policy{Name: "x", Limit: 2, Window: time.Second}
	if _, err := NewSet(Draft11, []core.Policy{p, q}); err == nil {
		t.Fatal("duplicate names accepted")
	}
	if _, err := NewSet(Draft11, []core.Policy{{Limit: 0, Window: time.Second}}); err == nil {
		t.Fatal("invalid policy accepted")
	}
}

// TestPreparedDeniedBodies: the cached 429 bodies are exactly
// DeniedProblem's, the default denied handler's, for every set of violated policies, and sets too
// large to cache still get theirs.
func TestPreparedDeniedBodies(t *testing.T) {
	t.Parallel()
	ps := []core.Policy{core.MustParsePolicy("1/s;name=a"), core.MustParsePolicy("2/s;name=b"), core.MustParsePolicy("3/s;name=c")}
	set := mustSet(t, Draft11, ps...)
	for mask := 1; mask < 8; mask++ {
		res := core.Result{Decisions: make([]core.Decision, 3), Policies: ps}
		for i := range ps {
			res.Decisions[i] = core.Decision{Allowed: mask&(1<<i) == 0}
		}
		for range 2 { // built, then cached
			want := DeniedProblem(res)
			if got := set.DeniedBody(res); string(got) != string(want) {
				t.Fatalf("mask %b: %s, want %s", mask, got, want)
			}
		}
	}
	var many []core.Policy
	for i := range maxPreparedPolicies + 1 {
		many = append(many, core.MustParsePolicy("1/s;name=p"+strconv.Itoa(i)))
	}
	big := mustSet(t, Draft11, many...)
	res := core.Result{Decisions: make([]core.Decision, len(many)), Policies: many}
	for i := 1; i < len(many); i++ {
		res.Decisions[i].Allowed = true
	}
	if !strings.Contains(string(big.DeniedBody(res)), `"p0"`) {
		t.Fatal("a large set's body does not name the violated policy")
	}
}

// sharedRecorder is a Response over an http.Header that takes shared
// values as they are, like the stdhttp adapter.
type sharedRecorder struct{ sink.Recorder }

func (r *sharedRecorder) SetSharedHeader(name string, values []string) { r.H[name] = values }

// TestPreparedDenials: the prepared fields of a single-policy denial are
// exactly those rendered per request, Retry-After included, in every
// header mode, for Retry-After values that share a slot and on the second
// use of each (from the cache); denials they do not cover (something
// remaining, two policies) are rendered as before.
func TestPreparedDenials(t *testing.T) {
	t.Parallel()
	p := core.MustParsePolicy("100/1h;name=api")
	q := core.MustParsePolicy("5/s;name=b")
	denial := func(retry time.Duration, remaining int, ps ...core.Policy) core.Result {
		r := core.Result{}
		for _, p := range ps {
			r.Decisions = append(r.Decisions, core.Decision{Limit: p.Limit, Remaining: remaining, RetryAfter: retry, ResetAfter: time.Hour})
		}
		return r
	}
	// rendered is what the middleware wrote before fields were prepared.
	rendered := func(s *Set, r core.Result) http.Header {
		rec := sink.NewRecorder()
		s.WriteHeaders(rec, r.Decisions, r.Binding, nil)
		rec.SetHeader(hdrRetryAfter, strconv.FormatInt(retryAfterSeconds(r.Decision().RetryAfter), 10))
		return rec.H
	}
	retries := []time.Duration{time.Millisecond, time.Second, 1500 * time.Millisecond, 63 * time.Second, 65 * time.Second, denialSlots*time.Second + time.Second, 59 * time.Minute}
	for mode := range None + 1 {
		s, many := mustSet(t, mode, p), mustSet(t, mode, p, q)
		for _, retry := range retries {
			for _, c := range []struct {
				set      *Set
				r        core.Result
				prepared bool
			}{
				{s, denial(retry, 0, p), true},
				{s, func() core.Result { r := denial(retry, 0, p); r.Decisions[0].Limit = 7; return r }(), true},
				{s, denial(retry, 3, p), false},
				{many, denial(retry, 0, p, q), false},
			} {
				for range 2 {
					if got := c.set.writePreparedDenial(sink.NewRecorder(), c.r.Decisions); got != c.prepared {
						t.Fatalf("%v, retry %v, %d policies, remaining %d: prepared %v, want %v", mode, retry, len(c.r.Decisions), c.r.Decisions[0].Remaining, got, c.prepared)
					}
					plain, shared := sink.NewRecorder(), &sharedRecorder{*sink.NewRecorder()}
					c.set.WriteDenial(plain, c.r, nil)
					c.set.WriteDenial(shared, c.r, nil)
					want := rendered(c.set, c.r)
					if !reflect.DeepEqual(plain.H, want) || !reflect.DeepEqual(shared.H, want) {
						t.Fatalf("%v, retry %v: fields %v and, shared, %v; want %v", mode, retry, plain.H, shared.H, want)
					}
				}
			}
		}
	}
}

// TestSharedDenialValuesStayTrue: code after the middleware that writes
// into a denial's header values in place, or appends to them, changes its
// own response and not the next one's.
func TestSharedDenialValuesStayTrue(t *testing.T) {
	t.Parallel()
	s := mustSet(t, Draft11, core.MustParsePolicy("100/1h;name=api"))
	r := core.Result{Decisions: []core.Decision{{Limit: 100, RetryAfter: 30 * time.Second}}}
	first := &sharedRecorder{*sink.NewRecorder()}
	s.WriteDenial(first, r, nil)
	want := first.H.Clone()
	for name := range first.H {
		first.H[name][0] = "tampered"
		first.H[name] = append(first.H[name], "more")
	}
	next := &sharedRecorder{*sink.NewRecorder()}
	s.WriteDenial(next, r, nil)
	if !reflect.DeepEqual(next.H, want) {
		t.Fatalf("after a response's values were written into, the next denial has %v, want %v", next.H, want)
	}
	if first.H.Get(hdrRetryAfter) != "tampered" {
		t.Fatalf("the tampered response reads %v", first.H)
	}
}
