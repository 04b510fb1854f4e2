// Package outbound limits the requests a program sends: an http.RoundTripper
// that waits for a core.Limiter before each request, keyed by host by
// default, so that calls to a partner API stay under its limit across a
// fleet when the store is shared.
//
//	limiter := core.NewLimiter(store)
//	t, err := outbound.New(limiter, core.MustParsePolicy("5000/1h;name=partner"))
//	if err != nil { ... }
//	client := &http.Client{Transport: t}
//
// After a 429 or 503 with Retry-After, or RateLimit fields (IETF or
// X-RateLimit-*) reporting nothing remaining, it holds that key until the
// reset, in memory: later requests wait, or fail at once when the wait
// cannot fit their deadline.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/clocksleep"
	"github.com/ratelimit-go/ratelimit/internal/opt"
)

// maxHeld bounds the keys a Transport holds at once; past it, expired holds
// are dropped first, then the soonest to end.
const maxHeld = 10_000

// maxHold bounds one hold: an upstream asking for more is held a day.
const maxHold = 24 * time.Hour

// Transport is an http.RoundTripper that limits the requests it sends. It is
// safe for concurrent use.
type Transport struct {
	limiter *core.Limiter
	policy  core.Policy
	base    http.RoundTripper
	key     func(*http.Request) string

	mu   sync.Mutex
	held map[string]time.Time // the upstream asked to wait until
}

// Option configures a Transport.
type Option func(*Transport)

// WithBase sets the RoundTripper that sends the requests; the default is
// http.DefaultTransport. A nil rt is ignored.
func WithBase(rt http.RoundTripper) Option {
	return func(t *Transport) {
		if rt != nil {
			t.base = rt
		}
	}
}

// WithKey sets the function that names the limit a request counts against;
// the default is its host (URL.Host, lower-cased, port included). A request
// whose key is "" is refused with an error. A nil fn is ignored.
func WithKey(fn func(*http.Request) string) Option {
	return func(t *Transport) {
		if fn != nil {
			t.key = fn
		}
	}
}

// New returns a Transport that admits each request under policy, waiting
// (Limiter.Wait) when the limit is reached. It returns an error matching
// core.ErrInvalidPolicy for an invalid policy, a core.Concurrency one (a
// Transport limits a rate: it would hold each request's slot for the slot's
// whole lifetime) or a Shadow one (a Transport has no dry run: it would
// hold requests for real), and an error for a nil Limiter.
func New(l *core.Limiter, policy core.Policy, opts ...Option) (*Transport, error) {
	if l == nil {
		return nil, errors.New("outbound: New needs a Limiter")
	}
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if policy.Algorithm == core.Concurrency {
		return nil, &core.PolicyError{Policy: policy.Name, Field: "algorithm", Value: string(core.Concurrency), Err: core.ErrInvalidPolicy,
			Reason: "outbound limits a rate, and would hold each request's slot for its whole lifetime"}
	}
	if policy.Shadow {
		return nil, &core.PolicyError{Policy: policy.Name, Field: "shadow", Value: "true", Err: core.ErrInvalidPolicy,
			Reason: "outbound has no dry run, and would hold requests for real"}
	}
	t := &Transport{limiter: l, policy: policy, base: http.DefaultTransport, held: map[string]time.Time{},
		key: func(r *http.Request) string { return strings.ToLower(r.URL.Host) }}
	opt.Apply(t, opts)
	return t, nil
}

