package resilient_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
)

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
