package lease

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/opt"
)

// errUnleasable reports a policy New cannot lease: a leaky bucket, whose
// admitted requests each get their own Delay, or a concurrency limit, whose
// slots are given back one by one at the instant each was taken.
var errUnleasable = fmt.Errorf("%w: lease: leaky buckets and concurrency limits cannot be leased: each admission has its own delay, or its own slot to give back", core.ErrUnsupported)

// Defaults of the options.
const (
	// defaultHotRate is the rate, in checks per second on one instance, from
	// which a key is hot.
	defaultHotRate = 1000
	// defaultLifetime is the longest a lease lives.
	defaultLifetime = 100 * time.Millisecond
	// defaultMaxUnits bounds the units of one lease.
	defaultMaxUnits = 1000
	// defaultMaxKeys bounds the keys whose rate and lease are tracked.
	defaultMaxKeys = 4096
)

// measure is the period over which a key's local rate is counted.
const measure = 100 * time.Millisecond

const shards = 16

// Option configures a Backend (see package core for the options' rule).
type Option func(*config)

type config struct {
	opt.Errs
	hotRate, maxUnits, maxKeys int
	lifetime                   time.Duration
}

// WithHotRate sets the rate, in checks per second on this instance, from
// which a key is served from leases (default 1000).
func WithHotRate(perSecond int) Option {
	return func(c *config) { opt.Count(&c.Errs, &c.hotRate, "WithHotRate", perSecond, defaultHotRate) }
}

// WithLifetime sets the longest a lease lives (default 100 ms).
// Longer leases cost the store fewer calls and waste more units when a key
// cools down; a fixed window's lease also ends with its window.
func WithLifetime(d time.Duration) Option {
	return func(c *config) { opt.Count(&c.Errs, &c.lifetime, "WithLifetime", d, defaultLifetime) }
}

// WithMaxUnits bounds the units of one lease (default 1000), and
// with it the units one instance can waste per hot key and lease lifetime.
func WithMaxUnits(n int) Option {
	return func(c *config) { opt.Count(&c.Errs, &c.maxUnits, "WithMaxUnits", n, defaultMaxUnits) }
}

// WithMaxKeys bounds the (key, policy) pairs the Backend tracks (default
// 4096); beyond it new keys go to the store until an entry is idle.
func WithMaxKeys(n int) Option {
	return func(c *config) { opt.Count(&c.Errs, &c.maxKeys, "WithMaxKeys", n, defaultMaxKeys) }
}

// Backend is a core.Backend that serves hot keys of its policies from
// leases taken from the store. It is safe for concurrent use and starts no
// goroutine. Create one with New.
type Backend struct {
	store    core.Backend
	leasable []core.Policy
	params   []core.Params // of each leasable policy
	hotRate  int64
	lifetime int64 // µs
	maxUnits int64
	perShard int
	seed     maphash.Seed
	shards   [shards]shard

	leases, leased, wasted, local atomic.Uint64
}

type shard struct {
	mu      sync.Mutex
	entries map[entryKey]*entry
}

type entryKey struct {
	key    string
	policy int // index into leasable
}

// entry is one key's local rate and lease under one policy. Guarded by its
// shard's lock.
type entry struct {
	since   int64 // start of the current measuring period, µs
	count   int64 // checks since then
	rate    int64 // checks per second over the last full period
	units   int64 // left in the lease
	takenAt int64 // µs
	// from is the earliest instant the lease serves: a little before it
	// was taken, since concurrent checks read the clock in no strict
	// order, but never before a fixed window's start.
	from    int64
	expires int64 // µs; the lease serves checks before it
	base    core.Decision
	taking  bool // a lease is being taken: others go to the store
	shrink  int  // halvings of the next lease after the store refused one
}

var (
	_ core.Backend = (*Backend)(nil)
	_ core.Bounded = (*Backend)(nil)
)

// Bounded implements core.Bounded with the store's answer.
func (b *Backend) Bounded() bool { s, ok := b.store.(core.Bounded); return ok && s.Bounded() }

