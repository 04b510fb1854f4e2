package core

import (
	"fmt"
	"strings"
)

// Algorithm names a rate-limiting algorithm. The zero value selects
// GCRA.
type Algorithm string

// The six algorithms. Their exact semantics are documented in package
// core/algo.
const (
	// FixedWindow counts units in aligned windows starting at
	// floor(now/Window)*Window. Cheapest; admits up to 2x Limit across a
	// window edge.
	FixedWindow Algorithm = "fixed_window"
	// SlidingLog keeps one timestamp per admitted unit and is exact over any
	// trailing window. Memory grows with Limit.
	SlidingLog Algorithm = "sliding_log"
	// SlidingWindow is the sliding window counter: previous*(1-elapsed/window)
	// + current. Two counters per key, a close approximation of SlidingLog.
	SlidingWindow Algorithm = "sliding_window"
	// TokenBucket holds up to Burst tokens, refilled at Limit per Window.
	TokenBucket Algorithm = "token_bucket"
	// GCRA is the generic cell rate algorithm: one timestamp per key, the
	// same decisions as TokenBucket with exact spacing.
	GCRA Algorithm = "gcra"
	// LeakyBucket is the queue form of the leaky bucket: admitted units join
	// a queue of Burst units that drains at Limit per Window, and
	// Decision.Delay says how long to hold a request so that admitted
	// requests leave at a constant rate.
	LeakyBucket Algorithm = "leaky_bucket"
	// Concurrency limits the checks in flight: Limit slots, each taken by
	// an admitted check and held until given back (an OpRefund at the
	// check's instant) or for Window, its lifetime. Stores keep it as a
	// SlidingLog; it is not in Algorithms.
	Concurrency Algorithm = "concurrency"
)

// defaultAlgorithm is used when Policy.Algorithm is empty.
const defaultAlgorithm = GCRA

// Algorithms lists every supported algorithm, in a stable order.
func Algorithms() []Algorithm {
	return []Algorithm{FixedWindow, SlidingLog, SlidingWindow, TokenBucket, GCRA, LeakyBucket}
}

// ParseAlgorithm returns the Algorithm named by s. It accepts the constant
// values ("fixed_window", "gcra", "concurrency", ...), case-insensitively
// and with '-' in place of '_'. Anything else yields an error wrapping
// ErrUnknownAlgorithm.
func ParseAlgorithm(s string) (Algorithm, error) {
	norm := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	for _, a := range append(Algorithms(), Concurrency) {
		if string(a) == norm {
			return a, nil
		}
	}
	return "", &PolicyError{Field: "algorithm", Value: fmt.Sprintf("%q", s), Reason: "unknown algorithm; want one of " + algorithmList(), Err: ErrUnknownAlgorithm}
}

// valid reports whether a is one of the six algorithms, Concurrency, or
// empty (the default).
func (a Algorithm) valid() bool {
	switch a {
	case "", FixedWindow, SlidingLog, SlidingWindow, TokenBucket, GCRA, LeakyBucket, Concurrency:
		return true
	}
	return false
}

// resolve returns a, or GCRA when a is empty.
func (a Algorithm) resolve() Algorithm {
	if a == "" {
		return defaultAlgorithm
	}
	return a
}

// rateBased reports whether the algorithm is driven by an emission rate and a
// burst capacity (TokenBucket, GCRA, LeakyBucket) rather than by counting
// units in windows.
func (a Algorithm) rateBased() bool {
	switch a.resolve() {
	case TokenBucket, GCRA, LeakyBucket:
		return true
	}
	return false
}

func algorithmList() string {
	var b strings.Builder
	for i, a := range append(Algorithms(), Concurrency) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(a))
	}
	return b.String()
}