// RoundTrip waits for the upstream's hold on the request's key and for the
// Limiter, then sends the request. It returns an error without sending when
// the request's context ends or its deadline would pass first. The
// response, a 429 included, is returned as the upstream sent it.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	refuse := func(err error) (*http.Response, error) {
		if r.Body != nil {
			_ = r.Body.Close() // a RoundTripper closes the body, errors included
		}
		return nil, err
	}
	key := t.key(r)
	if key == "" {
		return refuse(errors.New("outbound: the request has no key (no host)"))
	}
	ctx := r.Context()
	if err := t.waitHold(ctx, key); err != nil {
		return refuse(err)
	}
	if _, err := t.limiter.Wait(ctx, key, t.policy); err != nil {
		return refuse(fmt.Errorf("outbound: %w", err))
	}
	res, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if wait := upstreamWait(res, t.limiter.Clock().Now()); wait > 0 {
		t.hold(key, t.limiter.Clock().Now().Add(wait))
	}
	return res, nil
}

// waitHold waits until the upstream's hold on key, if any, has ended.
func (t *Transport) waitHold(ctx context.Context, key string) error {
	for {
		t.mu.Lock()
		until, ok := t.held[key]
		t.mu.Unlock()
		if !ok {
			return nil
		}
		left := until.Sub(t.limiter.Clock().Now())
		if left <= 0 {
			t.mu.Lock()
			if t.held[key].Equal(until) {
				delete(t.held, key)
			}
			t.mu.Unlock()
			return nil
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < left {
			return fmt.Errorf("outbound: the upstream asked %q to wait %v, past the request's deadline: %w", key, left, context.DeadlineExceeded)
		}
		if err := clocksleep.Sleep(ctx, t.limiter.Clock(), left); err != nil {
			return err
		}
	}
}

// hold records that key waits until until, keeping the later of two holds.
func (t *Transport) hold(key string, until time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.held[key]; ok && old.After(until) {
		return
	}
	if _, ok := t.held[key]; !ok && len(t.held) >= maxHeld {
		now := t.limiter.Clock().Now()
		var soonest string
		for k, u := range t.held {
			if !u.After(now) {
				delete(t.held, k)
			} else if soonest == "" || u.Before(t.held[soonest]) {
				soonest = k
			}
		}
		if len(t.held) >= maxHeld {
			delete(t.held, soonest)
		}
	}
	t.held[key] = until
}

// upstreamWait returns how long the upstream asks its client to wait: the
// Retry-After of a 429 or 503, else the reset of RateLimit fields reporting
// nothing remaining; 0 when it asks nothing.
func upstreamWait(res *http.Response, now time.Time) time.Duration {
	h := res.Header
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable {
		if d := retryAfter(h.Get("Retry-After"), now); d > 0 {
			return d
		}
	}
	// draft-ietf-httpapi-ratelimit-headers 08 and later: "name";r=0;t=30.
	var wait time.Duration
	for item := range strings.SplitSeq(strings.Join(h.Values("RateLimit"), ","), ",") {
		r, t := param(item, "r"), param(item, "t")
		if r == 0 && t > 0 {
			wait = max(wait, time.Duration(min(t, int64(maxHold/time.Second)))*time.Second)
		}
	}
	if wait > 0 {
		return wait
	}
	// Drafts 06 and 07, and the X- fields (whose reset is often a Unix time).
	for _, prefix := range []string{"RateLimit-", "X-RateLimit-"} {
		rem, err1 := strconv.ParseInt(strings.TrimSpace(h.Get(prefix+"Remaining")), 10, 64)
		reset, err2 := strconv.ParseInt(strings.TrimSpace(h.Get(prefix+"Reset")), 10, 64)
		if err1 != nil || err2 != nil || rem != 0 || reset <= 0 {
			continue
		}
		if reset > 1_000_000_000 { // a Unix time, not a delay
			return min(time.Unix(reset, 0).Sub(now), maxHold)
		}
		return time.Duration(min(reset, int64(maxHold/time.Second))) * time.Second
	}
	return 0
}

// retryAfter parses a Retry-After value: delay seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(min(max(n, 0), int64(maxHold/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(t.Sub(now), maxHold)
	}
	return 0
}

// param returns the integer parameter name of a structured-field item
// (";name=value"), -1 when it has none.
func param(item, name string) int64 {
	for _, p := range strings.Split(item, ";")[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && k == name {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}
