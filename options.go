package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// Option configures a Middleware. Options are applied in order; a later
// option of the same kind replaces an earlier one, except WithRoute,
// WithSkip and WithObserver, which accumulate.
type Option func(*settings)

// FailureMode says what happens to a request when the limiter fails (a
// backend error, a timeout) or the key function returns an unexpected
// error. The zero value is FailOpen.
type FailureMode uint8

const (
	// FailOpen lets the request proceed unchecked and without rate-limit
	// headers; observers see OutcomeFailedOpen. The default: an outage of
	// the rate-limit store does not become an outage of the service.
	FailOpen FailureMode = iota
	// FailClosed answers 503 Service Unavailable through the error
	// handler; observers see OutcomeFailedClosed.
	FailClosed
)

type route struct {
	method, pattern string
	policies        []core.Policy
}

// settings is what options write; New validates it into a Middleware.
type settings struct {
	limiter   *core.Limiter
	policies  []core.Policy
	routes    []route
	keyFunc   keyfuncs.KeyFunc
	cost      func(keyfuncs.Request) int
	skips     []func(keyfuncs.Request) bool
	mode      HeaderMode
	denied    DeniedHandler
	onError   ErrorHandler
	failure   FailureMode
	observers []Observer
	shaper    func(context.Context, time.Duration) error
	algorithm core.Algorithm
	maxDelay  time.Duration
	plans     map[string][]core.Policy
	choose    func(keyfuncs.Request) (string, error)
	// denyUnknown: a request with an unknown or empty plan and no global
	// policy is answered 403 (WithDenyUnknownPlans).
	denyUnknown bool
	// usage: publish every admitted request's Usage (WithUsage); countIf,
	// if set, says whether a response counts.
	usage   bool
	countIf func(status int) bool
	// route: built by Middleware.Route, to run inside the router's
	// middleware.
	route bool
	errs  []error
}

func (s *settings) clone() settings {
	c := *s
	c.policies = append([]core.Policy(nil), s.policies...)
	c.routes = append([]route(nil), s.routes...)
	c.skips = append([]func(keyfuncs.Request) bool(nil), s.skips...)
	c.observers = append([]Observer(nil), s.observers...)
	c.plans = clonePlans(s.plans)
	c.errs = append([]error(nil), s.errs...)
	return c
}

// WithLimiter sets the limiter that decides checks. The default is a
// limiter over a fresh in-memory store (core/memstore) on the system
// clock: fine for one process, not shared between instances. Give a
// limiter over core/redisstore to share quotas, or one with a
// core.ManualClock in tests.
func WithLimiter(l *core.Limiter) Option {
	return func(s *settings) {
		if l == nil {
			s.errs = append(s.errs, fmt.Errorf("%w: WithLimiter(nil)", ErrInvalidConfig))
			return
		}
		s.limiter = l
	}
}

// WithPolicy sets the global policies, checked for every request whose
// route has no entry in the route table. Several policies ("10 per second
// and 1000 per hour") are checked in one atomic call: a request is
// admitted only if all admit it, and a denial consumes nothing. Within one
// call the policies' names (PolicyName) must differ. Without any global
// policy only routes in the route table are limited.
func WithPolicy(policies ...core.Policy) Option {
	return func(s *settings) { s.policies = append([]core.Policy(nil), policies...) }
}

// WithRoute adds a route table entry: requests with the given method and
// route pattern are checked against policies instead of the global ones.
// method "" matches every method; an entry with the request's exact method
// wins over one with "". pattern is compared with keyfuncs.Request.Route,
// the pattern of the matched route as the framework spells it ("/login",
// "/users/{id}" on net/http, "/users/:id" on Gin and Echo).
//
// Backends keep state per key and Policy value, so a route policy equal to
// a global one (same name and numbers) shares its quota: list the global
// policy here too to keep counting the route against it.
func WithRoute(method, pattern string, policies ...core.Policy) Option {
	return func(s *settings) {
		s.routes = append(s.routes, route{method: method, pattern: pattern, policies: append([]core.Policy(nil), policies...)})
	}
}

