package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

func TestParsePolicyGood(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want core.Policy
	}{
		{"100/1m", core.Policy{Limit: 100, Window: time.Minute}},
		{"100/m", core.Policy{Limit: 100, Window: time.Minute}},
		{"100/min", core.Policy{Limit: 100, Window: time.Minute}},
		{"10/s", core.Policy{Limit: 10, Window: time.Second}},
		{"10/sec", core.Policy{Limit: 10, Window: time.Second}},
		{"10/S", core.Policy{Limit: 10, Window: time.Second}},
		{"1/h", core.Policy{Limit: 1, Window: time.Hour}},
		{"1/2hour", core.Policy{Limit: 1, Window: 2 * time.Hour}},
		{"1/d", core.Policy{Limit: 1, Window: 24 * time.Hour}},
		{"1/7day", core.Policy{Limit: 1, Window: 7 * 24 * time.Hour}},
		{"1/366d", core.Policy{Limit: 1, Window: maxWindow}},
		{"5/250ms", core.Policy{Limit: 5, Window: 250 * time.Millisecond}},
		{"1/5us;algorithm=fixed_window", core.Policy{Limit: 1, Window: 5 * time.Microsecond, Algorithm: core.FixedWindow}},
		{"1/5µs;algorithm=fixed_window", core.Policy{Limit: 1, Window: 5 * time.Microsecond, Algorithm: core.FixedWindow}},
		{"1/1h30m", core.Policy{Limit: 1, Window: 90 * time.Minute}},
		{"3/1.5s", core.Policy{Limit: 3, Window: 1500 * time.Millisecond}},
		{"007/s", core.Policy{Limit: 7, Window: time.Second}},
		{"1000000000/366d;algorithm=fixed_window", core.Policy{Limit: core.MaxLimit, Window: maxWindow, Algorithm: core.FixedWindow}},
		{"10/s;burst=20;algorithm=token_bucket", core.Policy{Limit: 10, Window: time.Second, Burst: 20, Algorithm: core.TokenBucket}},
		{"5/5m;algorithm=sliding_log;name=otp", core.Policy{Limit: 5, Window: 5 * time.Minute, Algorithm: core.SlidingLog, Name: "otp"}},
		{" 10 / s ; burst = 0 ; algo = Leaky-Bucket ; name = per second ", core.Policy{Limit: 10, Window: time.Second, Algorithm: core.LeakyBucket, Name: "per second"}},
		{"10/s;NAME=x;Burst=3", core.Policy{Limit: 10, Window: time.Second, Burst: 3, Name: "x"}},
		{"10/s;name=a=b", core.Policy{Limit: 10, Window: time.Second, Name: "a=b"}},
		{"\t10/s\t;\tname=t", core.Policy{Limit: 10, Window: time.Second, Name: "t"}},
	}
	for _, tt := range tests {
		got, err := core.ParsePolicy(tt.in)
		if err != nil {
			t.Errorf("ParsePolicy(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParsePolicy(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if again, err := core.ParsePolicy(got.String()); err != nil || again != got {
			t.Errorf("round trip of %q via %q = %+v, %v", tt.in, got.String(), again, err)
		}
		if core.MustParsePolicy(tt.in) != got {
			t.Errorf("MustParsePolicy(%q) differs from ParsePolicy", tt.in)
		}
	}
}