// New returns a Backend over store that may lease the given policies. It
// fails for a leaky-bucket or concurrency policy (core.ErrUnsupported), an
// invalid policy, no policy, a nil store or an invalid option.
func New(store core.Backend, policies []core.Policy, opts ...Option) (*Backend, error) {
	if store == nil {
		return nil, errors.New("lease: New called with a nil store")
	}
	if len(policies) == 0 {
		return nil, errors.New("lease: New called with no policy to lease: it would only pass checks on")
	}
	c := config{Errs: opt.Errs{Pkg: "lease"}, hotRate: defaultHotRate, maxUnits: defaultMaxUnits, maxKeys: defaultMaxKeys, lifetime: defaultLifetime}
	opt.Apply(&c, opts)
	if c.Err != nil {
		return nil, c.Err
	}
	b := &Backend{store: store, hotRate: int64(c.hotRate), lifetime: c.lifetime.Microseconds(), maxUnits: int64(c.maxUnits),
		perShard: max(c.maxKeys/shards, 1), seed: maphash.MakeSeed()}
	for _, p := range policies {
		pr, err := p.Params()
		if err != nil {
			return nil, err
		}
		if p.Algorithm == core.LeakyBucket || p.Algorithm == core.Concurrency { // as named: Params keeps slots as a sliding log
			return nil, fmt.Errorf("%w (policy %s)", errUnleasable, p)
		}
		b.leasable = append(b.leasable, p)
		b.params = append(b.params, pr)
	}
	for i := range b.shards {
		b.shards[i].entries = make(map[entryKey]*entry)
	}
	return b, nil
}

// Stats are the Backend's counters since it was created.
type Stats struct {
	Leases      uint64 // leases taken from the store
	UnitsLeased uint64 // units those leases consumed in the store
	UnitsWasted uint64 // leased units that expired unused
	LocalAdmits uint64 // checks admitted from a lease, without a store call
}

// Stats returns the counters.
func (b *Backend) Stats() Stats {
	return Stats{Leases: b.leases.Load(), UnitsLeased: b.leased.Load(), UnitsWasted: b.wasted.Load(), LocalAdmits: b.local.Load()}
}

// tracked returns the number of (key, policy) pairs whose rate and lease
// the Backend holds, at most WithMaxKeys.
func (b *Backend) tracked() int {
	n := 0
	for i := range b.shards {
		b.shards[i].mu.Lock()
		n += len(b.shards[i].entries)
		b.shards[i].mu.Unlock()
	}
	return n
}

// Do implements core.Backend: a batch of one consuming item of a leasable
// policy may be served from a lease; any other batch goes to the store. A
// reset the store made also drops this instance's leases of its items;
// other instances' leases stay until they expire.
func (b *Backend) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	if len(items) == 1 && len(out) >= 1 && items[0].Op == core.OpConsume {
		if i := b.index(items[0].Policy); i >= 0 {
			return b.checkOne(ctx, i, items, now, out)
		}
	}
	err := b.store.Do(ctx, items, now, out)
	if err == nil && items[0].Op == core.OpReset {
		for _, it := range items {
			if i := b.index(it.Policy); i >= 0 {
				sh := b.shard(it.Key)
				sh.mu.Lock()
				delete(sh.entries, entryKey{it.Key, i})
				sh.mu.Unlock()
			}
		}
	}
	return err
}

