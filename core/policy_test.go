package core_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

func TestPolicyValidateRejects(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", core.MaxNameLen+1)
	tests := []struct {
		name     string
		p        core.Policy
		field    string
		value    string // must appear in the message
		sentinel error
	}{
		{"zero limit", core.Policy{Window: time.Second}, "limit", "0", core.ErrInvalidPolicy},
		{"negative limit", core.Policy{Limit: -3, Window: time.Second}, "limit", "-3", core.ErrInvalidPolicy},
		{"limit above max", core.Policy{Limit: core.MaxLimit + 1, Window: time.Hour}, "limit", "1000000001", core.ErrInvalidPolicy},
		{"sliding log limit above its max", core.Policy{Limit: maxLogLimit + 1, Window: time.Hour, Algorithm: core.SlidingLog}, "limit", "100001", core.ErrInvalidPolicy},
		{"missing window", core.Policy{Limit: 10}, "window", "0s", core.ErrInvalidPolicy},
		{"burst on a fixed window", core.Policy{Limit: 10, Window: time.Minute, Burst: 20, Algorithm: core.FixedWindow}, "burst", "20", core.ErrInvalidPolicy},
		{"burst on a sliding window", core.Policy{Limit: 10, Window: time.Minute, Burst: 7, Algorithm: core.SlidingWindow}, "burst", "7", core.ErrInvalidPolicy},
		{"negative window", core.Policy{Limit: 10, Window: -time.Second}, "window", "-1s", core.ErrInvalidPolicy},
		{"window above max", core.Policy{Limit: 10, Window: maxWindow + time.Microsecond}, "window", (maxWindow + time.Microsecond).String(), core.ErrInvalidPolicy},
		{"sub-microsecond window", core.Policy{Limit: 1, Window: 999 * time.Nanosecond}, "window", "999ns", core.ErrInvalidPolicy},
		{"window not whole microseconds", core.Policy{Limit: 1, Window: time.Second + time.Nanosecond}, "window", "1.000000001s", core.ErrInvalidPolicy},
		{"negative burst", core.Policy{Limit: 10, Window: time.Second, Burst: -1}, "burst", "-1", core.ErrInvalidPolicy},
		{"burst above max", core.Policy{Limit: 10, Window: time.Second, Burst: core.MaxLimit + 1}, "burst", "1000000001", core.ErrInvalidPolicy},
		{"burst times interval too long", core.Policy{Limit: 1, Window: maxWindow, Burst: 1_000_000, Algorithm: core.GCRA}, "burst", "1000000", core.ErrInvalidPolicy},
		{"rate faster than one per microsecond", core.Policy{Limit: 1001, Window: time.Millisecond, Algorithm: core.TokenBucket}, "limit", "1001", core.ErrInvalidPolicy},
		{"default algorithm is rate based", core.Policy{Limit: 2, Window: time.Microsecond}, "limit", "2", core.ErrInvalidPolicy},
		{"unknown algorithm", core.Policy{Limit: 1, Window: time.Second, Algorithm: "leaky"}, "algorithm", `"leaky"`, core.ErrUnknownAlgorithm},
		{"algorithm in upper case", core.Policy{Limit: 1, Window: time.Second, Algorithm: "GCRA"}, "algorithm", `"GCRA"`, core.ErrUnknownAlgorithm},
		{"name too long", core.Policy{Name: long, Limit: 1, Window: time.Second}, "name", "129 bytes", core.ErrInvalidPolicy},
		{"name with newline", core.Policy{Name: "a\nb", Limit: 1, Window: time.Second}, "name", "0x0a", core.ErrInvalidPolicy},
		{"name with DEL", core.Policy{Name: "a\x7f", Limit: 1, Window: time.Second}, "name", "0x7f", core.ErrInvalidPolicy},
		{"name with UTF-8", core.Policy{Name: "minute\u00b7", Limit: 1, Window: time.Second}, "name", "0xc2", core.ErrInvalidPolicy},
		{"name with NUL", core.Policy{Name: "\x00", Limit: 1, Window: time.Second}, "name", "0x00", core.ErrInvalidPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want an error", tt.p)
			}
			var pe *core.PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *PolicyError", err, err)
			}
			if pe.Field != tt.field {
				t.Errorf("Field = %q, want %q", pe.Field, tt.field)
			}
			if !errors.Is(err, core.ErrInvalidPolicy) {
				t.Errorf("errors.Is(%v, ErrInvalidPolicy) = false", err)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.sentinel)
			}
			if errors.Is(err, core.ErrInvalidCost) || errors.Is(err, core.ErrInvalidKey) {
				t.Errorf("%v matches an unrelated sentinel", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.field) || !strings.Contains(msg, tt.value) {
				t.Errorf("message %q does not name field %q and value %q", msg, tt.field, tt.value)
			}
			if tt.p.Name != "" && tt.field != "name" && !strings.Contains(msg, tt.p.Name) {
				t.Errorf("message %q does not name the policy %q", msg, tt.p.Name)
			}
			if _, perr := tt.p.Params(); perr == nil || perr.Error() != msg {
				t.Errorf("Params error %v differs from Validate error %v", perr, err)
			}
		})
	}
}

