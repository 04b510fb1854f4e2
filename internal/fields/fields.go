// Package fields renders the rate-limit header fields and the problem
// documents of the middleware and the service: the IETF RateLimit fields
// of every header mode, Retry-After, and the prepared denials and 429
// bodies that a flood of denied requests reuses instead of formatting.
package fields

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ratelimit-go/ratelimit/adapter"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/sharedhdr"
)

// Mode is a header mode, in the order of ratelimit.HeaderMode.
type Mode uint8

// The header modes.
const (
	Draft11 Mode = iota
	Draft07
	Draft06
	XRateLimit
	None
)

// PolicyName is the name a policy has in headers, problem documents and
// metrics: its Name, or when that is empty its String form (core.Policy.Name).
func PolicyName(p core.Policy) string {
	if p.Name != "" {
		return p.Name
	}
	return p.String()
}

// SetHeaderBytes sets name to value on res, through SetHeaderBytes when res
// implements it.
func SetHeaderBytes(res adapter.Response, name string, value []byte) {
	if s, ok := res.(interface{ SetHeaderBytes(string, []byte) }); ok {
		s.SetHeaderBytes(name, value)
		return
	}
	res.SetHeader(name, string(value))
}

// ContentTypeProblem is the media type of RFC 9457 problem documents.
const ContentTypeProblem = "application/problem+json"

// ProblemTypeQuotaExceeded is the draft's problem type for a request over
// its quota.
const ProblemTypeQuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"

// Problem is an RFC 9457 problem document.
type Problem struct {
	Type             string   `json:"type"`
	Title            string   `json:"title"`
	Status           int      `json:"status"`
	Detail           string   `json:"detail,omitempty"`
	ViolatedPolicies []string `json:"violated-policies,omitempty"`
}

// DeniedProblem is the default 429 body for result: a problem document of
// the quota-exceeded type naming the policies that denied.
func DeniedProblem(result core.Result) []byte {
	p := Problem{
		Type:   ProblemTypeQuotaExceeded,
		Title:  "Request cannot be satisfied as the assigned quota has been exceeded",
		Status: http.StatusTooManyRequests,
		Detail: "Too many requests; retry after the number of seconds in Retry-After.",
	}
	for i := range result.Decisions {
		if !result.Decisions[i].Allowed && i < len(result.Policies) {
			p.ViolatedPolicies = append(p.ViolatedPolicies, PolicyName(result.Policies[i]))
		}
	}
	body, err := json.Marshal(&p)
	if err != nil { // cannot happen for strings and ints
		return nil
	}
	return body
}

// WriteProblem writes p as the response, with its status.
func WriteProblem(res adapter.Response, p *Problem) error {
	body, err := json.Marshal(p)
	if err != nil { // cannot happen for strings and ints; keep the status anyway
		body = nil
	}
	return res.Write(p.Status, ContentTypeProblem, body)
}

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

