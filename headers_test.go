package ratelimit

import (
	"strconv"
	"testing"
)

func TestParseHeaderMode(t *testing.T) {
	for m := HeadersDraft11; m <= HeadersNone; m++ {
		got, err := ParseHeaderMode(" " + m.String() + " ")
		if err != nil || got != m {
			t.Errorf("ParseHeaderMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if m, err := ParseHeaderMode("X-RateLimit"); err != nil || m != HeadersXRateLimit {
		t.Errorf(`ParseHeaderMode("X-RateLimit") = %v, %v`, m, err)
	}
	if _, err := ParseHeaderMode("draft99"); err == nil {
		t.Error("unknown mode accepted")
	}
	if HeaderMode(9).String() != "HeaderMode("+strconv.Itoa(9)+")" {
		t.Error("String of an unknown mode")
	}
}
