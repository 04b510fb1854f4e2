package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratelimit-go/ratelimit/adapter"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/sharedhdr"
)

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

// String returns the name ParseHeaderMode reads, in snake case like every
// String of the project: "draft11", "draft07", "draft06", "x_ratelimit" or
// "none".
func (m HeaderMode) String() string {
	if int(m) < len(headerModeNames) {
		return headerModeNames[m]
	}
	return "HeaderMode(" + strconv.Itoa(int(m)) + ")"
}

// ParseHeaderMode returns the HeaderMode named s (see HeaderMode.String),
// case-insensitively and with '-' read as '_' ("x-ratelimit" too); "" is the
// default, HeadersDraft11.
func ParseHeaderMode(s string) (HeaderMode, error) {
	norm := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	if norm == "" {
		return HeadersDraft11, nil
	}
	for i, n := range headerModeNames {
		if n == norm {
			return HeaderMode(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown header mode %q; want one of %s", ErrInvalidConfig, s, strings.Join(headerModeNames[:], ", "))
}

func (m HeaderMode) valid() bool { return int(m) < len(headerModeNames) }

// Canonical header names, as net/http writes them on the wire.
const (
	hdrRateLimit       = "Ratelimit"
	hdrRateLimitPolicy = "Ratelimit-Policy"
	hdrLimit           = "Ratelimit-Limit"
	hdrRemaining       = "Ratelimit-Remaining"
	hdrReset           = "Ratelimit-Reset"
	hdrXLimit          = "X-Ratelimit-Limit"
	hdrXRemaining      = "X-Ratelimit-Remaining"
	hdrXReset          = "X-Ratelimit-Reset"
	hdrRetryAfter      = "Retry-After"
)

// policySet is one group of policies checked together (the global ones, or
// one route's), with everything the header writer needs rendered once.
// It is immutable after construction and safe for concurrent use.
type policySet struct {
	mode     HeaderMode
	policies []core.Policy // the enforced ones, as configured: these go to the limiter and the headers
	shadow   []core.Policy // the shadow ones (core.Policy.Shadow), checked after an admission; nil: none
	names    []string      // display names: Name, or a generated one
	quoted   []string      // names as sf-strings, quotes included
	policyHV string        // the RateLimit-Policy value, "" when not written
	maxCap   int           // the smallest capacity: larger costs can never pass
	// denied caches the default 429 body by the set of policies that
	// denied (bit i: policy i), built on first use, so that a flood of
	// denied requests marshals nothing. Sets of more than maxPreparedPolicies
	// policies build the body per request.
	denied []atomic.Pointer[[]byte]
	// denials caches the header fields of the usual denial of a set with
	// one enforced policy (nothing remaining, Retry-After n seconds), by n
	// modulo its length, built on first use and shared between responses,
	// so that a flood of denied requests formats and allocates nothing for
	// them. nil for larger sets, whose fields depend on every policy's
	// numbers.
	denials *[denialSlots]atomic.Pointer[preparedDenial]
}

// denialSlots is the number of Retry-After values whose denial fields a
// single-policy set keeps: every value of a window up to a minute, and the
// values a flood meets at once for longer ones.
const denialSlots = 64

// preparedDenial is every header field of one denial, Retry-After
// included, rendered once.
type preparedDenial struct {
	n      int64 // the Retry-After, in seconds
	limit  int   // the decision's Limit, which draft 06 and the X- trio print
	fields []preparedField
}

type preparedField struct {
	name string
	v    *sharedhdr.Value
}

// preparedFields collects the fields writeHeaders sets, to prepare a
// denial.
type preparedFields []preparedField

func (f *preparedFields) SetHeader(name, value string) {
	*f = append(*f, preparedField{name, sharedhdr.New(value)})
}

func (*preparedFields) Write(int, string, []byte) error { return nil }

// writeDenial sets the header fields of the denial result, Retry-After
// included, on res: the prepared ones when the set has them for it, else
// rendered in buf, whose grown form it returns for reuse.
func (s *policySet) writeDenial(res adapter.Response, result core.Result, buf []byte) []byte {
	if s.writePreparedDenial(res, result.Decisions) {
		return buf
	}
	buf = s.writeHeaders(res, result.Decisions, result.Binding, buf)
	buf = strconv.AppendInt(buf[:0], retryAfterSeconds(result.Decision().RetryAfter), 10)
	setHeaderBytes(res, hdrRetryAfter, buf)
	return buf
}

// writePreparedDenial writes the prepared fields of a denial by the set's
// single enforced policy with nothing remaining, the denial of a client
// over its limit, and reports whether it did.
func (s *policySet) writePreparedDenial(res adapter.Response, ds []core.Decision) bool {
	if s.denials == nil || len(ds) != 1 || ds[0].Allowed || remaining(&ds[0]) != 0 {
		return false
	}
	n := retryAfterSeconds(ds[0].RetryAfter)
	slot := &s.denials[n%denialSlots]
	pd := slot.Load()
	if pd == nil || pd.n != n || pd.limit != ds[0].Limit {
		var f preparedFields
		var buf [64]byte
		s.writeHeaders(&f, ds, 0, buf[:0])
		f.SetHeader(hdrRetryAfter, strconv.FormatInt(n, 10))
		pd = &preparedDenial{n: n, limit: ds[0].Limit, fields: f}
		slot.Store(pd)
	}
	if sh, ok := res.(adapter.SharedHeaderSetter); ok {
		for i := range pd.fields {
			sh.SetSharedHeader(pd.fields[i].name, pd.fields[i].v.Slice())
		}
		return true
	}
	for i := range pd.fields {
		res.SetHeader(pd.fields[i].name, pd.fields[i].v.String())
	}
	return true
}

// maxPreparedPolicies bounds the policy sets whose 429 bodies are cached
// (2^n bodies for n policies).
const maxPreparedPolicies = 6

// deniedBody returns the default 429 body for result, from the cache when
// the set is small enough.
func (s *policySet) deniedBody(result core.Result) []byte {
	result.Policies = s.policies
	var mask uint
	for i := range result.Decisions {
		if !result.Decisions[i].Allowed {
			mask |= 1 << i
		}
	}
	if s.denied == nil || int(mask) >= len(s.denied) {
		return deniedProblem(result)
	}
	if b := s.denied[mask].Load(); b != nil {
		return *b
	}
	b := deniedProblem(result)
	s.denied[mask].Store(&b)
	return b
}

// newPolicySet validates policies and renders their fixed header values.
func newPolicySet(mode HeaderMode, policies []core.Policy) (*policySet, error) {
	if len(policies) == 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, core.ErrNoPolicy)
	}
	seen := make(map[string]bool, len(policies))
	var enforced []core.Policy
	s := &policySet{mode: mode}
	for _, p := range policies {
		if err := p.Validate(); err != nil {
			return nil, err
		}
		name := PolicyName(p)
		if seen[name] {
			return nil, fmt.Errorf("%w: two policies of one check are both named %q; names must tell them apart", ErrInvalidConfig, name)
		}
		seen[name] = true
		if p.Shadow {
			s.shadow = append(s.shadow, p)
		} else {
			enforced = append(enforced, p)
		}
	}
	policies = enforced
	s.policies = enforced
	if len(enforced) <= maxPreparedPolicies {
		s.denied = make([]atomic.Pointer[[]byte], 1<<len(enforced))
	}
	if len(enforced) == 1 {
		s.denials = new([denialSlots]atomic.Pointer[preparedDenial])
	}
	s.names = make([]string, len(policies))
	s.quoted = make([]string, len(policies))
	for i, p := range policies {
		name := PolicyName(p)
		s.names[i] = name
		s.quoted[i] = string(appendSFString(nil, name))
		if c := p.Capacity(); i == 0 || c < s.maxCap {
			s.maxCap = c
		}
	}
	var b []byte
	switch mode {
	case HeadersDraft11:
		for i, p := range policies {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, s.quoted[i]...)
			b = append(b, ";q="...)
			b = strconv.AppendInt(b, int64(p.Limit), 10)
			b = append(b, ";w="...)
			b = strconv.AppendInt(b, ceilSeconds(p.Window), 10)
		}
	case HeadersDraft07, HeadersDraft06:
		for i, p := range policies {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, int64(p.Limit), 10)
			b = append(b, ";w="...)
			b = strconv.AppendInt(b, ceilSeconds(p.Window), 10)
		}
	}
	s.policyHV = string(b)
	return s, nil
}

