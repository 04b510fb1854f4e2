package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit/adapter"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/keycheck"
	"github.com/ratelimit-go/ratelimit/internal/opt"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// Middleware is the framework-neutral rate-limiting middleware. Adapters
// call Handle for every request. Build one with New; the zero value is not
// usable. A Middleware is immutable and safe for concurrent use.
type Middleware struct {
	s       settings // as built, for With
	limiter *core.Limiter
	global  *fields.Set // nil: no global policy
	routes  map[routeKey]*fields.Set
	plans   map[string]*fields.Set // nil: no WithPlans
	panics  atomic.Uint64          // observer calls that panicked
	// defaultDenied: the 429 is denyProblem's, whose bodies each
	// policy set prepares once.
	defaultDenied bool
	scratch       sync.Pool // *scratch
	// routed: a Route was made from this middleware, whose checks need the
	// Usage of the requests this one admits.
	routed atomic.Bool
	joins  sync.Map // [2]*fields.Set -> *fields.Set (or nil): Usage.joined
}

type routeKey struct{ method, pattern string }

// scratch is per-request working memory, pooled so that the allow path
// does not allocate it.
type scratch struct {
	items []core.Item // the items of a check, for the policies of itemsOf
	// itemsOf is the first policy of the slice items was built for: the
	// next check of the same policies rewrites only keys and costs.
	itemsOf *core.Policy
	d       []core.Decision // the enforced policies' decisions
	sd      []core.Decision // the shadow policies' decisions
	all     []core.Decision // a Route's and the router middleware's decisions
	buf     []byte
}

// New builds a Middleware from options. WithKeyFunc is required; every
// other option has a documented default. Errors match ErrInvalidConfig,
// or core.ErrInvalidPolicy for an invalid policy.
func New(opts ...Option) (*Middleware, error) {
	s := settings{shaper: sleepCtx}
	opt.Apply(&s, opts)
	return build(s)
}

// with returns a new Middleware with the options of m followed by opts,
// sharing m's limiter (and so its state) unless opts replace it.
func (m *Middleware) with(opts ...Option) (*Middleware, error) {
	s := m.s.clone()
	opt.Apply(&s, opts)
	return build(s)
}

// Route returns the middleware of a single route: m's options with
// policies as its only policies, no route table and no plans (adapters:
// stdhttp.Route and the like). Inside m, the client sees both checks'
// fields, m's first, and a request the route denies gets m's charge
// refunded. They remain two checks; WithRoute makes one atomic check of a
// route's and the global policies.
func (m *Middleware) Route(policies ...core.Policy) (*Middleware, error) {
	if m == nil {
		return nil, errNilMiddleware
	}
	if len(policies) == 0 {
		return nil, fmt.Errorf("%w: Route needs at least one policy for the route", ErrInvalidConfig)
	}
	rm, err := m.with(func(s *settings) { s.routes, s.plans, s.choose, s.route = nil, nil, nil, true }, WithPolicy(policies...))
	if err == nil {
		m.routed.Store(true)
	}
	return rm, err
}

