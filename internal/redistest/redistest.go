// Package redistest connects tests to the Redis servers of the test
// environment: a standalone Redis at RATELIMIT_REDIS_ADDR and a Redis Cluster
// at RATELIMIT_REDIS_CLUSTER_ADDRS (comma-separated seed addresses), as
// started by scripts/redis-test-env.sh.
//
// When a variable is unset, the test is skipped with a message saying how to
// run it; when CI=true it fails instead, so CI never passes by skipping.
// Every client is new (its own connection pool) and closed when the test
// ends. Tests share the servers with other packages running at the same
// time, so they isolate themselves with Prefix rather than flushing.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Names of the environment variables this package reads.
const (
	// AddrEnv holds the address of a standalone Redis, e.g. 127.0.0.1:16379.
	AddrEnv = "RATELIMIT_REDIS_ADDR"
	// ClusterEnv holds comma-separated seed addresses of a Redis Cluster.
	ClusterEnv = "RATELIMIT_REDIS_CLUSTER_ADDRS"
)

const howTo = `start the test servers with: bash scripts/redis-test-env.sh start && eval "$(bash scripts/redis-test-env.sh env)" (or run bash .ci/run)`

// require returns the value of the environment variable name, or skips t
// (fails it when CI=true) if it is empty.
func require(t testing.TB, name string) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set and CI=true: a real Redis is required; %s", name, howTo)
		}
		t.Skipf("%s is not set; to run this test against a real Redis, %s", name, howTo)
	}
	return v
}

// Available reports whether the standalone Redis is configured, for
// benchmarks and TestMain code that cannot skip.
func Available() bool { return os.Getenv(AddrEnv) != "" }

// ClusterAvailable reports whether the Redis Cluster is configured.
func ClusterAvailable() bool { return os.Getenv(ClusterEnv) != "" }

// NewClient returns a client of the standalone Redis without a test, or nil
// when none is configured. The caller closes it.
func NewClient() *redis.Client {
	addr := strings.TrimSpace(os.Getenv(AddrEnv))
	if addr == "" {
		return nil
	}
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
}

// NewClusterClient returns a client of the Redis Cluster without a test, or
// nil when none is configured. The caller closes it.
func NewClusterClient() *redis.ClusterClient {
	addrs := strings.TrimSpace(os.Getenv(ClusterEnv))
	if addrs == "" {
		return nil
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ","), MaxRetries: -1})
}

// Client returns a new client, with its own pool, of the standalone Redis,
// after checking that the server answers. Commands are not retried
// (MaxRetries -1), so a test sees every error. The client is closed when t
// ends.
func Client(t testing.TB) *redis.Client {
	t.Helper()
	require(t, AddrEnv)
	c := NewClient()
	ping(t, c, AddrEnv)
	return c
}

// Cluster returns a new cluster client, with its own pools, after checking
// that the cluster answers and its state is ok. It is closed when t ends.
func Cluster(t testing.TB) *redis.ClusterClient {
	t.Helper()
	require(t, ClusterEnv)
	c := NewClusterClient()
	ping(t, c, ClusterEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil || !strings.Contains(info, "cluster_state:ok") {
		t.Fatalf("redistest: cluster at %s is not ready (err %v): %s", os.Getenv(ClusterEnv), err, info)
	}
	return c
}

func ping(t testing.TB, c redis.UniversalClient, env string) {
	t.Helper()
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("redistest: %s=%s does not answer PING: %v; %s", env, os.Getenv(env), err, howTo)
	}
}

// Prefix returns a key prefix unique to this call ("rltest:<random>:"), so
// that tests sharing a server never see each other's keys.
func Prefix(t testing.TB) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return "rltest:" + hex.EncodeToString(b[:]) + ":"
}

// forEachServer calls fn for c itself, or for every master of a cluster.
func forEachServer(ctx context.Context, c redis.UniversalClient, fn func(context.Context, *redis.Client) error) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, fn)
	}
	if sc, ok := c.(*redis.Client); ok {
		return fn(ctx, sc)
	}
	return fmt.Errorf("redistest: unsupported client %T", c)
}

// ScanTTLs visits every key matching pattern ("*" for all) on every server
// of c and returns how many it saw and the names of those that have no TTL.
// The TTLs of each SCAN page are read in one pipeline.
func ScanTTLs(ctx context.Context, c redis.UniversalClient, pattern string) (scanned int, noTTL []string, err error) {
	var mu sync.Mutex // ForEachMaster calls fn concurrently
	err = forEachServer(ctx, c, func(ctx context.Context, node *redis.Client) error {
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, pattern, 1000).Result()
			if err != nil {
				return err
			}
			cmds, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.PTTL(ctx, k)
				}
				return nil
			})
			if err != nil {
				return err
			}
			mu.Lock()
			scanned += len(keys)
			for i, cmd := range cmds {
				if cmd.(*redis.DurationCmd).Val() == -1 { // -2 is a key that expired meanwhile
					noTTL = append(noTTL, keys[i])
				}
			}
			mu.Unlock()
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	})
	return scanned, noTTL, err
}

// DeletePrefix deletes every key starting with prefix on every server of c,
// for tests that need a server cleared of their own earlier keys.
func DeletePrefix(ctx context.Context, c redis.UniversalClient, prefix string) error {
	return forEachServer(ctx, c, func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, escapeGlob(prefix)+"*", 1000).Iterator()
		for iter.Next(ctx) {
			if err := node.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	})
}

// escapeGlob escapes the characters SCAN's MATCH pattern treats specially.
func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