func TestParsePolicyBad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		offset   int
		part     string
		reason   string // a fragment of PolicyError.Reason
		sentinel error
	}{
		{"", 0, "", "<limit>/<period>", core.ErrInvalidPolicy},
		{"100", 0, "100", "<limit>/<period>", core.ErrInvalidPolicy},
		{"  100 per minute", 2, "100 per minute", "<limit>/<period>", core.ErrInvalidPolicy},
		{"/1m", 0, "", "whole number", core.ErrInvalidPolicy},
		{"x/1m", 0, "x", "whole number", core.ErrInvalidPolicy},
		{"-5/1m", 0, "-5", "whole number", core.ErrInvalidPolicy},
		{"+5/1m", 0, "+5", "whole number", core.ErrInvalidPolicy},
		{"1.5/1m", 0, "1.5", "whole number", core.ErrInvalidPolicy},
		{" 1 0/1m", 1, "1 0", "whole number", core.ErrInvalidPolicy},
		{"1000000001/1m", 0, "1000000001", "out of range", core.ErrInvalidPolicy},
		{"99999999999999999999/1m", 0, "99999999999999999999", "out of range", core.ErrInvalidPolicy},
		{"100/", 4, "", "missing period", core.ErrInvalidPolicy},
		{"100/ ", 5, "", "missing period", core.ErrInvalidPolicy},
		{"100/fortnight", 4, "fortnight", "unknown period", core.ErrInvalidPolicy},
		{"100/0m", 4, "0m", "zero or out of range", core.ErrInvalidPolicy},
		{"100/367d", 4, "367d", "zero or out of range", core.ErrInvalidPolicy},
		{"100/99999999999999999999s", 4, "99999999999999999999s", "zero or out of range", core.ErrInvalidPolicy},
		{"100/0s0ms", 4, "0s0ms", "positive", core.ErrInvalidPolicy},
		{"100/-1s", 4, "-1s", "positive", core.ErrInvalidPolicy},
		{"100/1m/2", 4, "1m/2", "unknown period", core.ErrInvalidPolicy},
		{"100/1m;", 7, "", "key=value", core.ErrInvalidPolicy},
		{"100/1m;;name=x", 7, "", "key=value", core.ErrInvalidPolicy},
		{"100/1m;burst", 7, "burst", "key=value", core.ErrInvalidPolicy},
		{"100/1m; burst=x", 8, "burst=x", "burst must be", core.ErrInvalidPolicy},
		{"100/1m;burst=-1", 7, "burst=-1", "burst must be", core.ErrInvalidPolicy},
		{"100/1m;burst=+1", 7, "burst=+1", "burst must be", core.ErrInvalidPolicy},
		{"100/1m;burst=", 7, "burst=", "burst must be", core.ErrInvalidPolicy},
		{"100/1m;burst=99999999999999999999", 7, "burst=99999999999999999999", "burst must be", core.ErrInvalidPolicy},
		{"100/1m;burst=1;burst=2", 15, "burst=2", "given twice", core.ErrInvalidPolicy},
		{"100/1m;algo=gcra;algorithm=gcra", 17, "algorithm=gcra", "given twice", core.ErrInvalidPolicy},
		{"100/1m;algorithm=bogus", 7, "algorithm=bogus", "unknown algorithm", core.ErrUnknownAlgorithm},
		{"100/1m;algorithm=", 7, "algorithm=", "unknown algorithm", core.ErrUnknownAlgorithm},
		{"100/1m;name=", 7, "name=", "name must not be empty", core.ErrInvalidPolicy},
		{"100/1m;color=red", 7, "color=red", "unknown parameter", core.ErrInvalidPolicy},
		{"100/1m;=5", 7, "=5", "unknown parameter", core.ErrInvalidPolicy},
		// Offsets count bytes, and whitespace of every kind is skipped the
		// same way the part is trimmed.
		{"\n10x/s", 1, "10x", "whole number", core.ErrInvalidPolicy},
		{"10/s;\r\nbogus", 7, "bogus", "key=value", core.ErrInvalidPolicy},
		{"10/s;name=µ;x", 13, "x", "key=value", core.ErrInvalidPolicy},
	}
	for _, tt := range tests {
		_, err := core.ParsePolicy(tt.in)
		var pe *core.PolicyError
		if !errors.As(err, &pe) {
			t.Errorf("ParsePolicy(%q) error = %v (%T), want a *PolicyError", tt.in, err, err)
			continue
		}
		if pe.Input != tt.in || pe.Offset != tt.offset || pe.Value != tt.part {
			t.Errorf("ParsePolicy(%q): Offset %d Value %q, want %d %q", tt.in, pe.Offset, pe.Value, tt.offset, tt.part)
		}
		if !strings.HasPrefix(tt.in[pe.Offset:], pe.Value) {
			t.Errorf("ParsePolicy(%q): Part %q is not at Offset %d", tt.in, pe.Value, pe.Offset)
		}
		if !strings.Contains(pe.Reason, tt.reason) {
			t.Errorf("ParsePolicy(%q): Reason %q, want it to contain %q", tt.in, pe.Reason, tt.reason)
		}
		if !errors.Is(err, core.ErrInvalidPolicy) || !errors.Is(err, tt.sentinel) {
			t.Errorf("ParsePolicy(%q): %v does not match ErrInvalidPolicy and %v", tt.in, err, tt.sentinel)
		}
		msg := err.Error()
		if !strings.Contains(msg, "offset") || !strings.Contains(msg, tt.reason) {
			t.Errorf("ParsePolicy(%q): message %q lacks the offset or the reason", tt.in, msg)
		}
	}
}

// Well-formed strings that describe policies no backend can enforce fail
// with the *PolicyError of Validate.
func TestParsePolicyUnenforceable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, field string
	}{
		{"0/1m", "limit"},
		{"100001/1m;algorithm=sliding_log", "limit"},
		{"2/1us", "limit"}, // faster than one unit per microsecond under GCRA
		{"1/1ns;algorithm=fixed_window", "window"},
		{"1/1500ns;algorithm=fixed_window", "window"},
		{"1/8784h1us", "window"},
		{"10/s;burst=1000000001", "burst"},
		{"10/s;name=tab\x01", "name"},
		{"10/s;name=" + strings.Repeat("x", core.MaxNameLen+1), "name"},
	}
	for _, tt := range tests {
		_, err := core.ParsePolicy(tt.in)
		var pe *core.PolicyError
		if !errors.As(err, &pe) || pe.Field != tt.field || !errors.Is(err, core.ErrInvalidPolicy) {
			t.Errorf("ParsePolicy(%q) = %v, want a *PolicyError on %s", tt.in, err, tt.field)
		}
	}
}

func TestMustParsePolicyPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, core.ErrInvalidPolicy) {
			t.Fatalf("recovered %v, want an error matching ErrInvalidPolicy", r)
		}
	}()
	core.MustParsePolicy("nope")
}
