package redisstore

import (
	"fmt"
	"strings"
	"time"
)

// defaultPrefix is the key prefix when WithPrefix is not given.
const defaultPrefix = "ratelimit:"

// maxPrefixLen bounds the length of a key prefix.
const maxPrefixLen = 128

// config holds the options of a Store.
type config struct {
	slotKey   func(key string) string
	prefix    string
	margin    int64 // milliseconds added to every TTL
	pipelines int
	perCall   int
	err       error // the first invalid option
}

// Option configures a Store. Options are applied in order by New; a later
// option overrides an earlier one of the same kind. An invalid option makes
// New return an error.
type Option func(*config)

// WithPrefix sets the text every Redis key of the store starts with, so that
// several applications or environments can share one Redis. The default is
// "ratelimit:". The prefix may be empty; it must not contain
// '{' or '}' (the store places its own hash tag after it) and must be at most
// 128 bytes.
func WithPrefix(prefix string) Option {
	return func(c *config) {
		switch {
		case strings.ContainsAny(prefix, "{}"):
			c.fail(fmt.Errorf("redisstore: prefix %q contains '{' or '}', which would break the hash tag of every key", prefix))
		case len(prefix) > maxPrefixLen:
			c.fail(fmt.Errorf("redisstore: prefix is %d bytes; at most %d", len(prefix), maxPrefixLen))
		default:
			c.prefix = prefix
		}
	}
}

// WithTTLMargin lengthens every key's TTL by d, rounded up to a millisecond.
// The default, 0, expires a key as soon as its state no longer matters. Set
// it to the largest clock difference expected between the instances (or
// between an instance's clock and Redis's), so that a key written by a fast
// clock is still there when a slow one needs it. A negative d is an error.
func WithTTLMargin(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail(fmt.Errorf("redisstore: TTL margin %v is negative", d))
			return
		}
		c.margin = int64((d + time.Millisecond - 1) / time.Millisecond)
	}
}

// defaultPipelines is the number of pipelines in flight when WithPipelines is
// not given.
const defaultPipelines = 4

// WithPipelines sets how many script calls a Store keeps in flight at once;
// checks that arrive while all are busy wait and go out together next, so
// that under load one write and one read carry many checks: as one script
// call per node that decides them one after another (WithChecksPerCall), or
// as a pipeline of script calls where they cannot share one. Each check
// remains atomic and all-or-nothing on its own. 0 selects 4
// (4); keep n below the client's pool size. A negative n makes New return an
// error.
func WithPipelines(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.fail(fmt.Errorf("redisstore: pipelines %d is negative", n))
		case n == 0:
			c.pipelines = defaultPipelines
		default:
			c.pipelines = n
		}
	}
}

// withoutBatching sends every check as its own EVALSHA the moment it
// arrives, with up to the client's pool size in flight: no queue, no
// shared calls or pipelines. The benchmarks compare it with the default,
// which under load is faster and uses fewer connections.
func withoutBatching() Option {
	return func(c *config) { c.pipelines = -1 }
}

// defaultChecksPerCall is the most checks one script call decides when
// WithChecksPerCall is not given.
const defaultChecksPerCall = 64

// WithChecksPerCall sets the most queued checks one script call decides (see
// WithPipelines). A script call holds its Redis node for the time its checks
// take, a few microseconds each, so a bound keeps a node's other clients
// waiting at most that long. The checks one call may share are those the
// client sends to one node: any checks on a *redis.Client (one Redis, or
// the master under Sentinel), checks of one hash slot on a
// *redis.ClusterClient, checks of one hash tag on any other client. n = 1
// gives every check a script call of its own (queued checks still share a
// pipeline). n < 1 makes New return an error.
func WithChecksPerCall(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.fail(fmt.Errorf("redisstore: checks per call %d is below 1", n))
			return
		}
		c.perCall = n
	}
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// WithSlotKey sets the part of a key that chooses its hash slot: the Redis
// keys of key are tagged with slot(key) instead of key itself, so that keys
// with the same slot key share a slot. On a Redis Cluster a batch of
// several keys (Store.Do) needs every key in one slot; a service that decides all the
// descriptors of one request together gives them a common slot key (its
// domain, say), at the price of sending that domain's traffic to one
// master. The key itself still tells states apart, and checks of one key
// and Reset are unaffected. Without it a key is its own slot key. A nil slot is
// ignored.
func WithSlotKey(slot func(key string) string) Option {
	return func(c *config) { c.slotKey = slot }
}
