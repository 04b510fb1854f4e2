package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

// failureFree are the wrapper's configurations that change nothing while
// the primary answers: each must pass the conformance suite exactly as the
// primary alone does. The deny cache among them answers some checks itself,
// and its answers must be the primary's to the microsecond.
var failureFree = []struct {
	name string
	opts func(t testing.TB) []resilient.Option
}{
	{"defaults", func(testing.TB) []resilient.Option { return nil }},
	{"deny-cache", func(testing.TB) []resilient.Option { return []resilient.Option{resilient.WithDenyCache(4096)} }},
	{"fail-open", func(testing.TB) []resilient.Option { return []resilient.Option{resilient.WithFailOpen()} }},
	{"fail-closed", func(testing.TB) []resilient.Option { return []resilient.Option{resilient.WithFailClosed()} }},
	{"fallback+deny-cache", func(t testing.TB) []resilient.Option {
		return []resilient.Option{resilient.WithFallback(newMem(t)), resilient.WithDenyCache(4096)}
	}},
}

// TestConformance runs the conformance suite, and the multi-key one, on the
// wrapper in every failure-free configuration, over the memory store, the
// Redis store on miniredis, and the Redis store on a real Redis.
func TestConformance(t *testing.T) {
	primaries := []struct {
		name string
		new  func(t *testing.T) core.Backend
	}{
		{"memstore", func(t *testing.T) core.Backend { return newMem(t) }},
		{"miniredis", func(t *testing.T) core.Backend {
			m := miniredis.RunT(t)
			c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
			t.Cleanup(func() { _ = c.Close() })
			return conformanceStore(t, c)
		}},
		{"redis", func(t *testing.T) core.Backend { return conformanceStore(t, redistest.Client(t)) }},
	}
	for _, p := range primaries {
		for _, cfg := range failureFree {
			t.Run(p.name+"/"+cfg.name, func(t *testing.T) {
				// A long budget: the suite is about answers while the primary
				// answers, and on a loaded machine under the race detector a
				// script interpreted by miniredis outran the default 50 ms.
				factory := func(t *testing.T) core.Backend {
					return must.Do(resilient.New(p.new(t), append(cfg.opts(t), resilient.WithBudget(10*time.Second))...))
				}
				backendtest.Run(t, factory)
				backendtest.RunMultiKey(t, factory)
			})
		}
	}
}

// conformanceStore is a Redis store for the suite. Real Redis expires keys
// on its own clock while the suite's manual clock may stand still, so TTLs
// get a minute's margin there, as in redisstore's own conformance tests.
func conformanceStore(t *testing.T, c redis.UniversalClient) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMultiKey(t *testing.T) {
	t.Parallel()
	backendtest.RunMultiKey(t, func(t *testing.T) core.Backend {
		return must.Do(resilient.New(newMem(t), resilient.WithFallback(newMem(t))))
	})
}

// TestMultiKeyFailureModes: an unavailable primary sends a multi-key check to
// the fallback, or fails it open or closed, like a single-key one.
func TestMultiKeyFailureModes(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	f.set(failing)
	items := []core.Item{{Key: "a", Policy: perSecond, Cost: 1}, {Key: "b", Policy: perMinute, Cost: 1}}
	out := make([]core.Decision, 2)
	for _, tc := range []struct {
		mode resilient.Option
		want core.Source
	}{
		{resilient.WithFallback(must.Do(memstore.New())), core.SourceFallback},
		{resilient.WithFailOpen(), core.SourceFailOpen},
		{resilient.WithFailClosed(), core.SourceFailClosed},
	} {
		b := must.Do(resilient.New(f, tc.mode))
		if err := b.Do(context.Background(), items, t0, out); err != nil || out[0].Source != tc.want || out[1].Source != tc.want {
			t.Fatalf("%v: %v %+v", tc.want, err, out)
		}
	}
}