func TestPolicyErrorNamesPolicy(t *testing.T) {
	t.Parallel()
	err := core.Policy{Name: "per-minute", Limit: 0, Window: time.Minute}.Validate()
	if err == nil || !strings.Contains(err.Error(), `"per-minute"`) {
		t.Fatalf("error %v does not name the policy", err)
	}
}

func TestPolicyParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    core.Policy
		want core.Params
	}{
		{core.Policy{Limit: 100, Window: time.Minute, Algorithm: core.FixedWindow},
			core.Params{Algorithm: core.FixedWindow, Limit: 100, Burst: 100, Window: 60e6, Capacity: 100}},
		{core.Policy{Limit: maxLogLimit, Window: time.Minute, Algorithm: core.SlidingLog},
			core.Params{Algorithm: core.SlidingLog, Limit: maxLogLimit, Burst: maxLogLimit, Window: 60e6, Capacity: maxLogLimit}},
		// Empty algorithm resolves to GCRA; 10/s gives a 100ms interval.
		{core.Policy{Limit: 10, Window: time.Second},
			core.Params{Algorithm: core.GCRA, Limit: 10, Burst: 10, Window: 1e6, Interval: 1e5, Tolerance: 1e6, Capacity: 10}},
		// 3 per 10µs: the interval rounds up, never admitting faster than the rate.
		{core.Policy{Limit: 3, Window: 10 * time.Microsecond, Algorithm: core.TokenBucket},
			core.Params{Algorithm: core.TokenBucket, Limit: 3, Burst: 3, Window: 10, Interval: 4, Tolerance: 12, Capacity: 3}},
		{core.Policy{Limit: 100, Window: time.Minute, Burst: 20, Algorithm: core.LeakyBucket},
			core.Params{Algorithm: core.LeakyBucket, Limit: 100, Burst: 20, Window: 60e6, Interval: 600_000, Tolerance: 12_000_000, Capacity: 20}},
		// One unit per microsecond is the finest rate.
		{core.Policy{Limit: 1000, Window: time.Millisecond, Algorithm: core.GCRA},
			core.Params{Algorithm: core.GCRA, Limit: 1000, Burst: 1000, Window: 1000, Interval: 1, Tolerance: 1000, Capacity: 1000}},
		// Largest values accepted.
		{core.Policy{Name: strings.Repeat("~", core.MaxNameLen), Limit: core.MaxLimit, Window: maxWindow, Algorithm: core.FixedWindow},
			core.Params{Algorithm: core.FixedWindow, Limit: core.MaxLimit, Burst: core.MaxLimit, Window: int64(maxWindow / time.Microsecond), Capacity: core.MaxLimit}},
	}
	for _, tt := range tests {
		got, err := tt.p.Params()
		if err != nil {
			t.Errorf("%+v: Params: %v", tt.p, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%+v: Params = %+v, want %+v", tt.p, got, tt.want)
		}
		if int64(tt.p.Capacity()) != got.Capacity {
			t.Errorf("%+v: Capacity() = %d, Params.Capacity = %d", tt.p, tt.p.Capacity(), got.Capacity)
		}
	}
}