func build(s settings) (*Middleware, error) {
	if len(s.errs) > 0 {
		return nil, errors.Join(s.errs...)
	}
	if s.keyFunc == nil {
		return nil, errNoKeyFunc
	}
	if err := keycheck.Err(s.keyFunc); err != nil {
		return nil, fmt.Errorf("%w: WithKeyFunc: %w", ErrInvalidConfig, err)
	}
	if !s.mode.valid() {
		return nil, fmt.Errorf("%w: unknown header mode %d", ErrInvalidConfig, s.mode)
	}
	if a, err := core.ParseAlgorithm(string(s.algorithm)); s.algorithm != "" && (err != nil || a != s.algorithm) {
		return nil, fmt.Errorf("%w: unknown algorithm %q", ErrInvalidConfig, s.algorithm)
	}
	if s.failure > FailClosed {
		return nil, fmt.Errorf("%w: unknown failure mode %d", ErrInvalidConfig, s.failure)
	}
	if len(s.policies) == 0 && len(s.routes) == 0 && len(s.plans) == 0 {
		return nil, errNoPolicy
	}
	if s.limiter == nil {
		var err error
		if s.limiter, err = defaultLimiter(); err != nil {
			return nil, err
		}
	}
	defaultDenied := s.denied == nil
	if defaultDenied {
		s.denied = denyProblem
	}
	if s.onError == nil {
		s.onError = errorProblem
	}
	m := &Middleware{s: s, limiter: s.limiter, defaultDenied: defaultDenied}
	var err error
	if len(s.policies) > 0 {
		if m.global, err = newSet(s.mode, s.limiter.Clock(), withDefaults(s.policies, s)); err != nil {
			return nil, err
		}
	}
	if len(s.routes) > 0 {
		m.routes = make(map[routeKey]*fields.Set, len(s.routes))
		for _, r := range s.routes {
			k := routeKey{r.method, r.pattern}
			if err := validateRoute(r.method, r.pattern); err != nil {
				return nil, err
			}
			if _, dup := m.routes[k]; dup {
				return nil, fmt.Errorf("%w: WithRoute(%q, %q) given twice", ErrInvalidConfig, r.method, r.pattern)
			}
			if len(r.policies) == 0 {
				return nil, fmt.Errorf("%w: WithRoute(%q, %q) has no policy; give it at least one", ErrInvalidConfig, r.method, r.pattern)
			}
			ps, err := newSet(s.mode, s.limiter.Clock(), withDefaults(r.policies, s))
			if err != nil {
				return nil, fmt.Errorf("WithRoute(%q, %q): %w", r.method, r.pattern, err)
			}
			m.routes[k] = ps
		}
	}
	if len(s.plans) > 0 {
		m.plans = make(map[string]*fields.Set, len(s.plans))
		for name, ps := range s.plans {
			if name == "" {
				return nil, fmt.Errorf("%w: WithPlans: a plan with an empty name (\"\" means no plan: the global policies)", ErrInvalidConfig)
			}
			if len(ps) == 0 {
				return nil, fmt.Errorf("%w: WithPlans: plan %q has no policy (to let a plan through unchecked, return keyfuncs.ErrSkip from the plan function)", ErrInvalidConfig, name)
			}
			set, err := newSet(s.mode, s.limiter.Clock(), withDefaults(ps, s))
			if err != nil {
				return nil, fmt.Errorf("plan %q: %w", name, err)
			}
			m.plans[name] = set
		}
		if m.global == nil && !s.denyUnknown {
			return nil, fmt.Errorf("%w: WithPlans without WithPolicy: a request whose plan is unknown or empty would have no policy; give global policies for it, or WithDenyUnknownPlans", ErrInvalidConfig)
		}
	}
	m.scratch.New = func() any {
		return &scratch{items: make([]core.Item, 0, 4), d: make([]core.Decision, 0, 4), sd: make([]core.Decision, 0, 2), buf: make([]byte, 0, 128)}
	}
	return m, nil
}

// routeSet returns the route table entry for a request: the one with its
// exact method, else, for HEAD, the GET one (routers serve HEAD with the GET
// handler, so HEAD must not escape the GET route's policies), else the one
// for every method; nil when the table has none.
func (m *Middleware) routeSet(method, pattern string) *fields.Set {
	if m.routes == nil || pattern == "" {
		return nil
	}
	if s, ok := m.routes[routeKey{method, pattern}]; ok {
		return s
	}
	if method == http.MethodHead {
		if s, ok := m.routes[routeKey{http.MethodGet, pattern}]; ok {
			return s
		}
	}
	return m.routes[routeKey{"", pattern}]
}

// Handle runs the middleware for one request: skip rules, key, policy
// selection, the check, headers, and the 429 or error response. When the
// request may proceed it calls next, the rest of the adapter's chain, with
// the request's context (carrying its Usage when one is published) and
// settles the Usage once next returns its status (a panic counts as 500; a
// nil next as 200). It reports whether it called next; if not, a complete
// response has been written. ctx bounds the limiter call.
func (m *Middleware) Handle(ctx context.Context, req keyfuncs.Request, res adapter.Response, next func(ctx context.Context) (status int)) bool {
	ok, u := m.admit(ctx, req, res)
	if !ok {
		return false
	}
	if u == nil {
		if next != nil {
			next(ctx)
		}
		return true
	}
	status := http.StatusInternalServerError
	defer func() { m.finish(u, status) }()
	if next == nil {
		status = http.StatusOK
	} else {
		status = next(u.ctx)
	}
	return true
}