// PolicyName returns the name a policy has in headers and problem
// documents: its Name, or when that is empty a stable name generated from
// its numbers, the policy's String form without a name ("100/1m",
// "10/1s;burst=20;algorithm=token_bucket"). The generated name is only
// shown; the policy given to the limiter stays as configured.
func PolicyName(p core.Policy) string {
	if p.Name != "" {
		return p.Name
	}
	return p.String()
}

// appendSFString appends s as a structured-field sf-string: in double
// quotes, with '"' and '\' escaped. Bytes outside printable ASCII, which
// an sf-string cannot carry, are replaced by '?'; validated policy names
// never contain them.
func appendSFString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c > 0x7e:
			b = append(b, '?')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// ceilSeconds returns d in whole seconds, rounded up; 0 for d <= 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// retryAfterSeconds is the Retry-After of a denial: RetryAfter in whole
// seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int64 {
	if s := ceilSeconds(d); s > 1 {
		return s
	}
	return 1
}

// resetSeconds is the t (or reset) of one decision: for a policy that
// denied, when the request can succeed (as Retry-After); otherwise when
// the quota is full again.
func resetSeconds(d *core.Decision) int64 {
	if !d.Allowed {
		return retryAfterSeconds(d.RetryAfter)
	}
	return ceilSeconds(d.ResetAfter)
}

