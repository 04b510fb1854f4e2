package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

// bySlot co-locates keys by the part before the first '|', as a service
// co-locates the descriptors of one domain.
func bySlot(key string) string {
	if i := strings.IndexByte(key, '|'); i >= 0 {
		return key[:i]
	}
	return key
}

func TestMultiKeyMiniredis(t *testing.T) {
	_, c := newMiniredis(t)
	backendtest.RunMultiKey(t, func(t *testing.T) core.Backend { return newStore(t, c) })
}

func TestMultiKeyRedis(t *testing.T) {
	c := redistest.Client(t)
	backendtest.RunMultiKey(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin))
	})
}

// TestMultiKeyCluster: on a Cluster the keys of a multi-key check must
// share a slot. With a common slot key the whole suite holds; without one,
// keys of different slots fail with ErrCrossSlot and change nothing.
func TestMultiKeyCluster(t *testing.T) {
	c := redistest.Cluster(t)
	backendtest.RunMultiKey(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(realMargin),
			redisstore.WithSlotKey(func(string) string { return "one-slot" }))
	})

	ctx := context.Background()
	now := time.Now()
	p := core.MustParsePolicy("5/1m;name=p")
	plain := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)))
	items := []core.Item{{Key: "a", Policy: p, Cost: 1}, {Key: "b", Policy: p, Cost: 1}, {Key: "c", Policy: p, Cost: 1}}
	out := make([]core.Decision, 3)
	if err := plain.Do(ctx, items, now, out); !errors.Is(err, redisstore.ErrCrossSlot) {
		t.Fatalf("keys of three slots: %v, want ErrCrossSlot", err)
	}
	d, err := backendtest.CheckOne(ctx, plain, "a", p, 1, now)
	if err != nil || d.Remaining != 4 {
		t.Fatalf("after the refused multi-key check a has %+v, %v; want it untouched", d, err)
	}
	tagged := newStore(t, c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithSlotKey(bySlot))
	items = []core.Item{{Key: "dom|a", Policy: p, Cost: 1}, {Key: "dom|b", Policy: p, Cost: 1}}
	if err := tagged.Do(ctx, items, now, out[:2]); err != nil || !out[0].Allowed || !out[1].Allowed {
		t.Fatalf("keys of one slot key: %v %+v", err, out[:2])
	}
}
