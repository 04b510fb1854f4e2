package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/opt"
)

// Store is a core.Backend that keeps state in Redis and decides every check
// in one atomic script call, so that Stores over one Redis deployment
// enforce one limit exactly. It is safe for concurrent use, keeps no
// goroutine and needs no closing (close the client). Create one with New.
type Store struct {
	slotKey  func(string) string // nil: every key is its own hash tag
	client   redis.UniversalClient
	prefix   string
	calls    *batcher
	policies policyCache
	dels     chan struct{} // a token per DEL sent from a goroutine of its own (del)
}

var (
	_ core.Backend = (*Store)(nil)
	_ core.Bounded = (*Store)(nil)
)

// Bounded implements core.Bounded: true. Every call returns once its
// context is done or its wait limit has passed, even when Redis hangs (the
// command may still run in Redis). At most WithPipelines script calls are
// on the wire, and at most 256 script calls and 256 DELs run from the
// Store's own goroutines.
func (*Store) Bounded() bool { return true }

// ErrCrossSlot reports a multi-key check on a Redis Cluster whose keys fall
// into different hash slots, which one script call cannot touch together.
// Give the keys a common slot key (WithSlotKey).
var ErrCrossSlot = errors.New("redisstore: the keys of a multi-key check are in different cluster slots; use WithSlotKey")

// New returns a Store over client, any go-redis v9 client: queued checks
// share one script call on a *redis.Client, within one hash slot on a
// *redis.ClusterClient, within one hash tag otherwise. Without options keys start with
// "ratelimit:" and TTLs have no margin. New makes no round trip; it fails
// for a nil client or an invalid option.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil || isNilPointer(client) {
		return nil, errors.New("redisstore: New called with a nil client")
	}
	c := config{Errs: opt.Errs{Pkg: "redisstore"}, prefix: defaultPrefix, pipelines: defaultPipelines, perCall: defaultChecksPerCall}
	opt.Apply(&c, opts)
	if c.Err != nil {
		return nil, c.Err
	}
	if c.pipelines < 0 { // WithoutBatching: every call goes out at once
		c.pipelines = math.MaxInt
	}
	return &Store{slotKey: c.slotKey, client: client, prefix: c.prefix, dels: make(chan struct{}, maxSenders),
		calls: &batcher{client: client, margin: c.margin, max: c.pipelines, perCall: c.perCall, route: routingOf(client)}}, nil
}

// Do implements core.Backend in one script call (a reset: one DEL). On a
// Cluster the keys of a batch must share a hash slot: a batch of several
// keys needs WithSlotKey, and fails with ErrCrossSlot otherwise, changing
// nothing.
func (s *Store) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	if err := core.ValidateItems(items); err != nil {
		return err
	}
	op := "check"
	switch items[0].Op {
	case core.OpPeek:
		op = "peek"
	case core.OpRefund:
		op = "refund"
	case core.OpCharge:
		op = "charge"
	case core.OpReset:
		op = "reset"
	}
	if len(out) < len(items) {
		return fmt.Errorf("redisstore: %s: out has %d elements for %d items", op, len(out), len(items))
	}
	var err error
	if items[0].Op == core.OpReset {
		if err = s.reset(ctx, items, out[:len(items)]); err != nil {
			err = fmt.Errorf("redisstore: reset: %w", err)
		}
	} else {
		err = s.call(ctx, op, s.newItemsCall(items, now), items, out)
	}
	if err != nil && strings.Contains(err.Error(), "CROSSSLOT") {
		return fmt.Errorf("%w: %w", ErrCrossSlot, err)
	}
	return err
}

// reset deletes the states of validated OpReset items in one DEL: on a
// Cluster, keys of one key name share a hash slot (see WithSlotKey for
// several).
func (s *Store) reset(ctx context.Context, items []core.Item, out []core.Decision) error {
	clear(out)
	var buf [headBuf]byte
	keys := make([]string, len(items)) // those a check of the items reads and writes
	for i := range items {
		keys[i] = string(append(s.appendHead(buf[:0], items[i].Key), s.policies.get(items[i].Policy).id...))
	}
	return s.del(ctx, keys)
}

