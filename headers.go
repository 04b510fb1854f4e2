package ratelimit

import "strconv"

// HeaderMode selects the rate-limit header fields written on every checked
// response. The zero value is HeadersDraft11, the default.
type HeaderMode uint8

const (
	// HeadersDraft11 writes the structured fields of drafts 08 to 11 of
	// draft-ietf-httpapi-ratelimit-headers, one list member per policy:
	//
	//	RateLimit-Policy: "api";q=100;w=60
	//	RateLimit: "api";r=42;t=17
	//
	// q is the policy's Limit, w its Window in seconds, r the units
	// remaining and t the seconds until the quota is full again or, for a
	// policy that denied the request, until the request can succeed.
	HeadersDraft11 HeaderMode = iota
	// HeadersDraft07 writes draft 07's dictionary for the binding policy
	// and a list of every policy:
	//
	//	RateLimit: limit=100, remaining=42, reset=17
	//	RateLimit-Policy: 100;w=60
	HeadersDraft07
	// HeadersDraft06 writes draft 06's three integer fields for the binding
	// policy and a list of every policy:
	//
	//	RateLimit-Limit: 100
	//	RateLimit-Remaining: 42
	//	RateLimit-Reset: 17
	//	RateLimit-Policy: 100;w=60
	HeadersDraft06
	// HeadersXRateLimit writes the legacy trio for the binding policy, with
	// X-RateLimit-Reset in seconds from now (not a Unix time):
	//
	//	X-RateLimit-Limit: 100
	//	X-RateLimit-Remaining: 42
	//	X-RateLimit-Reset: 17
	HeadersXRateLimit
	// HeadersNone writes no rate-limit fields. A 429 still carries
	// Retry-After.
	HeadersNone
)

var headerModeNames = [...]string{"draft11", "draft07", "draft06", "x_ratelimit", "none"}

// String returns the mode's name, in snake case like every
// String of the project: "draft11", "draft07", "draft06", "x_ratelimit" or
// "none".
func (m HeaderMode) String() string {
	if int(m) < len(headerModeNames) {
		return headerModeNames[m]
	}
	return "HeaderMode(" + strconv.Itoa(int(m)) + ")"
}

func (m HeaderMode) valid() bool { return int(m) < len(headerModeNames) }
