package resilient_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
)

// outage is how long each fault lasts.
const outage = 1500 * time.Millisecond

// standaloneClient returns a client of s with the settings RedisOptions
// recommends for the fault budget.
func standaloneClient(t *testing.T, s *redisproc.Server) *redis.Client {
	o := &redis.Options{Addr: s.Addr}
	resilient.RedisOptions(o, faultBudget)
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func modeName(m faultMode) string {
	if m == modeClosed {
		return "fail-closed"
	}
	return "fallback"
}

// TestFaultRefused: Redis stops and refuses connections, then starts again.
func TestFaultRefused(t *testing.T) {
	standaloneFault(t, "refused", (*redisproc.Server).Stop, (*redisproc.Server).Restart)
}

// TestFaultHung: Redis is paused (SIGSTOP): connections stay open and
// nothing answers; then it resumes (SIGCONT).
func TestFaultHung(t *testing.T) {
	standaloneFault(t, "hung", (*redisproc.Server).Pause, (*redisproc.Server).Resume)
}

// standaloneFault runs the fault that begin and end bring on a standalone
// Redis, under each failure mode.
func standaloneFault(t *testing.T, name string, begin, end func(*redisproc.Server)) {
	for _, m := range []faultMode{modeFallback, modeClosed} {
		t.Run(modeName(m), func(t *testing.T) {
			srv := redisproc.Start(t)
			fr := &faultRun{name: name + "/" + modeName(m), mode: m}
			newFaultBackend(t, fr, standaloneClient(t, srv))
			runFault(t, fr, func() { begin(srv) }, func() { end(srv) }, outage)
			fr.check(t)
		})
	}
}

// TestFaultRestart: Redis restarts (empty, its scripts gone) under load.
func TestFaultRestart(t *testing.T) {
	srv := redisproc.Start(t)
	fr := &faultRun{name: "restart", mode: modeFallback}
	newFaultBackend(t, fr, standaloneClient(t, srv))
	runFault(t, fr, srv.Restart, func() {}, 0)
	fr.check(t)
}

// TestFaultScriptFlush: SCRIPT FLUSH under load costs nothing: the store
// reloads its script on NOSCRIPT, and no check fails.
func TestFaultScriptFlush(t *testing.T) {
	srv := redisproc.Start(t)
	admin := srv.Client()
	defer admin.Close()
	fr := &faultRun{name: "script-flush", mode: modeClosed}
	newFaultBackend(t, fr, standaloneClient(t, srv))
	flush := func() {
		for range 5 {
			if err := admin.ScriptFlush(context.Background()).Err(); err != nil {
				t.Error(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	runFault(t, fr, flush, func() {}, 0)
	fr.check(t)
	if s := fr.b.Stats(); s.Failures != 0 {
		t.Fatalf("SCRIPT FLUSH caused %d failures", s.Failures)
	}
}

// TestFaultMaxmemory: Redis reaches maxmemory with noeviction: writes fail
// with OOM until memory is available again.
func TestFaultMaxmemory(t *testing.T) {
	srv := redisproc.Start(t, "maxmemory-policy noeviction")
	admin := srv.Client()
	defer admin.Close()
	ctx := context.Background()
	fr := &faultRun{name: "maxmemory", mode: modeFallback}
	newFaultBackend(t, fr, standaloneClient(t, srv))
	full := func() {
		// Far below what the server already uses: every write is refused.
		if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.Set(ctx, "probe", "x", 0).Err(); err == nil {
			t.Fatal("a write succeeded above maxmemory")
		}
	}
	freed := func() {
		if err := admin.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
			t.Fatal(err)
		}
	}
	runFault(t, fr, full, freed, outage)
	fr.check(t)
	if s := fr.b.Stats(); s.Failures == 0 {
		t.Fatal("OOM errors were not seen as failures")
	}
}

// TestFaultClusterMasterKilled: in a cluster of 3 masters and 3 replicas,
// the master of the load's keys is killed; its replica takes over.
func TestFaultClusterMasterKilled(t *testing.T) {
	cl := redisproc.StartCluster(t, 3, 1, 500*time.Millisecond)
	o := &redis.ClusterOptions{Addrs: cl.Addrs()}
	resilient.RedisOptions(o, faultBudget)
	client := redis.NewClusterClient(o)
	t.Cleanup(func() { _ = client.Close() })
	fr := &faultRun{name: "cluster-master-killed", mode: modeFallback}
	newFaultBackend(t, fr, client)
	// The load's keys hash to their own slots; kill the master of the
	// first one.
	victim := cl.MasterOf("{fault-worker-0}")
	if victim == nil {
		t.Fatal("no master found for the load's first key")
	}
	promoted := func() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			if m := cl.MasterOf("{fault-worker-0}"); m != nil && m != victim {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no replica took over the killed master's slots within 15s")
			}
			time.Sleep(20 * time.Millisecond)
		}
		cl.WaitOK(10 * time.Second)
	}
	runFault(t, fr, victim.Kill, promoted, 0)
	fr.check(t)
	t.Logf("cluster: the replica took over %v after the master was killed", fr.cleared.Sub(fr.injected))
}

// TestFaultSentinelFailover: a Sentinel group (1 master, 1 replica, 3
// Sentinels) fails over when its master is killed.
func TestFaultSentinelFailover(t *testing.T) {
	g := redisproc.StartSentinel(t, 1, 3, 500*time.Millisecond)
	o := &redis.FailoverOptions{MasterName: g.MasterName, SentinelAddrs: g.SentinelAddrs()}
	resilient.RedisOptions(o, faultBudget)
	client := redis.NewFailoverClient(o)
	t.Cleanup(func() { _ = client.Close() })
	fr := &faultRun{name: "sentinel-failover", mode: modeFallback}
	newFaultBackend(t, fr, client)
	old := g.Master()
	if old == nil {
		t.Fatal("the Sentinels name no master")
	}
	failedOver := func() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			if m := g.Master(); m != nil && m != old {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the Sentinels did not fail over within 15s")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	runFault(t, fr, old.Kill, failedOver, 0)
	fr.check(t)
	t.Logf("sentinel: the replica was promoted %v after the master was killed", fr.cleared.Sub(fr.injected))
}

// TestFaultReconnectAtOnce: a plain Redis store (no wrapper) on a client set
// up with RedisOptions succeeds again within 50 ms of a restarted Redis
// answering PING, however many dials failed while it was down. go-redis's
// pool, after PoolSize failed dials, stops dialling and answers with the
// remembered error, probing once a second; RedisOptions' dialer keeps a
// failed dial from counting there.
func TestFaultReconnectAtOnce(t *testing.T) {
	srv := redisproc.Start(t)
	client := standaloneClient(t, srv)
	store, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	p := core.Policy{Limit: 1000000, Window: time.Second}
	check := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), faultBudget)
		defer cancel()
		_, err := backendtest.CheckOne(ctx, store, "k", p, 1, time.Now())
		return err
	}
	if err := check(); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	// Far more failed dials than the pool's size, from several goroutines.
	var wg sync.WaitGroup
	failures := make(chan struct{}, 1000)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if check() != nil {
					failures <- struct{}{}
				}
			}
		})
	}
	wg.Wait()
	if len(failures) < 100 {
		t.Fatalf("only %d checks failed while Redis was down", len(failures))
	}
	srv.Restart() // returns once the new server answers PING
	answered := time.Now()
	var tries int
	for {
		tries++
		if check() == nil {
			break
		}
		if time.Since(answered) > 3*time.Second {
			t.Fatalf("still failing %v after Redis answered PING (%d tries)", time.Since(answered), tries)
		}
		time.Sleep(time.Millisecond)
	}
	back := time.Since(answered)
	t.Logf("back on Redis %v after it answered PING (%d tries; %d checks failed during the outage)", back, tries, len(failures))
	if limit := 50*time.Millisecond + latencyMargin; back > limit {
		t.Fatalf("back on Redis after %v, want within %v", back, limit)
	}
}