func TestPolicyCheckCost(t *testing.T) {
	t.Parallel()
	win := core.Policy{Name: "w", Limit: 5, Window: time.Second, Burst: 50, Algorithm: core.FixedWindow}
	tb := core.Policy{Name: "tb", Limit: 5, Window: time.Second, Burst: 50, Algorithm: core.TokenBucket}
	tests := []struct {
		p        core.Policy
		cost     int
		sentinel error
	}{
		{win, 1, nil},
		{win, 5, nil},
		{win, 6, core.ErrCostExceedsCapacity}, // burst ignored by window algorithms
		{tb, 50, nil},
		{tb, 51, core.ErrCostExceedsCapacity},
		{tb, 0, core.ErrInvalidCost},
		{tb, -1, core.ErrInvalidCost},
	}
	for _, tt := range tests {
		err := tt.p.CheckCost(tt.cost)
		if tt.sentinel == nil {
			if err != nil {
				t.Errorf("%s cost %d: %v", tt.p.Name, tt.cost, err)
			}
			continue
		}
		var ce *core.CostError
		if !errors.As(err, &ce) || !errors.Is(err, tt.sentinel) {
			t.Errorf("%s cost %d: error %v, want a *CostError matching %v", tt.p.Name, tt.cost, err, tt.sentinel)
			continue
		}
		if ce.Cost != tt.cost || ce.Capacity != tt.p.Capacity() {
			t.Errorf("CostError = %+v", ce)
		}
		if errors.Is(err, core.ErrInvalidPolicy) {
			t.Errorf("cost error %v matches ErrInvalidPolicy", err)
		}
		if !strings.Contains(err.Error(), "cost "+strconv.Itoa(tt.cost)) {
			t.Errorf("message %q does not name the cost", err)
		}
	}
}

func TestPolicyStringRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    core.Policy
		want string
	}{
		{core.Policy{Limit: 100, Window: time.Minute}, "100/1m"},
		{core.Policy{Limit: 10, Window: time.Second, Burst: 20, Algorithm: core.TokenBucket, Name: "api"}, "10/1s;burst=20;algorithm=token_bucket;name=api"},
		{core.Policy{Limit: 5, Window: 48 * time.Hour, Algorithm: core.SlidingLog, Name: "otp"}, "5/2d;algorithm=sliding_log;name=otp"},
		{core.Policy{Limit: 5, Window: 90 * time.Minute}, "5/90m"},
		{core.Policy{Limit: 5, Window: 1500 * time.Millisecond}, "5/1500ms"},
		{core.Policy{Limit: 1, Window: 1001 * time.Microsecond, Algorithm: core.FixedWindow}, "1/1001us;algorithm=fixed_window"},
		{core.Policy{Limit: 1, Window: maxWindow, Name: "a=b c"}, "1/366d;name=a=b c"},
	}
	for _, tt := range tests {
		s := tt.p.String()
		if s != tt.want {
			t.Errorf("String() = %q, want %q", s, tt.want)
		}
		back, err := core.ParsePolicy(s)
		if err != nil {
			t.Errorf("ParsePolicy(%q): %v", s, err)
			continue
		}
		if back != tt.p {
			t.Errorf("ParsePolicy(%q) = %+v, want %+v", s, back, tt.p)
		}
	}
}

func TestAlgorithmMethods(t *testing.T) {
	t.Parallel()
	all := core.Algorithms()
	if len(all) != 6 {
		t.Fatalf("Algorithms() has %d entries, want 6", len(all))
	}
	all[0] = "mutated"
	if core.Algorithms()[0] != core.FixedWindow {
		t.Fatal("Algorithms() shares its backing array between calls")
	}
	rate := map[core.Algorithm]bool{core.TokenBucket: true, core.GCRA: true, core.LeakyBucket: true, "": true}
	for _, a := range append(core.Algorithms(), "") {
		if a != "" {
			if got, err := core.ParseAlgorithm(string(a)); err != nil || got != a {
				t.Errorf("ParseAlgorithm(%q) = %q, %v", a, got, err)
			}
		}
		if err := (core.Policy{Limit: 10, Window: time.Second, Burst: 20, Algorithm: a}).Validate(); (err == nil) != rate[a] {
			t.Errorf("%q with a burst: %v", a, err)
		}
	}
	if (core.Policy{}).Identity().Algorithm != core.GCRA || (core.Policy{Algorithm: core.FixedWindow}).Identity().Algorithm != core.FixedWindow {
		t.Error("an empty algorithm is not GCRA, or another is not kept")
	}
	if err := (core.Policy{Limit: 1, Window: time.Second, Algorithm: "token-bucket"}).Validate(); !errors.Is(err, core.ErrUnknownAlgorithm) {
		t.Errorf(`a policy of algorithm "token-bucket": %v; only ParseAlgorithm normalises`, err)
	}
}