// del deletes keys; when the caller may stop waiting, from a goroutine (at
// most maxSenders), so that it returns once ctx is done.
func (s *Store) del(ctx context.Context, keys []string) error {
	left, limited := waitLeft(ctx)
	switch {
	case !limited && ctx.Done() == nil:
		return s.client.Del(ctx, keys...).Err()
	case limited && left <= 0:
		return context.DeadlineExceeded // not sent: nobody would wait for it
	}
	t, expired := limitTimer(left, limited)
	defer stopTimer(t)
	select {
	case s.dels <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-expired:
		return context.DeadlineExceeded
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			<-s.dels
			if r := recover(); r != nil {
				done <- fmt.Errorf("redisstore: DEL panicked: %v", r)
			}
		}()
		done <- s.client.Del(ctx, keys...).Err()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-expired:
		return context.DeadlineExceeded
	}
}

// newItemsCall returns the call that decides a validated batch: one cost
// when every item has the same (0 for a peek), else each item's.
func (s *Store) newItemsCall(items []core.Item, now time.Time) *call {
	cost := int64(items[0].Cost)
	switch items[0].Op {
	case core.OpPeek:
		cost = 0
	case core.OpRefund, core.OpCharge:
		cost = -2
	}
	c := newCallOf(len(items), now.UnixMicro(), cost)
	if cost == -2 {
		c.costs = make([]int64, 2*len(items))
		for i := range items {
			units, at := int64(items[i].Cost), c.now
			if items[i].Op == core.OpRefund {
				units = -units
			}
			if !items[i].At.IsZero() {
				at = items[i].At.UnixMicro()
			}
			c.costs[2*i], c.costs[2*i+1] = units, at
		}
	} else if cost != 0 {
		for i := 1; i < len(items); i++ {
			if items[i].Cost != items[0].Cost {
				c.cost, c.costs = -1, make([]int64, len(items))
				for j := range items {
					c.costs[j] = int64(items[j].Cost)
				}
				break
			}
		}
	}
	var buf [headBuf]byte
	head := s.appendHead(buf[:0], items[0].Key)
	for i := range items {
		it := &items[i]
		if i > 0 && it.Key != items[i-1].Key {
			head = s.appendHead(buf[:0], it.Key)
		}
		c.pis[i] = s.policies.get(it.Policy).at(c.now)
		c.keys[i] = string(append(head, c.pis[i].id...))
	}
	return c
}

// headBuf is the size of the stack buffer a check builds its Redis keys in
// (a longer head grows onto the heap).
const headBuf = 32 + 1 + maxTagLen + 2 + policyIDLen + 16

// appendHead appends what the Redis keys of key start with to dst.
func (s *Store) appendHead(dst []byte, key string) []byte {
	if s.slotKey != nil {
		return appendKeyHeadIn(dst, s.prefix, s.slotKey(key), key)
	}
	return appendKeyHead(dst, s.prefix, key)
}

// call decides c and decodes its reply into out, one decision per policy.
func (s *Store) call(ctx context.Context, op string, c *call, items []core.Item, out []core.Decision) error {
	reply, err := s.calls.run(ctx, c)
	if err != nil {
		return fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if len(reply) != replyPerKey*len(items) {
		return fmt.Errorf("redisstore: %s: script replied %d numbers for %d items, want %d", op, len(reply), len(items), replyPerKey*len(items))
	}
	for i := range items {
		r := reply[replyPerKey*i : replyPerKey*(i+1)]
		out[i] = core.Decision{
			Allowed:    r[0] == 1,
			Limit:      items[i].Policy.Limit,
			Remaining:  int(r[1]),
			RetryAfter: time.Duration(r[2]) * time.Microsecond,
			ResetAfter: time.Duration(r[3]) * time.Microsecond,
			Delay:      time.Duration(r[4]) * time.Microsecond,
		}
	}
	return nil
}

// isNilPointer reports whether c holds a nil pointer of one of go-redis's
// client types, which a nil check of the interface does not catch.
func isNilPointer(c redis.UniversalClient) bool {
	switch v := c.(type) {
	case *redis.Client:
		return v == nil
	case *redis.ClusterClient:
		return v == nil
	case *redis.Ring:
		return v == nil
	}
	return false
}