// admit is Handle up to the call of the next handler: it reports whether
// the request may proceed, with its Usage when it is published.
func (m *Middleware) admit(ctx context.Context, req keyfuncs.Request, res adapter.Response) (bool, *Usage) {
	for _, skip := range m.s.skips {
		if skip(req) {
			m.observe(ctx, Event{Outcome: OutcomeSkipped, Request: req})
			return true, nil
		}
	}
	key, err := m.s.keyFunc(req)
	if err != nil {
		return m.callerError(ctx, req, res, Event{}, err), nil
	}
	set, plan := m.routeSet(req.Method(), req.Route()), ""
	if set == nil && m.plans != nil {
		if plan, err = m.s.choose(req); err != nil {
			return m.callerError(ctx, req, res, Event{Key: key}, err), nil
		}
		if set = m.plans[plan]; set == nil {
			// An unknown or empty plan gets the global policies; New
			// refuses plans without them unless told to deny.
			if m.global == nil {
				return m.refuse(ctx, req, res, Event{Outcome: OutcomeRefused, Key: key, Plan: plan, Err: ErrUnknownPlan}, http.StatusForbidden), nil
			}
			plan = ""
		}
	}
	if set == nil {
		set = m.global
	}
	if set == nil {
		m.observe(ctx, Event{Outcome: OutcomeSkipped, Request: req, Key: key})
		return true, nil
	}
	cost := 1
	if m.s.cost != nil {
		cost = m.s.cost(req)
		if cost == 0 {
			m.observe(ctx, Event{Outcome: OutcomeSkipped, Request: req, Key: key})
			return true, nil
		}
		if cost < 0 {
			return m.refuse(ctx, req, res, Event{Outcome: OutcomeRefused, Key: key, Plan: plan, Policies: set.Policies, Cost: cost, Err: errNegativeCost}, http.StatusInternalServerError), nil
		}
	}

	sc := m.scratch.Get().(*scratch)
	defer m.scratch.Put(sc)
	var result core.Result
	if len(set.Policies) == 0 { // shadow policies only: nothing is enforced
		result = core.Result{Allowed: true, Decisions: sc.d[:0], Policies: set.Policies[:0]}
	} else {
		err = m.check(ctx, sc, key, set.Policies, cost, &sc.d, &result)
	}
	if err != nil {
		ev := Event{Key: key, Plan: plan, Policies: set.Policies, Cost: cost, Err: err}
		switch {
		case errors.Is(err, core.ErrInvalidKey):
			ev.Outcome = OutcomeRefused
			return m.refuse(ctx, req, res, ev, http.StatusBadRequest), nil
		case errors.Is(err, core.ErrCostExceedsCapacity):
			ev.Outcome = OutcomeRefused
			return m.refuse(ctx, req, res, ev, http.StatusRequestEntityTooLarge), nil
		}
		return m.failed(ctx, req, res, ev), nil
	}
	// The Usage of the router's middleware, when this one is a Route inside
	// it: the client sees both checks' policies.
	var outer *Usage
	if m.s.route {
		if outer = FromContext(ctx); outer != nil && outer.done.Load() {
			outer = nil
		}
	}

	if result.Allowed {
		var u *Usage
		// The rollout's dry run: only once the enforced policies admitted
		// the request (were the shadow ones enforced, a denial would have
		// consumed from none), in a check of their own, so that a shadow
		// denial changes nothing the client sees or the others consume.
		var shadow core.Result
		var shadowErr error
		if set.Shadow != nil {
			shadowErr = m.check(ctx, sc, key, set.Shadow, cost, &sc.sd, &shadow)
		}
		if set.Slots || len(result.Decisions) > 0 && (m.s.usage || m.s.route || m.routed.Load()) {
			if result.At.IsZero() { // shadow policies alone: theirs is the charge
				result.At = shadow.At
			}
			u = m.newUsage(ctx, outer, key, plan, cost, set, result, shadowErr == nil && shadow.Allowed)
		}
		if u != nil && u.set != nil {
			sc.buf = u.set.WriteHeaders(res, u.Decisions, bindAllowed(u.Decisions), sc.buf)
		} else if len(result.Decisions) > 0 {
			sc.buf = set.WriteHeaders(res, result.Decisions, result.Binding, sc.buf)
		}
		if m.s.observers != nil {
			ev := Event{Outcome: OutcomeAllowed, Request: req, Key: key, Plan: plan, Policies: set.Policies, Cost: cost, Result: result, Shadow: shadow, ShadowErr: shadowErr}
			if len(result.Decisions) > 0 {
				ev.Source = result.Decisions[result.Binding].Source
			}
			m.observe(ctx, ev)
		}
		if m.s.shaper != nil && len(result.Decisions) > 0 {
			var delay = result.Decisions[0].Delay
			for i := 1; i < len(result.Decisions); i++ {
				delay = max(delay, result.Decisions[i].Delay)
			}
			if delay > 0 {
				if err := m.s.shaper(ctx, delay); err != nil {
					if u != nil { // the request ends here: give its charge back
						u.done.Store(true)
						u.release()
						u.settle(ctx, 0)
					}
					return false, nil
				}
			}
		}
		return true, u
	}
	// A denial has a decision: only a set of shadow policies alone has
	// none, and it admits.
	shown, hset := result, set
	if outer != nil {
		// The router's middleware admitted the request that this route
		// denies: its charge goes back, and the client sees both.
		ds := outer.refund(ctx, sc.all[:0])
		if joined := m.joined(outer, set); joined != nil {
			ds = append(ds, result.Decisions...)
			shown = core.Result{Decisions: ds, Policies: joined.Policies, Binding: len(ds) - len(result.Decisions) + result.Binding, At: result.At}
			hset = joined
		}
		sc.all = ds
	}
	sc.buf = hset.WriteDenial(res, shown, sc.buf)
	var werr error
	if m.defaultDenied {
		// The prepared body of this set and these violated policies: a flood
		// of denied requests marshals nothing.
		werr = res.Write(http.StatusTooManyRequests, fields.ContentTypeProblem, hset.DeniedBody(shown))
	} else {
		tr := &trackedResponse{Response: res}
		werr = m.s.denied(req, tr, shown)
		if !tr.wrote { // a handler that wrote nothing must not turn a denial into a 200
			werr = errors.Join(werr, denyProblem(req, res, shown))
		}
	}
	if m.s.observers != nil { // an Event is large: built only when someone sees it
		m.observe(ctx, Event{Outcome: OutcomeDenied, Request: req, Key: key, Plan: plan, Policies: set.Policies, Cost: cost, Result: result, Err: werr, Source: result.Decisions[result.Binding].Source})
	}
	return false, nil
}

