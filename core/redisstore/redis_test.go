package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

func TestScriptFlushRedis(t *testing.T) {
	c := redistest.Client(t)
	testScriptFlush(t, c, newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t))), c.ScriptFlush)
}

func TestScriptFlushCluster(t *testing.T) {
	c := redistest.Cluster(t)
	testScriptFlush(t, c, newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t))), c.ScriptFlush)
}

// TestTTLRedis: on a real Redis every key gets a TTL no longer than the
// ResetAfter of the check that wrote it (rounded up to a millisecond).
func TestTTLRedis(t *testing.T) {
	c := redistest.Client(t)
	for _, p := range onePerAlgorithm(10, time.Minute+777*time.Microsecond) {
		prefix := redistest.Prefix(t)
		s := newStore(t, c, redisstore.WithPrefix(prefix))
		d, err := backendtest.CheckOne(context.Background(), s, "ttl", p, 4, t0)
		if err != nil || !d.Allowed {
			t.Fatalf("%s: %+v %v", p.Algorithm, d, err)
		}
		keys, got := ttls(t, c, prefix)
		if len(keys) != 1 {
			t.Fatalf("%s: keys %q, want one", p.Algorithm, keys)
		}
		// Wall time has passed since the write, so the TTL may be a
		// little shorter, never longer.
		want := (d.ResetAfter + time.Millisecond - 1).Truncate(time.Millisecond)
		if got[0] <= 0 || got[0] > want || got[0] < want-10*time.Second {
			t.Errorf("%s: PTTL %v, want just below %v", p.Algorithm, got[0], want)
		}
	}
}

// TestRestartRedis restarts a Redis of its own: the script cache is empty
// afterwards, and the same Store and client recover through EVAL.
func TestRestartRedis(t *testing.T) {
	srv := redisproc.Start(t)
	c := srv.Client()
	defer c.Close()
	ctx := context.Background()
	s := newStore(t, c)
	p := core.Policy{Limit: 1, Window: time.Minute, Algorithm: core.GCRA}
	if d, err := backendtest.CheckOne(ctx, s, "r", p, 1, t0); err != nil || !d.Allowed {
		t.Fatalf("before restart: %+v %v", d, err)
	}
	srv.Restart()
	if ok, err := c.ScriptExists(ctx, redisstore.ScriptSHA()).Result(); err != nil || ok[0] {
		t.Fatalf("script cached right after a restart? %v %v", ok, err)
	}
	// The pool's connections from before the restart are dead and go-redis
	// finds out on first use: a failed call is an error, never an admission.
	var d core.Decision
	var err error
	for i := 0; i < 20; i++ {
		if d, err = backendtest.CheckOne(ctx, s, "r", p, 1, t0); err == nil {
			break
		}
		if d.Allowed {
			t.Fatalf("failed call reported an admission: %v", err)
		}
	}
	if err != nil || !d.Allowed { // the restart lost the state (no persistence)
		t.Fatalf("after restart: %+v %v", d, err)
	}
	if d, err := backendtest.CheckOne(ctx, s, "r", p, 1, t0); err != nil || d.Allowed {
		t.Fatalf("second check after restart: %+v %v; want a denial", d, err)
	}
}

// TestConformanceSentinel runs the suite through a Sentinel client
// (redis.NewFailoverClient) over a master and a Sentinel of its own.
func TestConformanceSentinel(t *testing.T) {
	g := redisproc.StartSentinel(t, 0, 1, 5*time.Second)
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: g.MasterName, SentinelAddrs: g.SentinelAddrs(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	backendtest.Run(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin))
	})
}

func TestMultiKeySentinel(t *testing.T) {
	g := redisproc.StartSentinel(t, 0, 1, 5*time.Second)
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: g.MasterName, SentinelAddrs: g.SentinelAddrs(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	backendtest.RunMultiKey(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin))
	})
}