func remaining(d *core.Decision) int64 {
	if d.Remaining < 0 {
		return 0
	}
	return int64(d.Remaining)
}

// writeHeaders sets the header fields of s.mode for the decisions ds (one
// per policy of s, binding at index binding) on res. buf is scratch space;
// the grown buffer is returned for reuse.
func (s *policySet) writeHeaders(res adapter.Response, ds []core.Decision, binding int, buf []byte) []byte {
	if len(ds) == 0 {
		return buf
	}
	if binding < 0 || binding >= len(ds) {
		binding = 0
	}
	bd := &ds[binding]
	switch s.mode {
	case HeadersDraft11:
		res.SetHeader(hdrRateLimitPolicy, s.policyHV)
		b := buf[:0]
		for i := range ds {
			if i > 0 {
				b = append(b, ", "...)
			}
			q := ""
			if i < len(s.quoted) {
				q = s.quoted[i]
			} else {
				q = `"?"`
			}
			b = append(b, q...)
			b = append(b, ";r="...)
			b = strconv.AppendInt(b, remaining(&ds[i]), 10)
			b = append(b, ";t="...)
			b = strconv.AppendInt(b, resetSeconds(&ds[i]), 10)
		}
		setHeaderBytes(res, hdrRateLimit, b)
		return b
	case HeadersDraft07:
		res.SetHeader(hdrRateLimitPolicy, s.policyHV)
		b := append(buf[:0], "limit="...)
		b = strconv.AppendInt(b, int64(bd.Limit), 10)
		b = append(b, ", remaining="...)
		b = strconv.AppendInt(b, remaining(bd), 10)
		b = append(b, ", reset="...)
		b = strconv.AppendInt(b, resetSeconds(bd), 10)
		setHeaderBytes(res, hdrRateLimit, b)
		return b
	case HeadersDraft06:
		res.SetHeader(hdrLimit, strconv.Itoa(bd.Limit))
		res.SetHeader(hdrRemaining, strconv.FormatInt(remaining(bd), 10))
		res.SetHeader(hdrReset, strconv.FormatInt(resetSeconds(bd), 10))
		res.SetHeader(hdrRateLimitPolicy, s.policyHV)
	case HeadersXRateLimit:
		res.SetHeader(hdrXLimit, strconv.Itoa(bd.Limit))
		res.SetHeader(hdrXRemaining, strconv.FormatInt(remaining(bd), 10))
		res.SetHeader(hdrXReset, strconv.FormatInt(resetSeconds(bd), 10))
	}
	return buf
}

// HeaderWriter writes the rate-limit header fields of one set of policies,
// their fixed parts rendered once. Safe for concurrent use.
type HeaderWriter struct{ set *policySet }

// NewHeaderWriter prepares the header fields of mode for policies, in the
// order their decisions will come (shadow policies are treated as
// enforced: a HeaderWriter speaks of the decisions it is given).
func NewHeaderWriter(mode HeaderMode, policies []core.Policy) (*HeaderWriter, error) {
	if !mode.valid() {
		return nil, fmt.Errorf("%w: unknown header mode %d", ErrInvalidConfig, mode)
	}
	ps := append([]core.Policy(nil), policies...)
	for i := range ps {
		ps[i].Shadow = false
	}
	set, err := newPolicySet(mode, ps)
	if err != nil {
		return nil, err
	}
	return &HeaderWriter{set: set}, nil
}

// Write sets the header fields for result, whose decisions are those of the
// writer's policies in order, and Retry-After when it is a denial.
func (w *HeaderWriter) Write(res adapter.Response, result core.Result) {
	if len(result.Decisions) != len(w.set.policies) {
		return
	}
	var buf [128]byte
	if result.Allowed {
		w.set.writeHeaders(res, result.Decisions, result.Binding, buf[:0])
		return
	}
	w.set.writeDenial(res, result, buf[:0])
}