// WithPlans sets per-caller policies: choose names the plan of each request
// and plans maps every plan name to the policies its requests are checked
// against, together and atomically, like WithPolicy's. Every plan is
// validated when the Middleware is built and its header fields are rendered
// then, so choosing a plan per request costs one map lookup and allocates
// nothing; the headers name the policies of the plan that applied.
//
// Precedence: a route table entry (WithRoute) for the request wins, since it
// names the request exactly; otherwise the plan's policies apply; a request
// whose plan is "" or names no plan of the map ("Free" for "free") gets the
// global policies (WithPolicy), never an unlimited pass. A plan's policies
// replace the global ones: list a global policy in a plan too to keep
// counting it.
//
// WithPlans without global policies is a construction error unless
// WithDenyUnknownPlans is given too; so are plans with no policy and an
// empty plan name.
//
// choose typically reads the authenticated caller (keyfuncs.Request.Context,
// or the framework's own request through the adapter's accessor) and returns
// its tier ("free", "pro"). It returns "" for a request that has no plan;
// keyfuncs.ErrSkip to let the request through unchecked; a
// *keyfuncs.MissingKeyError to refuse it (401 for an unauthenticated
// caller). Any other error is a bug of the function: the request is
// answered 500 by the error handler and observers see OutcomeRefused with
// the error. It must be safe for concurrent use.
func WithPlans(choose func(r keyfuncs.Request) (string, error), plans map[string][]core.Policy) Option {
	return func(s *settings) {
		if choose == nil || len(plans) == 0 {
			s.errs = append(s.errs, fmt.Errorf("%w: WithPlans needs a plan function and at least one plan", ErrInvalidConfig))
			return
		}
		s.choose, s.plans = choose, clonePlans(plans)
	}
}

// WithUsage makes the middleware put the Usage of every request it admits
// in the request's context, where its handler finds it (FromContext) to
// settle the request's cost once known (Usage.SetCost: an LLM's tokens,
// bytes served), refund it or reset its key. Once the handler has returned
// (or panicked: status 500), the middleware settles what the handler set.
//
// countIf, when not nil, decides from the response's status code whether
// the request counts at all: the request is charged when admitted, as
// always, so that concurrent requests cannot overrun the limit, and its
// charge is refunded when countIf returns false. Count only failed logins
// with func(s int) bool { return s >= 400 }; only successes with
// func(s int) bool { return s < 400 }.
//
// Publishing costs an allocation per admitted request (with net/http,
// Gin and Echo, a copy of the *http.Request carrying the new context), so
// it is off by default.
func WithUsage(countIf func(status int) bool) Option {
	return func(s *settings) { s.usage, s.countIf = true, countIf }
}

// WithDenyUnknownPlans makes a request whose plan is "" or names no plan of
// WithPlans, and for which no global policy exists, a 403 Forbidden answered
// by the error handler (a problem document by default) with ErrUnknownPlan;
// observers see OutcomeRefused. It lets WithPlans stand without
// WithPolicy; with global policies it changes nothing, as those apply.
func WithDenyUnknownPlans() Option {
	return func(s *settings) { s.denyUnknown = true }
}

func clonePlans(plans map[string][]core.Policy) map[string][]core.Policy {
	if plans == nil {
		return nil
	}
	c := make(map[string][]core.Policy, len(plans))
	for name, ps := range plans {
		c[name] = append([]core.Policy(nil), ps...)
	}
	return c
}

// WithAlgorithm sets the algorithm of every policy (global and per
// route) that does not name one itself; without it such policies use
// GCRA. An unknown algorithm is a construction
// error.
func WithAlgorithm(a core.Algorithm) Option {
	return func(s *settings) { s.algorithm = a }
}

