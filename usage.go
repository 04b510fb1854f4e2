package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
)

// Usage is what the middleware charged an admitted request, published in
// the request's context (FromContext) with WithUsage, for a Route's
// middleware and the one it was made from, and for concurrency limits. The
// handler settles the request's cost through it, refunds it, or resets its
// key. A request checked by the router's middleware and then by a Route has
// one Usage covering both, the router's policies first. The exported fields
// must not be modified; a Usage is safe for concurrent use.
type Usage struct {
	// Key is the request's rate-limit key.
	Key string
	// Plan is the plan that applied (WithPlans), "" when none did.
	Plan string
	// Cost is the units charged when the request was admitted: WithCost's,
	// 1 by default.
	Cost int
	// Policies are the enforced policies that checked the request and
	// Decisions their decisions at admission, in the order the RateLimit
	// header fields list them.
	Policies  []core.Policy
	Decisions []core.Decision

	m      *Middleware
	ctx    context.Context // the request's context carrying this Usage
	set    *fields.Set     // the header fields of Policies; nil: ownSet's alone
	ownSet *fields.Set     // the policy set this middleware checked
	at     time.Time       // the instant of the charge
	own    []core.Policy   // the policies this middleware charged: the tail of Policies
	shadow []core.Policy   // the shadow policies it charged too, if any
	outer  *Usage          // the Usage of the middleware this Route runs inside
	final  atomic.Int64    // the cost SetCost set; -1: none
	done   atomic.Bool     // settled, refunded or reset: nothing left to do

	// The slots of concurrency limits (core.Concurrency) the request holds:
	// taken at slotAt, renewed while the handler runs, given back when it
	// ends. mu orders a renewal before the release.
	mu       sync.Mutex
	slotAt   time.Time
	released bool
	timer    *time.Timer        // the next renewal on the system clock
	stop     context.CancelFunc // ends the renewals on a clock of its own
}

// usageContext is the context a published Usage rides in, allocated with it.
type usageContext struct {
	context.Context
	u  Usage
	ds [2]core.Decision // room for Usage.Decisions
}

type usageKey struct{}

func (c *usageContext) Value(key any) any {
	if key == (usageKey{}) {
		return &c.u
	}
	return c.Context.Value(key)
}

// FromContext returns the Usage of the request whose context ctx is or
// derives from (Gin: c.Request.Context(); Fiber: c.UserContext()), or nil
// when no middleware published one.
func FromContext(ctx context.Context) *Usage {
	u, _ := ctx.Value(usageKey{}).(*Usage)
	return u
}

var errNoUsage = fmt.Errorf("%w: no Usage in the request's context: build the middleware WithUsage", ErrInvalidConfig)

// SetCost sets the request's final cost, in the units of WithCost. Once the
// handler has returned, the middleware refunds the excess (core.OpRefund)
// or charges the rest (core.OpCharge) even past the limit, so that the
// key's next requests wait the debt out; SetCost(0) refunds the whole
// charge. The last call before the handler returns wins. It fails for a nil
// Usage and, matching core.ErrInvalidCost, for a negative n.
func (u *Usage) SetCost(n int) error {
	if u == nil {
		return errNoUsage
	}
	if n < 0 {
		return fmt.Errorf("%w: SetCost(%d): a final cost is 0 or more", core.ErrInvalidCost, n)
	}
	for ; u != nil; u = u.outer {
		u.final.Store(int64(n))
	}
	return nil
}

