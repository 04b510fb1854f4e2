package redisstore_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
)

// t0 is an instant off every window boundary, for tests that need one.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)

// onePerAlgorithm returns one policy per algorithm with the given limit and
// window (Burst 0: the capacity is the limit).
func onePerAlgorithm(limit int, window time.Duration) []core.Policy {
	var ps []core.Policy
	for _, a := range core.Algorithms() {
		ps = append(ps, core.Policy{Name: string(a), Limit: limit, Window: window, Algorithm: a})
	}
	return ps
}

// snapshot reads every key starting with prefix from c (one server) with its
// value and TTL, so that tests can prove a call wrote nothing.
func snapshot(t *testing.T, c *redis.Client, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		var v any
		switch typ := c.Type(ctx, k).Val(); typ {
		case "string":
			v = c.Get(ctx, k).Val()
		case "hash":
			v = c.HGetAll(ctx, k).Val()
		case "list":
			v = c.LRange(ctx, k, 0, -1).Val()
		default:
			t.Fatalf("key %q has unexpected type %q", k, typ)
		}
		// Only whether a TTL is set, and that it does not grow, matter
		// here; real Redis lowers it as wall time passes.
		out[k] = fmt.Sprint(v)
	}
	return out
}

// ttls returns the PTTL of every key starting with prefix, sorted by key.
func ttls(t *testing.T, c *redis.Client, prefix string) ([]string, []time.Duration) {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	ds := make([]time.Duration, len(keys))
	for i, k := range keys {
		ds[i] = c.PTTL(ctx, k).Val()
	}
	return keys, ds
}

// isCoreError reports whether err is one of the core's typed input errors.
func isCoreError(err error) bool {
	return strings.HasPrefix(err.Error(), "ratelimit: ")
}