// WithKeyFunc sets the key function, which is required: New fails with
// ErrInvalidConfig without one. See package keyfuncs for client IP, header,
// route and composite keys.
func WithKeyFunc(f keyfuncs.KeyFunc) Option {
	return func(s *settings) { s.keyFunc = f }
}

// WithCost sets the cost of a request in units; the default is 1 for
// every request. A cost of 0 lets the request through unchecked; a
// negative cost is a programming error, answered 500; a
// cost above a policy's capacity is refused with 413 by the error handler.
func WithCost(f func(keyfuncs.Request) int) Option {
	return func(s *settings) { s.cost = f }
}

// WithSkip adds a skip rule: requests for which skip returns true (health
// checks, an allow list) proceed unchecked and without headers. Rules are
// evaluated in order before the key function.
func WithSkip(skip func(keyfuncs.Request) bool) Option {
	return func(s *settings) {
		if skip != nil {
			s.skips = append(s.skips, skip)
		}
	}
}

// WithHeaders sets the header mode; the default is HeadersDraft11.
func WithHeaders(m HeaderMode) Option {
	return func(s *settings) { s.mode = m }
}

// WithDeniedHandler replaces the default denial, a 429 with a problem
// document of the draft's quota-exceeded type naming the policies that
// denied the request.
func WithDeniedHandler(h DeniedHandler) Option {
	return func(s *settings) { s.denied = h }
}

// WithErrorHandler replaces the default error response, a problem document
// whose only detail is a *keyfuncs.MissingKeyError's Source, which writes the response
// of a request refused for an unusable key or cost, or because the
// limiter failed under FailClosed.
func WithErrorHandler(h ErrorHandler) Option {
	return func(s *settings) { s.onError = h }
}

// WithFailureMode sets what happens when the limiter fails; the default
// is FailOpen.
func WithFailureMode(f FailureMode) Option {
	return func(s *settings) { s.failure = f }
}

// WithObserver adds an observer, called for every request with the
// outcome (metrics, logs, traces).
func WithObserver(o Observer) Option {
	return func(s *settings) {
		if o != nil {
			s.observers = append(s.observers, o)
		}
	}
}

// WithShaping sets how an admitted request is held when a decision asks
// for a delay (core.Decision.Delay, set by the leaky bucket to space
// admitted requests evenly). The middleware does hold such requests, in the
// request's goroutine, for at most the policy's MaxDelay (WithMaxDelay,
// default 1s). wait is called with the request's context
// and the longest delay of the check; an error (the client went away)
// ends the request without a response. The default waits on a timer; nil
// disables shaping: requests proceed at once, and a leaky bucket then meters
// without a ceiling (it admits up to its capacity at once, as the stores do)
// unless WithMaxDelay or the policy's MaxDelay sets one.
func WithShaping(wait func(ctx context.Context, d time.Duration) error) Option {
	return func(s *settings) { s.shaper = wait }
}

// defaultMaxDelay is the longest the middleware holds an admitted request
// for a leaky-bucket policy that sets no core.Policy.MaxDelay of its own,
// unless WithMaxDelay says otherwise.
const defaultMaxDelay = time.Second

// WithMaxDelay sets the ceiling on how long the middleware holds an admitted
// request (shaping, see WithShaping) for every leaky-bucket policy that sets
// no core.Policy.MaxDelay of its own: a request that would have to wait
// longer is denied with the exact Retry-After instead, and consumes nothing.
// 0 means 1 s; a negative d is a construction error. Without
// a ceiling a leaky bucket may hold a request for up to its whole window (59 s
// under 100/1m); to allow that, set MaxDelay on the policy itself.
func WithMaxDelay(d time.Duration) Option {
	return func(s *settings) {
		if d < 0 {
			s.errs = append(s.errs, fmt.Errorf("%w: WithMaxDelay(%v): must not be negative", ErrInvalidConfig, d))
			return
		}
		s.maxDelay = d
	}
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