// Set is one group of policies checked together (the global ones, or
// one route's), with everything the header writer needs rendered once.
// It is immutable after construction and safe for concurrent use.
type Set struct {
	mode     Mode
	Policies []core.Policy // the enforced ones, as configured: these go to the limiter and the headers
	Shadow   []core.Policy // the shadow ones (core.Policy.Shadow), checked after an admission; nil: none
	names    []string      // display names: Name, or a generated one
	quoted   []string      // names as sf-strings, quotes included
	// slots marks the concurrency limits (core.Concurrency) among Policies,
	// which no RateLimit field shows: they hold requests in flight, not a
	// quota. nil when there are none.
	slots []bool
	// Slots reports whether a policy of the set, shadow ones included, is
	// a concurrency limit, whose slots a request gives back when it ends.
	Slots    bool
	policyHV string // the RateLimit-Policy value, "" when not written or calendar
	calendar bool   // a policy has calendar windows: w= is rendered per response
	// Clock tells a calendar policy's current window (its w=); nil is
	// the system clock. Set it before the first use.
	Clock  core.Clock
	maxCap int // the smallest capacity: larger costs can never pass
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

// WriteDenial sets the header fields of the denial result, Retry-After
// included, on res: the prepared ones when the set has them for it, else
// rendered in buf, whose grown form it returns for reuse.
func (s *Set) WriteDenial(res adapter.Response, result core.Result, buf []byte) []byte {
	if s.writePreparedDenial(res, result.Decisions) {
		return buf
	}
	buf = s.WriteHeaders(res, result.Decisions, result.Binding, buf)
	buf = strconv.AppendInt(buf[:0], retryAfterSeconds(result.Decision().RetryAfter), 10)
	SetHeaderBytes(res, hdrRetryAfter, buf)
	return buf
}

// writePreparedDenial writes the prepared fields of a denial by the set's
// single enforced policy with nothing remaining, the denial of a client
// over its limit, and reports whether it did.
func (s *Set) writePreparedDenial(res adapter.Response, ds []core.Decision) bool {
	if s.denials == nil || len(ds) != 1 || ds[0].Allowed || remaining(&ds[0]) != 0 {
		return false
	}
	n := retryAfterSeconds(ds[0].RetryAfter)
	slot := &s.denials[n%denialSlots]
	pd := slot.Load()
	if pd == nil || pd.n != n || pd.limit != ds[0].Limit {
		var f preparedFields
		var buf [64]byte
		s.WriteHeaders(&f, ds, 0, buf[:0])
		f.SetHeader(hdrRetryAfter, strconv.FormatInt(n, 10))
		pd = &preparedDenial{n: n, limit: ds[0].Limit, fields: f}
		slot.Store(pd)
	}
	if sh, ok := res.(interface{ SetSharedHeader(string, []string) }); ok {
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

// DeniedBody returns the default 429 body for result, from the cache when
// the set is small enough.
func (s *Set) DeniedBody(result core.Result) []byte {
	result.Policies = s.Policies
	var mask uint
	for i := range result.Decisions {
		if !result.Decisions[i].Allowed {
			mask |= 1 << i
		}
	}
	if s.denied == nil || int(mask) >= len(s.denied) {
		return DeniedProblem(result)
	}
	if b := s.denied[mask].Load(); b != nil {
		return *b
	}
	b := DeniedProblem(result)
	s.denied[mask].Store(&b)
	return b
}

// MinSlotLifetime is the shortest lifetime of a concurrency slot that a
// request holds while it runs (NewSet).
const MinSlotLifetime = time.Second

// NewSet validates policies and renders their fixed header values, for a
// middleware: it also refuses a concurrency slot too short-lived for the
// renewals that hold it while a request runs (MinSlotLifetime).
func NewSet(mode Mode, policies []core.Policy) (*Set, error) { return newSet(mode, policies, true) }

// newSet is NewSet; held says whether requests hold their slots while they
// run, renewing them.
func newSet(mode Mode, policies []core.Policy, held bool) (*Set, error) {
	if len(policies) == 0 {
		return nil, core.ErrNoPolicy
	}
	seen := make(map[string]bool, len(policies))
	var enforced []core.Policy
	s := &Set{mode: mode}
	for _, p := range policies {
		if err := p.Validate(); err != nil {
			return nil, err
		}
		if held && p.Algorithm == core.Concurrency && p.Window < MinSlotLifetime {
			return nil, &core.PolicyError{Policy: p.Name, Field: "window", Value: p.Window.String(), Err: core.ErrInvalidPolicy,
				Reason: fmt.Sprintf("a concurrency slot held through a request must live at least %v: it is renewed every third of its lifetime, and a shorter one could end before a renewal lands", MinSlotLifetime)}
		}
		name := PolicyName(p)
		if seen[name] {
			return nil, fmt.Errorf("two policies of one check are both named %q; names must tell them apart", name)
		}
		seen[name] = true
		s.Slots = s.Slots || p.Algorithm == core.Concurrency
		if p.Shadow {
			s.Shadow = append(s.Shadow, p)
		} else {
			enforced = append(enforced, p)
		}
	}
	policies = enforced
	s.Policies = enforced
	for i, p := range enforced {
		s.calendar = s.calendar || p.Calendar != ""
		if p.Algorithm == core.Concurrency {
			if s.slots == nil {
				s.slots = make([]bool, len(enforced))
			}
			s.slots[i] = true
		}
	}
	if len(enforced) <= maxPreparedPolicies {
		s.denied = make([]atomic.Pointer[[]byte], 1<<len(enforced))
	}
	if len(enforced) == 1 && !s.calendar {
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
	if !s.calendar {
		s.policyHV = string(s.appendPolicyValue(nil, 0))
	}
	return s, nil
}

// appendPolicyValue appends the RateLimit-Policy value of the set's mode
// to b, with the current window's length (at now, in microseconds since the
// epoch) as the w= of a calendar policy.
func (s *Set) appendPolicyValue(b []byte, now int64) []byte {
	first := true
	for i, p := range s.Policies {
		if s.mode != Draft11 && s.mode != Draft07 && s.mode != Draft06 {
			break
		}
		if s.HoldsSlots(i) {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		first = false
		if s.mode == Draft11 {
			b = append(b, s.quoted[i]...)
			b = append(b, ";q="...)
		}
		b = strconv.AppendInt(b, int64(p.Limit), 10)
		b = append(b, ";w="...)
		w := p.Window
		if p.Calendar != "" {
			pr, _ := p.Params() // validated by NewSet
			start, end := pr.Bounds(now)
			w = time.Duration(end-start) * time.Microsecond
		}
		b = strconv.AppendInt(b, ceilSeconds(w), 10)
	}
	return b
}

// policyValue is the RateLimit-Policy value to send now.
func (s *Set) policyValue() string {
	if !s.calendar {
		return s.policyHV
	}
	c := s.Clock
	if c == nil {
		c = core.SystemClock()
	}
	var buf [128]byte
	return string(s.appendPolicyValue(buf[:0], c.Now().UnixMicro()))
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

// HoldsSlots reports whether policy i of the set is a concurrency limit.
func (s *Set) HoldsSlots(i int) bool { return s.slots != nil && i < len(s.slots) && s.slots[i] }

// WriteHeaders sets the header fields of s.mode for the decisions ds (one
// per policy of s, binding at index binding) on res. buf is scratch space;
// the grown buffer is returned for reuse.
func (s *Set) WriteHeaders(res adapter.Response, ds []core.Decision, binding int, buf []byte) []byte {
	if len(ds) == 0 {
		return buf
	}
	if binding < 0 || binding >= len(ds) {
		binding = 0
	}
	if s.HoldsSlots(binding) { // the fields speak of the quotas alone
		binding = -1
		for i := range ds {
			if !s.HoldsSlots(i) && (binding < 0 || ds[i].Remaining < ds[binding].Remaining) {
				binding = i
			}
		}
		if binding < 0 {
			return buf
		}
	}
	bd := &ds[binding]
	switch s.mode {
	case Draft11:
		res.SetHeader(hdrRateLimitPolicy, s.policyValue())
		b := buf[:0]
		for i := range ds {
			if s.HoldsSlots(i) {
				continue
			}
			if len(b) > 0 {
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
		SetHeaderBytes(res, hdrRateLimit, b)
		return b
	case Draft07:
		res.SetHeader(hdrRateLimitPolicy, s.policyValue())
		b := append(buf[:0], "limit="...)
		b = strconv.AppendInt(b, int64(bd.Limit), 10)
		b = append(b, ", remaining="...)
		b = strconv.AppendInt(b, remaining(bd), 10)
		b = append(b, ", reset="...)
		b = strconv.AppendInt(b, resetSeconds(bd), 10)
		SetHeaderBytes(res, hdrRateLimit, b)
		return b
	case Draft06:
		res.SetHeader(hdrLimit, strconv.Itoa(bd.Limit))
		res.SetHeader(hdrRemaining, strconv.FormatInt(remaining(bd), 10))
		res.SetHeader(hdrReset, strconv.FormatInt(resetSeconds(bd), 10))
		res.SetHeader(hdrRateLimitPolicy, s.policyValue())
	case XRateLimit:
		res.SetHeader(hdrXLimit, strconv.Itoa(bd.Limit))
		res.SetHeader(hdrXRemaining, strconv.FormatInt(remaining(bd), 10))
		res.SetHeader(hdrXReset, strconv.FormatInt(resetSeconds(bd), 10))
	}
	return buf
}

// Writer writes the rate-limit header fields of one set of policies,
// their fixed parts rendered once. Safe for concurrent use.
type Writer struct{ set *Set }

// NewWriter prepares the header fields of mode for policies, in the
// order their decisions will come (shadow policies are treated as
// enforced: a Writer speaks of the decisions it is given), with clock
// for calendar windows (Set.Clock).
func NewWriter(mode Mode, clock core.Clock, policies []core.Policy) (*Writer, error) {
	if mode > None {
		return nil, fmt.Errorf("unknown header mode %d", mode)
	}
	ps := append([]core.Policy(nil), policies...)
	for i := range ps {
		ps[i].Shadow = false
	}
	set, err := newSet(mode, ps, false) // its callers give their slots back themselves
	if err != nil {
		return nil, err
	}
	set.Clock = clock
	return &Writer{set: set}, nil
}

// Write sets the header fields for result, whose decisions are those of the
// writer's policies in order, and Retry-After when it is a denial.
func (w *Writer) Write(res adapter.Response, result core.Result) {
	if len(result.Decisions) != len(w.set.Policies) {
		return
	}
	var buf [128]byte
	if result.Allowed {
		w.set.WriteHeaders(res, result.Decisions, result.Binding, buf[:0])
		return
	}
	w.set.WriteDenial(res, result, buf[:0])
}
