package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
)

// FuzzParsePolicy holds ParsePolicy to its contract on any input: it never
// panics; it returns either a policy that validates and survives a round trip
// through String, or a typed error matching ErrInvalidPolicy whose offset and
// part point into the input. Seeds live in testdata/fuzz/FuzzParsePolicy.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		"100/1m", "10/s;burst=20;algorithm=token_bucket", "5/5m;algorithm=sliding_log;name=otp",
		"1/1h30m", " 3 / 1.5s ; name = a b ", "1/5µs;algo=Fixed-Window", "", ";", "/", "1/0s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := core.ParsePolicy(s)
		if err != nil {
			if !errors.Is(err, core.ErrInvalidPolicy) {
				t.Fatalf("ParsePolicy(%q) error %v does not match ErrInvalidPolicy", s, err)
			}
			var pe *core.PolicyError
			switch {
			case !errors.As(err, &pe):
				t.Fatalf("ParsePolicy(%q) error %T is not a *PolicyError", s, err)
			case pe.Field == "":
				if pe.Input != s || pe.Offset < 0 || pe.Offset > len(s) || !strings.HasPrefix(s[pe.Offset:], pe.Value) {
					t.Fatalf("ParsePolicy(%q): Offset %d and Value %q do not point into the input", s, pe.Offset, pe.Value)
				}
			}
			if p != (core.Policy{}) {
				t.Fatalf("ParsePolicy(%q) returned %+v with an error", s, p)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParsePolicy(%q) = %+v, which does not validate: %v", s, p, err)
		}
		str := p.String()
		back, err := core.ParsePolicy(str)
		if err != nil {
			t.Fatalf("ParsePolicy(%q) = %+v; its String %q does not parse: %v", s, p, str, err)
		}
		if back != p {
			t.Fatalf("round trip of %q via %q: %+v != %+v", s, str, back, p)
		}
		if back.String() != str {
			t.Fatalf("String is not stable: %q then %q", str, back.String())
		}
	})
}
