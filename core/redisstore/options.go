package redisstore

import (
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/opt"
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
	opt.Errs
}

// Option configures a Store. Options are applied in order by New; a later
// option overrides an earlier one of the same kind. An invalid option makes
// New return an error.
type Option func(*config)

// WithPrefix sets the text every Redis key starts with ("ratelimit:" by
// default): at most 128 bytes, without '{' or '}'.
func WithPrefix(prefix string) Option {
	return func(c *config) {
		switch {
		case strings.ContainsAny(prefix, "{}"):
			c.Fail("prefix %q contains '{' or '}', which would break the hash tag of every key", prefix)
		case len(prefix) > maxPrefixLen:
			c.Fail("prefix is %d bytes; at most %d", len(prefix), maxPrefixLen)
		default:
			c.prefix = prefix
		}
	}
}

// WithTTLMargin lengthens every key's TTL by d (rounded up to a
// millisecond): set it to the largest clock difference expected between
// instances. A negative d is an error.
func WithTTLMargin(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.Fail("TTL margin %v is negative", d)
			return
		}
		c.margin = int64((d + time.Millisecond - 1) / time.Millisecond)
	}
}

// defaultPipelines is the number of pipelines in flight when WithPipelines is
// not given.
const defaultPipelines = 4

// WithPipelines sets how many script calls a Store keeps in flight (0: 4);
// checks that arrive while all are busy go out together next, in one script
// call per node (WithChecksPerCall) or a pipeline. Keep n below the
// client's pool size; a negative n is an error.
func WithPipelines(n int) Option {
	return func(c *config) { opt.Count(&c.Errs, &c.pipelines, "WithPipelines", n, defaultPipelines) }
}

// withoutBatching sends every check as its own EVALSHA at once, for the
// benchmarks.
func withoutBatching() Option {
	return func(c *config) { c.pipelines = -1 }
}

// defaultChecksPerCall is the most checks one script call decides when
// WithChecksPerCall is not given.
const defaultChecksPerCall = 64

// WithChecksPerCall sets the most queued checks one script call decides
// (n >= 1), which bounds how long a call holds its node: checks on one
// *redis.Client, of one slot on a Cluster, of one hash tag otherwise. n = 1
// gives every check its own script call.
func WithChecksPerCall(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.Fail("checks per call %d is below 1", n)
			return
		}
		c.perCall = n
	}
}

// WithSlotKey sets the part of a key that chooses its hash slot, so that
// keys with the same slot key share a slot: on a Cluster a batch of several
// keys (Store.Do) needs one slot. The key still tells states apart. A nil
// slot is ignored.
func WithSlotKey(slot func(key string) string) Option {
	return func(c *config) { c.slotKey = slot }
}
