package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

// benchKeys is the number of distinct keys the benchmarks spread checks over.
const benchKeys = 1000

// floorScript is the cheapest script call there is: the floor a check
// script's throughput is compared with.
var floorScript = redis.NewScript("return 1")

func benchClient(b *testing.B) *redis.Client {
	b.Helper()
	c := redistest.NewClient()
	if c == nil {
		b.Skipf("%s is not set; start the servers with scripts/redis-test-env.sh", redistest.AddrEnv)
	}
	b.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
	return c
}

// throughput runs n operations on goroutines goroutines and returns the
// operations per second. op receives the operation's index.
func throughput(b *testing.B, goroutines, n int, op func(i int) error) float64 {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range goroutines {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := op(i); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(n) / elapsed.Seconds()
}

// BenchmarkCheck measures checks through a Limiter (wall clock, policy
// 100/1m, 1,000 keys round-robin, one go-redis client) at 1 and 64
// goroutines, with the defaults and, at 64, also with one script call per
// check inside pipelines, with neither pipelines nor shared calls, and
// behind core/resilient (which gives each call a deadline); and
// in the same run the EVALSHA floor: a script that only returns 1, on the
// same keys, each call its own EVALSHA. It reports both rates (checks/s,
// floor/s), their ratio, the server's side of the check phase (script
// time per check, checks per script call, and the share of the time the
// Redis process was on a CPU) and the client's (this process's CPU per
// check).
func BenchmarkCheck(b *testing.B) {
	c := benchClient(b)
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	ctx := context.Background()
	if err := floorScript.Load(ctx, c).Err(); err != nil {
		b.Fatal(err)
	}
	for _, a := range core.Algorithms() {
		for _, v := range []struct {
			name       string
			goroutines int
			batching   redisstore.Option
			resilient  bool
		}{
			{"g1", 1, redisstore.WithPipelines(0), false}, // the defaults
			{"g64", 64, redisstore.WithPipelines(0), false},
			{"g64-percheck", 64, redisstore.WithChecksPerCall(1), false}, // queued checks share a pipeline, not a call
			{"g64-unpipelined", 64, redisstore.WithoutBatching(), false}, // every check its own EVALSHA, as the floor
			{"g64-resilient", 64, redisstore.WithPipelines(0), true},     // the production form: behind core/resilient
		} {
			g := v.goroutines
			b.Run(string(a)+"/"+v.name, func(b *testing.B) {
				s, err := redisstore.New(c, v.batching, redisstore.WithPrefix("bench:"+strconv.FormatInt(time.Now().UnixNano(), 36)+":"))
				if err != nil {
					b.Fatal(err)
				}
				var be core.Backend = s
				if v.resilient {
					// No failure mode: a check Redis does not answer fails
					// the benchmark. A long budget: a pause of the noisy
					// machine is not a failure here.
					be = must.Do(resilient.New(s, resilient.WithBudget(time.Second)))
				}
				lim := core.NewLimiter(be)
				p := core.Policy{Limit: 100, Window: time.Minute, Algorithm: a}
				floorKeys := make([][]string, benchKeys)
				for i := range floorKeys {
					floorKeys[i] = []string{keys[i]}
				}
				floor := func(i int) error { return floorScript.EvalSha(ctx, c, floorKeys[i%benchKeys]).Err() }
				check := func(i int) error {
					_, err := lim.Allow(ctx, keys[i%benchKeys], p)
					return err
				}
				b.ReportAllocs()
				b.ResetTimer()
				// Floor, check, floor again: the floor is the mean of both
				// halves, so drift in a noisy machine hits both rates alike.
				f1 := throughput(b, g, max(b.N/2, 1), floor)
				before := redisStats(b, c)
				cpu0, cpuOK := processCPU()
				start := time.Now()
				ops := throughput(b, g, b.N, check)
				elapsed := time.Since(start)
				cpu1, _ := processCPU()
				after := redisStats(b, c)
				f2 := throughput(b, g, max(b.N/2, 1), floor)
				b.StopTimer()
				fl := (f1 + f2) / 2
				b.ReportMetric(ops, "checks/s")
				b.ReportMetric(fl, "floor/s")
				b.ReportMetric(ops/fl, "ratio")
				// What the server spent on the checks: script time per check,
				// checks per script call, and the share of the wall time its
				// process was on a CPU.
				b.ReportMetric((after.scriptUsec-before.scriptUsec)/float64(b.N), "redis-us/check")
				b.ReportMetric(float64(b.N)/max(after.scriptCalls-before.scriptCalls, 1), "checks/call")
				b.ReportMetric((after.cpu-before.cpu)/elapsed.Seconds(), "redis-busy")
				// And the client's: this process's CPU per check.
				if cpuOK {
					b.ReportMetric(float64(cpu1-cpu0)/float64(time.Microsecond)/float64(b.N), "client-us/check")
				}
			})
		}
	}
}

// serverStats are cumulative counters of the Redis server.
type serverStats struct {
	scriptCalls, scriptUsec float64 // EVALSHA and EVAL together
	cpu                     float64 // seconds of CPU, user and system
}

// redisStats reads the server's script and CPU counters (INFO commandstats
// and INFO cpu).
func redisStats(b *testing.B, c *redis.Client) serverStats {
	info, err := c.Info(context.Background(), "commandstats", "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var st serverStats
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		name, fields, _ := strings.Cut(line, ":")
		switch name {
		case "cmdstat_evalsha", "cmdstat_eval":
			for f := range strings.SplitSeq(fields, ",") {
				k, v, _ := strings.Cut(f, "=")
				n, _ := strconv.ParseFloat(v, 64)
				switch k {
				case "calls":
					st.scriptCalls += n
				case "usec":
					st.scriptUsec += n
				}
			}
		case "used_cpu_sys", "used_cpu_user":
			n, _ := strconv.ParseFloat(fields, 64)
			st.cpu += n
		}
	}
	return st
}

// BenchmarkMemoryPerKey reports the Redis memory (MEMORY USAGE) of one key's
// state after one admitted check, averaged over 1,000 keys named like
// "user:123" under a prefix as long as the default one, for each algorithm.
// The figure is a size, not a timing: each run measures it once, whatever
// b.N is.
func BenchmarkMemoryPerKey(b *testing.B) {
	c := benchClient(b)
	for _, a := range core.Algorithms() {
		b.Run(string(a), func(b *testing.B) {
			bytes, err := memoryPerKey(c, core.Policy{Limit: 100, Window: time.Minute, Algorithm: a})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(bytes, "B/key")
		})
	}
}

// memoryPerKey writes one check for benchKeys fresh keys under p and returns
// the mean MEMORY USAGE of the Redis keys written.
func memoryPerKey(c *redis.Client, p core.Policy) (float64, error) {
	ctx := context.Background()
	// A unique prefix as long as the default one ("ratelimit:").
	prefix := fmt.Sprintf("rl%07d:", time.Now().UnixNano()%1e7)
	s, err := redisstore.New(c, redisstore.WithPrefix(prefix))
	if err != nil {
		return 0, err
	}
	now := time.Now()
	for i := range benchKeys {
		if _, err := backendtest.CheckOne(ctx, s, "user:"+strconv.Itoa(i), p, 1, now); err != nil {
			return 0, err
		}
	}
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		return 0, err
	}
	var total, measured int64
	for _, k := range keys {
		n, err := c.MemoryUsage(ctx, k, 0).Result()
		if errors.Is(err, redis.Nil) {
			// The key expired between KEYS and MEMORY USAGE: a slow host
			// can take longer than a short policy's state lives.
			continue
		}
		if err != nil {
			return 0, err
		}
		total += n
		measured++
	}
	if len(keys) > 0 {
		if err := c.Del(ctx, keys...).Err(); err != nil {
			return 0, err
		}
	}
	if measured == 0 {
		return 0, fmt.Errorf("no key of %d checks was left to measure", benchKeys)
	}
	return float64(total) / float64(measured), nil
}

// TestMemoryPerKeyGCRA pins the GCRA state's footprint in Redis: one string
// per key, 88 bytes with its key name and TTL on the Redis installed here.
// The bound leaves room for other Redis versions' allocators. The policy's state
// lives 36 s after one check (100 per hour), so a slow host cannot see the
// keys expire before they are measured; the state's size does not depend
// on the rate.
func TestMemoryPerKeyGCRA(t *testing.T) {
	c := redistest.Client(t)
	got, err := memoryPerKey(c, core.Policy{Limit: 100, Window: time.Hour, Algorithm: core.GCRA})
	if err != nil {
		t.Fatal(err)
	}
	if got > 128 {
		t.Fatalf("GCRA uses %.0f B per key in Redis, want at most 128", got)
	}
	t.Logf("GCRA: %.0f B per key", got)
}