// check asks the limiter for a check of cost units for key under policies,
// with the items in sc and the decisions in *out, which grows as needed,
// and writes its result to *r (through a pointer, as Limiter.single does).
func (m *Middleware) check(ctx context.Context, sc *scratch, key string, policies []core.Policy, cost int, out *[]core.Decision, r *core.Result) (err error) {
	if sc.itemsOf != &policies[0] || len(sc.items) != len(policies) {
		sc.items = sc.items[:0]
		for i := range policies {
			sc.items = append(sc.items, core.Item{Policy: policies[i]})
		}
		sc.itemsOf = &policies[0]
	}
	for i := range sc.items {
		sc.items[i].Key, sc.items[i].Cost = key, cost
		if policies[i].Algorithm == core.Concurrency {
			sc.items[i].Cost = 1 // a request takes one slot, whatever its cost
		}
	}
	*r, err = m.limiter.Do(ctx, sc.items, (*out)[:0])
	for i := range sc.items {
		sc.items[i].Key = "" // keep no key alive in the pool
	}
	if cap(r.Decisions) > cap(*out) {
		*out = r.Decisions[:0]
	}
	r.Policies = policies
	return err
}

// callerError handles an error of the key function or the plan function:
// keyfuncs.ErrSkip lets the request through, a *keyfuncs.MissingKeyError
// refuses it with its status, anything else is a bug of the caller's
// function, answered 500: the failure mode is for a store that is down.
func (m *Middleware) callerError(ctx context.Context, req keyfuncs.Request, res adapter.Response, ev Event, err error) bool {
	ev.Err = err
	if errors.Is(err, keyfuncs.ErrSkip) {
		ev.Outcome, ev.Request, ev.Err = OutcomeSkipped, req, nil
		m.observe(ctx, ev)
		return true
	}
	var mk *keyfuncs.MissingKeyError
	if errors.As(err, &mk) {
		status := mk.Status
		if status < 400 || status > 499 {
			status = http.StatusBadRequest
		}
		ev.Outcome = OutcomeRefused
		return m.refuse(ctx, req, res, ev, status)
	}
	ev.Outcome = OutcomeRefused
	return m.refuse(ctx, req, res, ev, http.StatusInternalServerError)
}