// checkOne decides the one consuming item of items, of the leasable policy
// i, writing its decision into out[0].
func (b *Backend) checkOne(ctx context.Context, i int, items []core.Item, now time.Time, out []core.Decision) error {
	key, p, cost := items[0].Key, items[0].Policy, items[0].Cost
	if cost <= 0 || int64(cost) > b.params[i].Capacity {
		return b.store.Do(ctx, items, now, out)
	}
	if err := core.ValidateKey(key); err != nil {
		out[0] = core.Decision{}
		return err
	}
	t, c := now.UnixMicro(), int64(cost)
	sh := b.shard(key)
	sh.mu.Lock()
	e := sh.entries[entryKey{key, i}]
	if e == nil {
		e = b.track(sh, entryKey{key, i}, t)
	}
	if e == nil { // no room: untracked
		sh.mu.Unlock()
		return b.store.Do(ctx, items, now, out)
	}
	e.observe(t)
	if t < e.from && t < e.expires && e.units > 0 {
		// A check from before the lease (a clock behind): the store
		// answers it, and the lease stays for the checks after it.
		sh.mu.Unlock()
		return b.store.Do(ctx, items, now, out)
	}
	if t < e.expires && e.units >= c {
		e.units -= c
		d := e.base
		d.Remaining = clampInt(int64(e.base.Remaining) + e.units)
		d.ResetAfter = max(e.base.ResetAfter-time.Duration(max(t-e.takenAt, 0))*time.Microsecond, 0)
		d.RetryAfter, d.Delay, d.Source = 0, 0, core.SourceLease
		sh.mu.Unlock()
		b.local.Add(1)
		out[0] = d
		return nil
	}
	e.expire(b, t)
	n := b.leaseSize(e, i, c)
	if e.rate < b.hotRate || e.taking || n <= c {
		sh.mu.Unlock()
		return b.store.Do(ctx, items, now, out)
	}
	e.taking = true
	sh.mu.Unlock()

	d, err := b.take(ctx, key, p, int(n), now)
	sh.mu.Lock()
	e.taking = false
	if err != nil || !d.Allowed {
		if err == nil {
			e.shrink++ // the store had less room: ask for less next time
		}
		sh.mu.Unlock()
		// The lease's error or denial says nothing exact about cost units:
		// ask for them alone.
		return b.store.Do(ctx, items, now, out)
	}
	e.shrink = 0
	e.units += n - c
	e.takenAt, e.base = t, d
	e.from, e.expires = t-b.lifetime, t+b.lifetime
	if pr := &b.params[i]; pr.Algorithm == core.FixedWindow {
		// A fixed window's units must not leave it: its ResetAfter is the
		// time to the window's end.
		end := t + d.ResetAfter.Microseconds()
		start, _ := pr.Bounds(end - 1)
		e.from, e.expires = max(e.from, start), min(e.expires, end)
	}
	left := e.units
	sh.mu.Unlock()
	b.leases.Add(1)
	b.leased.Add(uint64(n))
	d.Remaining = clampInt(int64(d.Remaining) + left)
	out[0] = d
	return nil
}

// take asks the store for a lease of n units of key under p.
func (b *Backend) take(ctx context.Context, key string, p core.Policy, n int, now time.Time) (core.Decision, error) {
	var out [1]core.Decision
	err := core.Check(ctx, b.store, key, []core.Policy{p}, n, now, out[:])
	return out[0], err
}

// leaseSize is the units to ask for: about a lifetime's worth of the key's
// local rate, halved per refusal since the last grant, within the largest
// lease and the policy's capacity.
func (b *Backend) leaseSize(e *entry, i int, cost int64) int64 {
	n := e.rate * b.lifetime / 1e6
	n >>= min(e.shrink, 62)
	return min(max(n, cost), b.maxUnits, b.params[i].Capacity)
}

func (b *Backend) index(p core.Policy) int {
	for i := range b.leasable {
		if b.leasable[i] == p {
			return i
		}
	}
	return -1
}

func (b *Backend) shard(key string) *shard { return &b.shards[maphash.String(b.seed, key)%shards] }

// track returns a new entry for k, reusing an idle one when the shard is
// full, or nil when every entry holds a live lease or was checked within the
// measuring period. Requires sh.mu.
func (b *Backend) track(sh *shard, k entryKey, t int64) *entry {
	if len(sh.entries) >= b.perShard {
		// Look at a few entries, in the map's random order, for one that
		// is idle: bounded work per new key, even under a flood of them.
		evicted, looked := false, 0
		for ok, e := range sh.entries {
			if (e.units == 0 || t >= e.expires) && !e.taking && t-e.since >= 2*measure.Microseconds() {
				e.expire(b, t)
				delete(sh.entries, ok)
				evicted = true
				break
			}
			if looked++; looked == 8 {
				break
			}
		}
		if !evicted {
			return nil
		}
	}
	k.key = strings.Clone(k.key) // the caller's key may share a larger buffer
	e := &entry{since: t}
	sh.entries[k] = e
	return e
}

// observe counts a check at t in the key's local rate.
func (e *entry) observe(t int64) {
	p := measure.Microseconds()
	switch {
	case t < e.since: // a clock behind: start over
		e.since, e.count = t, 0
	case t-e.since >= p:
		e.rate = e.count * 1e6 / (t - e.since)
		e.since, e.count = t, 0
	}
	e.count++
	e.rate = max(e.rate, e.count*1e6/p) // a burst within the period already counts
}

// expire ends the lease if it expired at t, counting its units as wasted.
func (e *entry) expire(b *Backend, t int64) {
	if e.units > 0 && t >= e.expires {
		b.wasted.Add(uint64(e.units))
		e.units = 0
	}
}

func clampInt(v int64) int { return int(min(v, int64(^uint(0)>>1))) }