// Reset forgets the state of the request's key under every policy of the
// request (a successful login clearing the failures before it), leaving
// nothing to settle; of a concurrency limit it gives back this request's
// slot only.
func (u *Usage) Reset(ctx context.Context) error {
	if u == nil {
		return errNoUsage
	}
	var errs []error
	for ; u != nil; u = u.outer {
		u.done.Store(true)
		u.release()
		// The slots of a concurrency limit are other requests' too: the
		// request gives back its own.
		var quotas []core.Policy
		for _, ps := range [2][]core.Policy{u.own, u.shadow} {
			for _, p := range ps {
				if p.Algorithm != core.Concurrency {
					quotas = append(quotas, p)
				}
			}
		}
		if len(quotas) > 0 {
			if err := u.m.limiter.Reset(ctx, u.Key, quotas...); err != nil {
				errs = append(errs, err)
			}
		}
		if _, err := u.settle(ctx, int64(u.Cost)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// newUsage builds the Usage of a request this middleware admitted with
// result, under the Usage of an enclosing middleware when outer is not nil,
// and the context that carries it.
func (m *Middleware) newUsage(ctx context.Context, outer *Usage, key, plan string, cost int, set *fields.Set, result core.Result, shadowCharged bool) *Usage {
	c := &usageContext{Context: ctx}
	u := &c.u
	u.ctx, u.m, u.Key, u.Plan, u.Cost, u.at = c, m, key, plan, cost, result.At
	u.own, u.ownSet, u.outer = set.Policies, set, outer
	if shadowCharged {
		u.shadow = set.Shadow
	}
	u.final.Store(-1)
	u.Policies = set.Policies
	ds := result.Decisions
	if outer != nil {
		u.Policies = append(outer.Policies[:len(outer.Policies):len(outer.Policies)], set.Policies...)
		if joined := m.joined(outer, set); joined != nil {
			u.set, u.Policies = joined, joined.Policies
		}
		ds = append(outer.Decisions[:len(outer.Decisions):len(outer.Decisions)], ds...)
	}
	if len(ds) <= len(c.ds) {
		u.Decisions = append(c.ds[:0], ds...)
	} else {
		u.Decisions = append([]core.Decision(nil), ds...)
	}
	if set.Slots {
		u.slotAt = result.At
		u.renewEvery(renewal(set))
	}
	return u
}

// renewal is how often a request renews its slots while its handler runs:
// three times in the shortest lifetime of a slot of set.
func renewal(set *fields.Set) time.Duration {
	var d time.Duration
	for _, ps := range [2][]core.Policy{set.Policies, set.Shadow} {
		for _, p := range ps {
			if p.Algorithm == core.Concurrency && (d == 0 || p.Window < d) {
				d = p.Window
			}
		}
	}
	return max(d/3, time.Microsecond)
}

// renewEvery renews u's slots every d of the limiter's clock until they are
// given back: a timer on the system clock, a goroutine on a clock with its
// own After (core.ManualClock).
func (u *Usage) renewEvery(d time.Duration) {
	c, manual := u.m.limiter.Clock().(interface {
		After(time.Duration) <-chan time.Time
	})
	if !manual {
		u.mu.Lock() // the timer may fire before it is stored
		defer u.mu.Unlock()
		u.timer = time.AfterFunc(d, func() {
			if u.renew() {
				u.mu.Lock()
				if !u.released {
					u.timer.Reset(d)
				}
				u.mu.Unlock()
			}
		})
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	u.stop = stop
	fired := c.After(d) // set now: the first renewal counts from the charge
	go func() {
		for {
			select {
			case <-fired:
			case <-ctx.Done():
				return
			}
			fired = c.After(d) // before the renewal, which takes its time
			if !u.renew() {
				return
			}
		}
	}()
}

// renew takes u's slots again at now in place of those taken at slotAt
// (core.OpCharge with At), and reports whether to go on. A slot whose
// lifetime has passed is not renewed: another request may hold it by now.
func (u *Usage) renew() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.released {
		return false
	}
	now := u.m.limiter.Clock().Now()
	var items []core.Item
	for _, ps := range [2][]core.Policy{u.own, u.shadow} {
		for _, p := range ps {
			if p.Algorithm == core.Concurrency && now.Sub(u.slotAt) < p.Window {
				items = append(items, core.Item{Key: u.Key, Policy: p, Cost: 1, Op: core.OpCharge, At: u.slotAt})
			}
		}
	}
	if len(items) == 0 {
		return false
	}
	if r, err := u.m.limiter.Do(context.WithoutCancel(u.ctx), items, nil); err == nil {
		u.slotAt = r.At
	}
	return true
}

// release ends the renewals of u's slots, so that settle gives back the
// slots as they stand.
func (u *Usage) release() {
	u.mu.Lock()
	u.released = true
	if u.timer != nil {
		u.timer.Stop()
	}
	u.mu.Unlock()
	if u.stop != nil {
		u.stop()
	}
}

// joined returns the header fields of outer's policies followed by set's,
// built once per pair, or nil when they cannot be shown together (two
// policies of one name).
func (m *Middleware) joined(outer *Usage, set *fields.Set) *fields.Set {
	os := outer.set
	if os == nil {
		os = outer.ownSet
	}
	k := [2]*fields.Set{os, set}
	if v, ok := m.joins.Load(k); ok {
		s, _ := v.(*fields.Set)
		return s
	}
	ps := append(append([]core.Policy(nil), os.Policies...), set.Policies...)
	s, err := newSet(m.s.mode, m.limiter.Clock(), ps)
	if err != nil {
		s = nil
	}
	m.joins.Store(k, s)
	return s
}

// finish settles u once the handler has returned with status: the final
// cost SetCost set, or the charge, or nothing when WithUsage's countIf says
// the response does not count.
func (m *Middleware) finish(u *Usage, status int) {
	if u.done.Swap(true) {
		return
	}
	n := u.final.Load()
	if n < 0 {
		n = int64(u.Cost)
	}
	if m.s.countIf != nil && !m.s.countIf(status) {
		n = 0
	}
	u.release()
	u.settle(u.ctx, n)
}

// settle charges or refunds the difference between n and u.Cost on the
// policies u's middleware charged, and gives back its slots, returning the
// policies' decisions afterwards.
func (u *Usage) settle(ctx context.Context, n int64) (core.Result, error) {
	var batches [2][]core.Item // refunds, then charges: a batch has one operation
	for _, ps := range [2][]core.Policy{u.own, u.shadow} {
		for _, p := range ps {
			units, at := n-int64(u.Cost), u.at
			if p.Algorithm == core.Concurrency { // its slot goes back, whatever the cost
				units, at = -1, u.slotAt
			}
			switch {
			case units < 0:
				batches[0] = append(batches[0], core.Item{Key: u.Key, Policy: p, Cost: int(-units), Op: core.OpRefund, At: at})
			case units > 0:
				batches[1] = append(batches[1], core.Item{Key: u.Key, Policy: p, Cost: int(units), Op: core.OpCharge})
			}
		}
	}
	// The request's own context may be cancelled by now (its client gone);
	// the settlement is owed anyway, and the limiter's own bounds apply.
	ctx = context.WithoutCancel(ctx)
	var first core.Result
	var errs []error
	for _, items := range batches {
		if len(items) == 0 {
			continue
		}
		r, err := u.m.limiter.Do(ctx, items, nil)
		if first.Decisions == nil {
			first = r
		}
		errs = append(errs, err)
	}
	return first, errors.Join(errs...)
}

// refund gives back every charge of the Usages from u outwards that is not
// settled yet (a Route denied the request after the router's middleware
// admitted it), appending their policies' decisions, outermost first, to
// ds: the state after the refund where there was one.
func (u *Usage) refund(ctx context.Context, ds []core.Decision) []core.Decision {
	if u.outer != nil {
		ds = u.outer.refund(ctx, ds)
	}
	own := u.Decisions[len(u.Decisions)-len(u.own):]
	if u.done.CompareAndSwap(false, true) {
		u.release()
		if r, err := u.settle(ctx, 0); err == nil && len(r.Decisions) >= len(own) {
			own = r.Decisions[:len(own)]
		}
	}
	return append(ds, own...)
}

// bindAllowed returns the index of the binding decision of an admitted
// check (core.Result.Binding): the fewest units remaining, the longer
// ResetAfter breaking ties.
func bindAllowed(ds []core.Decision) int {
	b := 0
	for i := range ds {
		if ds[i].Remaining < ds[b].Remaining || (ds[i].Remaining == ds[b].Remaining && ds[i].ResetAfter > ds[b].ResetAfter) {
			b = i
		}
	}
	return b
}