// refuse answers a request with an unusable key or cost.
func (m *Middleware) refuse(ctx context.Context, req keyfuncs.Request, res adapter.Response, ev Event, status int) bool {
	ev.Request = req
	tr := &trackedResponse{Response: res}
	werr := m.s.onError(req, tr, status, ev.Err)
	if !tr.wrote { // a handler that wrote nothing must not let the request through
		werr = errors.Join(werr, errorProblem(req, res, status, ev.Err))
	}
	if werr != nil {
		ev.Err = errors.Join(ev.Err, werr)
	}
	m.observe(ctx, ev)
	return false
}

// failed applies the failure mode to a limiter or key function failure.
func (m *Middleware) failed(ctx context.Context, req keyfuncs.Request, res adapter.Response, ev Event) bool {
	if m.s.failure == FailOpen {
		ev.Outcome, ev.Source = OutcomeFailedOpen, core.SourceFailOpen
		ev.Request = req
		m.observe(ctx, ev)
		return true
	}
	ev.Outcome, ev.Source = OutcomeFailedClosed, core.SourceFailClosed
	return m.refuse(ctx, req, res, ev, http.StatusServiceUnavailable)
}

func (m *Middleware) observe(ctx context.Context, ev Event) {
	for _, o := range m.s.observers {
		m.call(o, ctx, ev)
	}
}

// call runs one observer, recovering a panic so that a broken observer
// never takes the request path down; ObserverPanics counts them.
func (m *Middleware) call(o Observer, ctx context.Context, ev Event) {
	defer func() {
		if recover() != nil {
			m.panics.Add(1)
		}
	}()
	o(ctx, ev)
}

// ObserverPanics returns how many observer calls of this Middleware
// panicked. The middleware recovers such a panic and carries on with the
// request as if the observer had returned; the metrics module exports this
// count.
func (m *Middleware) ObserverPanics() uint64 { return m.panics.Load() }

// withDefaults returns a copy of policies with s's algorithm on those that
// name none and, on the leaky-bucket ones that set no MaxDelay, the ceiling
// of WithMaxDelay (1 s when unset and shaping is on, none without shaping).
func withDefaults(policies []core.Policy, s settings) []core.Policy {
	maxDelay := s.maxDelay
	if maxDelay == 0 && s.shaper != nil {
		// The ceiling bounds a hold; without shaping nothing is held, and the
		// leaky bucket meters: it admits up to its capacity at once.
		maxDelay = defaultMaxDelay
	}
	out := append([]core.Policy(nil), policies...)
	for i := range out {
		if out[i].Algorithm == "" {
			out[i].Algorithm = s.algorithm
		}
		if out[i].Algorithm == core.LeakyBucket && out[i].MaxDelay == 0 { // "" is GCRA
			out[i].MaxDelay = maxDelay
		}
	}
	return out
}

// newSet renders the header fields of mode for policies (fields.NewSet),
// its errors matching ErrInvalidConfig, or core.ErrInvalidPolicy for an
// invalid policy. clock tells calendar windows apart in the headers.
func newSet(mode HeaderMode, clock core.Clock, policies []core.Policy) (*fields.Set, error) {
	s, err := fields.NewSet(fields.Mode(mode), policies)
	if err != nil {
		if !errors.Is(err, core.ErrInvalidPolicy) {
			err = fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		return nil, err
	}
	s.Clock = clock
	return s, nil
}
