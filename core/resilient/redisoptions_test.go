package resilient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
	"github.com/redis/go-redis/v9"
)

// TestRedisOptionsBoundTheClient: with the settings RedisOptions returns, the
// Redis store itself (no wrapper) gives up on a refused or hung server
// within the budget, so calls the wrapper abandons end promptly. The same
// refused server costs a client with go-redis defaults far longer; the
// figure is logged.
func TestRedisOptionsBoundTheClient(t *testing.T) {
	srv := redisproc.Start(t)
	p := core.Policy{Limit: 10, Window: time.Second}
	timed := func(c *redis.Client) (time.Duration, error) {
		s, err := redisstore.New(c)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), faultBudget)
		defer cancel()
		start := time.Now()
		_, err = backendtest.CheckOne(ctx, s, "k", p, 1, time.Now())
		return time.Since(start), err
	}
	recommended := standaloneClient(t, srv)
	if _, err := timed(recommended); err != nil {
		t.Fatal(err)
	}

	srv.Pause()
	hung, err := timed(recommended)
	if err == nil {
		t.Fatal("a check on a paused server succeeded")
	}
	srv.Resume()
	srv.Stop()
	refused, err := timed(recommended)
	if err == nil {
		t.Fatal("a check on a stopped server succeeded")
	}

	defaults := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer defaults.Close()
	s, _ := redisstore.New(defaults)
	start := time.Now()
	_, derr := backendtest.CheckOne(context.Background(), s, "k", p, 1, time.Now())
	refusedDefaults := time.Since(start)

	t.Logf("recommended settings, %v budget: hung server %v, refused %v; go-redis defaults, refused, no deadline: %v (%v)",
		faultBudget, hung, refused, refusedDefaults, derr)
	if hung > faultBudget+latencyMargin || refused > faultBudget+latencyMargin {
		t.Fatalf("the client overran the budget: hung %v, refused %v", hung, refused)
	}
	if derr == nil || errors.Is(derr, context.DeadlineExceeded) {
		t.Fatalf("defaults against a stopped server: %v", derr)
	}
}

// TestRedisOptionsApply: every kind of options gets the same fields.
func TestRedisOptionsApply(t *testing.T) {
	budget := 30 * time.Millisecond
	o := resilient.RedisOptions(&redis.Options{}, budget)
	co := resilient.RedisOptions(&redis.ClusterOptions{}, budget)
	fo := resilient.RedisOptions(&redis.FailoverOptions{}, budget)
	uo := resilient.RedisOptions(&redis.UniversalOptions{}, budget)
	if d := resilient.RedisOptions(&redis.Options{}, 0); d.ReadTimeout != resilient.DefaultBudget {
		t.Fatalf("RedisOptions(0) uses %v, want the default budget", d.ReadTimeout)
	}
	if resilient.RedisOptions((*redis.Options)(nil), budget) != nil {
		t.Fatal("RedisOptions(nil) is not nil")
	}
	type fields struct {
		dial, read, write, pool time.Duration
		retries, dialRetries    int
		ctx                     bool
	}
	want := fields{budget, budget, budget, budget, -1, 1, true}
	for name, got := range map[string]fields{
		"Options":          {o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled},
		"ClusterOptions":   {co.DialTimeout, co.ReadTimeout, co.WriteTimeout, co.PoolTimeout, co.MaxRetries, co.DialerRetries, co.ContextTimeoutEnabled},
		"FailoverOptions":  {fo.DialTimeout, fo.ReadTimeout, fo.WriteTimeout, fo.PoolTimeout, fo.MaxRetries, fo.DialerRetries, fo.ContextTimeoutEnabled},
		"UniversalOptions": {uo.DialTimeout, uo.ReadTimeout, uo.WriteTimeout, uo.PoolTimeout, uo.MaxRetries, uo.DialerRetries, uo.ContextTimeoutEnabled},
	} {
		if got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if o.Dialer == nil || co.Dialer == nil || fo.Dialer == nil || uo.Dialer == nil {
		t.Fatal("a dialer is not wrapped")
	}
}
