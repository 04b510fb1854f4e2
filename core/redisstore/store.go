package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
)

// Store is a core.Backend that keeps rate-limit state in Redis and decides
// every check in one atomic script call. Several Stores, in one process or
// many, over clients of the same Redis deployment enforce one limit per key
// and policy exactly.
//
// A Store is safe for concurrent use. Besides its configuration it keeps
// only a bounded cache of policy ids and the queue of checks waiting for a
// pipeline; it starts no goroutine and needs no closing (close the client
// when done). Create one with New; the zero value is not usable.
type Store struct {
	client   redis.UniversalClient
	prefix   string
	margin   any // int64 milliseconds, boxed once for the script arguments
	timeout  time.Duration
	calls    *batcher
	policies policyCache
}

var (
	_ core.Backend       = (*Store)(nil)
	_ core.SingleChecker = (*Store)(nil)
)

// New returns a Store over client, which may be a *redis.Client, a
// *redis.ClusterClient, a Sentinel client (redis.NewFailoverClient) or a
// *redis.Ring. Without options keys start with DefaultPrefix, TTLs have no
// margin and calls are bounded by the caller's context alone. New makes no
// round trip: the script is sent on first use.
//
// New returns an error for a nil client or an invalid option.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("redisstore: New called with a nil client")
	}
	c := config{prefix: DefaultPrefix, pipelines: DefaultPipelines}
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.pipelines <= 0 {
		c.pipelines = math.MaxInt // no batching: every call goes out at once
	}
	return &Store{client: client, prefix: c.prefix, margin: c.margin, timeout: c.timeout,
		calls: &batcher{client: client, max: c.pipelines, timeout: c.timeout}}, nil
}

// Check implements core.Backend: one script call decides the check against
// every policy and writes the new states only if all of them admit it.
func (s *Store) Check(ctx context.Context, key string, policies []core.Policy, cost int, now time.Time, out []core.Decision) error {
	if err := core.ValidateCheck(key, policies, cost, false); err != nil {
		return err
	}
	return s.run(ctx, "check", key, policies, int64(cost), now, out)
}

// CheckOne implements core.SingleChecker: Check with one policy.
func (s *Store) CheckOne(ctx context.Context, key string, p core.Policy, cost int, now time.Time) (core.Decision, error) {
	var ps [1]core.Policy
	var out [1]core.Decision
	ps[0] = p
	if err := s.Check(ctx, key, ps[:], cost, now, out[:]); err != nil {
		return core.Decision{}, err
	}
	return out[0], nil
}

// Peek implements core.Backend: the same script with cost 0, which reads and
// never writes.
func (s *Store) Peek(ctx context.Context, key string, policies []core.Policy, now time.Time, out []core.Decision) error {
	if err := core.ValidateCheck(key, policies, 0, true); err != nil {
		return err
	}
	return s.run(ctx, "peek", key, policies, 0, now, out)
}

// Reset implements core.Backend: it deletes the key's state under every
// given policy, in one DEL (all the keys share a hash slot).
func (s *Store) Reset(ctx context.Context, key string, policies []core.Policy) error {
	if err := core.ValidateCheck(key, policies, 0, true); err != nil {
		return err
	}
	ctx, cancel := s.budget(ctx)
	defer cancel()
	if err := s.client.Del(ctx, redisKeys(s.prefix, key, policies, &s.policies)...).Err(); err != nil {
		return fmt.Errorf("redisstore: reset: %w", err)
	}
	return nil
}

// run executes the script for a validated check (cost > 0) or peek (cost 0)
// and decodes its reply into out.
func (s *Store) run(ctx context.Context, op, key string, policies []core.Policy, cost int64, now time.Time, out []core.Decision) error {
	if len(out) < len(policies) {
		return fmt.Errorf("redisstore: %s: out has %d elements for %d policies", op, len(out), len(policies))
	}
	us := now.UnixMicro()
	args := make([]any, 0, headArgs+argsPerPolicy*len(policies))
	args = append(args, us, cost, s.margin)
	keys := make([]string, len(policies))
	head := keyHead(s.prefix, key)
	for i, p := range policies {
		pi := s.policies.get(p)
		args = appendPolicyArgs(args, pi, us)
		keys[i] = string(append(head, pi.id...))
	}

	ctx, cancel := s.budget(ctx)
	defer cancel()
	reply, err := s.calls.run(ctx, keys, args)
	if err != nil {
		return fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if len(reply) != replyPerKey*len(policies) {
		return fmt.Errorf("redisstore: %s: script replied %d numbers for %d policies, want %d", op, len(reply), len(policies), replyPerKey*len(policies))
	}
	for i, p := range policies {
		r := reply[replyPerKey*i : replyPerKey*(i+1)]
		out[i] = core.Decision{
			Allowed:    r[0] == 1,
			Limit:      p.Limit,
			Remaining:  int(r[1]),
			RetryAfter: time.Duration(r[2]) * time.Microsecond,
			ResetAfter: time.Duration(r[3]) * time.Microsecond,
			Delay:      time.Duration(r[4]) * time.Microsecond,
			Policy:     p,
		}
	}
	return nil
}

// budget applies the store's timeout, if any, to ctx.
func (s *Store) budget(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout > 0 {
		return context.WithTimeout(ctx, s.timeout)
	}
	return ctx, func() {}
}
