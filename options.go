package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/adapter"
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
	denied    func(keyfuncs.Request, adapter.Response, core.Result) error
	onError   func(keyfuncs.Request, adapter.Response, int, error) error
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

// WithLimiter sets the limiter that decides checks. The default is a limiter
// over a fresh in-memory store on the system clock, per process, holding at
// most 1,000,000 states (one per key and policy): past that, a new key's
// check fails with memstore.ErrStoreFull and the failure mode applies, while
// the keys held go on being limited. Give a limiter over core/redisstore to
// share quotas.
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
// call the policies' names (as shown: see core.Policy.Name) must differ. Without any global
// policy only routes in the route table are limited.
func WithPolicy(policies ...core.Policy) Option {
	return func(s *settings) { s.policies = append([]core.Policy(nil), policies...) }
}

// WithRoute adds a route table entry: requests with the given method ("":
// every method; an exact method wins) and route pattern, as the framework
// spells it ("/users/{id}" on net/http, "/users/:id" on Gin, Echo and
// Fiber), are checked against policies instead of the global ones. A
// route policy equal to a global one shares its quota.
func WithRoute(method, pattern string, policies ...core.Policy) Option {
	return func(s *settings) {
		s.routes = append(s.routes, route{method: method, pattern: pattern, policies: append([]core.Policy(nil), policies...)})
	}
}

// WithPlans sets per-caller policies: choose names each request's plan, and
// plans maps each plan to the policies its requests are checked against,
// together, like WithPolicy's. A route table entry wins over a plan; a
// request whose plan is "" or unknown ("Free" for "free") gets the global
// policies, never an unlimited pass, and without global policies New fails
// unless WithDenyUnknownPlans is given. A plan without policies, or named
// "", is a construction error.
//
// choose returns the caller's tier ("free", "pro"), "" for none,
// keyfuncs.ErrSkip to let the request through unchecked, or a
// *keyfuncs.MissingKeyError to refuse it (401 for an unauthenticated
// caller); any other error is answered 500. It must be safe for concurrent
// use.
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
// in the request's context (FromContext), where its handler can set the
// request's final cost (Usage.SetCost), refund it or reset its key; the
// middleware settles it once the handler returns (a panic is a 500).
//
// countIf, when not nil, says from the response's status whether the
// request counts: it is charged when admitted, so concurrent requests
// cannot overrun the limit, and refunded when countIf returns false (count
// failed logins with func(s int) bool { return s >= 400 }). Publishing
// costs an allocation per admitted request, so it is off by default.
func WithUsage(countIf func(status int) bool) Option {
	return func(s *settings) { s.usage, s.countIf = true, countIf }
}

// WithDenyUnknownPlans answers 403 (ErrUnknownPlan, through the error
// handler) a request whose plan is "" or unknown when there are no global
// policies, so that WithPlans can stand without WithPolicy.
func WithDenyUnknownPlans() Option { return func(s *settings) { s.denyUnknown = true } }

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

// WithAlgorithm sets the algorithm of every policy that names none; the
// default is GCRA.
func WithAlgorithm(a core.Algorithm) Option { return func(s *settings) { s.algorithm = a } }

// WithKeyFunc sets the key function, which is required: New fails with
// ErrInvalidConfig without one. See package keyfuncs for client IP, header,
// route and composite keys.
func WithKeyFunc(f keyfuncs.KeyFunc) Option { return func(s *settings) { s.keyFunc = f } }

// WithCost sets the cost of a request in units; the default is 1 for
// every request. A cost of 0 lets the request through unchecked; a
// negative cost is a programming error, answered 500; a
// cost above a policy's capacity is refused with 413 by the error handler.
func WithCost(f func(keyfuncs.Request) int) Option { return func(s *settings) { s.cost = f } }

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
func WithHeaders(m HeaderMode) Option { return func(s *settings) { s.mode = m } }

// WithDeniedHandler replaces the default denial, a 429 with a problem
// document of the draft's quota-exceeded type naming the policies that
// denied the request. h writes the response to a request a policy denied,
// the header fields and Retry-After already set. It must call res.Write
// once, with a 4xx or 5xx status (else the default denial completes the
// response), and return its error. result.Decisions is reused afterwards.
func WithDeniedHandler(h func(req keyfuncs.Request, res adapter.Response, result core.Result) error) Option {
	return func(s *settings) { s.denied = h }
}

// WithErrorHandler replaces the default error response (a problem document
// whose only detail is a *keyfuncs.MissingKeyError's Source) to a request
// refused without a denial: status is 400 (or a *keyfuncs.MissingKeyError's
// status) for an unusable key, 413 for a cost above a policy's capacity,
// 503 when the limiter failed under FailClosed. err may hold internal
// details and must not be written. h must call res.Write once, else the
// default completes the response.
func WithErrorHandler(h func(req keyfuncs.Request, res adapter.Response, status int, err error) error) Option {
	return func(s *settings) { s.onError = h }
}

// WithFailureMode sets what happens when the limiter fails; the default
// is FailOpen.
func WithFailureMode(f FailureMode) Option { return func(s *settings) { s.failure = f } }

// WithObserver adds an observer, called for every request with the
// outcome (metrics, logs, traces).
func WithObserver(o Observer) Option {
	return func(s *settings) {
		if o != nil {
			s.observers = append(s.observers, o)
		}
	}
}

// WithShaping sets how an admitted request is held when a leaky bucket asks
// for a delay (core.Decision.Delay): wait is called with the request's
// context and the longest delay, and an error ends the request without a
// response. The default waits on a timer, for at most MaxDelay
// (WithMaxDelay). nil disables shaping: requests proceed at once, and a
// leaky bucket admits up to its capacity at once.
func WithShaping(wait func(ctx context.Context, d time.Duration) error) Option {
	return func(s *settings) { s.shaper = wait }
}

// defaultMaxDelay is WithMaxDelay's default.
const defaultMaxDelay = time.Second

// WithMaxDelay sets how long, at most, the middleware holds an admitted
// request for a leaky-bucket policy without a MaxDelay of its own (0: 1 s);
// a request that would wait longer is denied with the exact Retry-After. A
// negative d is a construction error.
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