func TestParseAlgorithm(t *testing.T) {
	t.Parallel()
	good := map[string]core.Algorithm{
		"fixed_window": core.FixedWindow, "Sliding-Log": core.SlidingLog, " SLIDING_WINDOW ": core.SlidingWindow,
		"token-bucket": core.TokenBucket, "gcra": core.GCRA, "leaky_bucket": core.LeakyBucket,
	}
	for in, want := range good {
		got, err := core.ParseAlgorithm(in)
		if err != nil || got != want {
			t.Errorf("ParseAlgorithm(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "leaky", "token bucket", "gcra2", "fixed_window\x00"} {
		got, err := core.ParseAlgorithm(in)
		var pe *core.PolicyError
		if err == nil || !errors.As(err, &pe) || pe.Field != "algorithm" {
			t.Errorf("ParseAlgorithm(%q) = %q, %v; want a *PolicyError for the algorithm", in, got, err)
			continue
		}
		if !errors.Is(err, core.ErrUnknownAlgorithm) || !errors.Is(err, core.ErrInvalidPolicy) {
			t.Errorf("ParseAlgorithm(%q) error %v does not match both sentinels", in, err)
		}
		if !strings.Contains(err.Error(), "gcra") {
			t.Errorf("message %q does not list the algorithms", err)
		}
	}
}

func TestMaxDelay(t *testing.T) {
	t.Parallel()
	p, err := core.ParsePolicy("10/1s;algorithm=leaky_bucket;max_delay=250ms")
	if err != nil || p.MaxDelay != 250*time.Millisecond {
		t.Fatalf("parse: %+v %v", p, err)
	}
	if again, err := core.ParsePolicy(p.String()); err != nil || again != p {
		t.Fatalf("String %q parses to %+v %v", p.String(), again, err)
	}
	for _, s := range []string{"10/1s;max_delay=1s", "10/1s;algorithm=fixed_window;max_delay=1s", "10/1s;algorithm=leaky_bucket;max_delay=x"} {
		if _, err := core.ParsePolicy(s); !errors.Is(err, core.ErrInvalidPolicy) || !strings.Contains(err.Error(), "max_delay") {
			t.Errorf("%q: %v, want an invalid-policy error naming max_delay", s, err)
		}
	}
	for _, d := range []time.Duration{-time.Second, time.Second + 1} {
		p := core.Policy{Limit: 1, Window: time.Second, Algorithm: core.LeakyBucket, MaxDelay: d}
		var pe *core.PolicyError
		if err := p.Validate(); !errors.As(err, &pe) || pe.Field != "max_delay" {
			t.Errorf("MaxDelay %v: %v", d, err)
		}
	}
}

func TestShadowPolicy(t *testing.T) {
	t.Parallel()
	p, err := core.ParsePolicy("100/1m;name=api-next;shadow=true")
	if err != nil || !p.Shadow {
		t.Fatalf("parse: %+v %v", p, err)
	}
	if again, err := core.ParsePolicy(p.String()); err != nil || again != p {
		t.Fatalf("String %q parses to %+v %v", p.String(), again, err)
	}
	enforced := p
	enforced.Shadow = false
	if p.Identity() != enforced.Identity() {
		t.Fatal("ending a rollout (clearing Shadow) must keep the state")
	}
	if _, err := core.ParsePolicy("1/s;shadow=maybe"); !errors.Is(err, core.ErrInvalidPolicy) {
		t.Fatalf("shadow=maybe: %v", err)
	}
}

// The bounds Validate documents.
const (
	maxWindow   = 366 * 24 * time.Hour
	maxLogLimit = 100_000
)
