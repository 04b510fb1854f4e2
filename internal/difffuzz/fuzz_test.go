package difffuzz_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/redis/go-redis/v9"
)

// FuzzDifferential replays the trace decoded from each input on the
// reference model, the memory store and the Redis store on miniredis, and
// requires identical outcomes: admission, every decision field, and the kind
// of every error.
func FuzzDifferential(f *testing.F) {
	f.Add([]byte{0, 0, 4, 0, 0, 0})
	f.Add([]byte{1, 3, 0, 1, 3, 1, 1, 2, 2, 0x81, 2, 0, 3, 4, 0x85, 3, 0, 0, 1, 0, 1, 0x60, 0, 15, 0, 0x41, 0xff})
	mini := miniredis.RunT(f)
	client := redis.NewClient(&redis.Options{Addr: mini.Addr(), MaxRetries: -1})
	f.Cleanup(func() { _ = client.Close() })
	ctx := context.Background()
	run := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		steps := decodeTrace(data)
		if len(steps) == 0 {
			return
		}
		// Inputs run one at a time in each fuzzing process: start every
		// one on an empty server, under its own prefix.
		mini.FlushAll()
		run++
		store, err := redisstore.New(client, redisstore.WithPrefix("fz"+strconv.Itoa(run)+":"))
		if err != nil {
			t.Fatal(err)
		}
		mem := must.Do(memstore.New())

		want := backendtest.Replay(ctx, backendtest.NewReference(), core.NewManualClock(time.Time{}), steps)
		gotMem := backendtest.Replay(ctx, mem, core.NewManualClock(time.Time{}), steps)
		if err := backendtest.DiffOutcomes(steps, want, gotMem); err != nil {
			t.Fatalf("memstore differs from the reference: %v", err)
		}
		gotRedis := backendtest.Replay(ctx, store, core.NewManualClock(time.Time{}), steps)
		if err := backendtest.DiffOutcomes(steps, gotMem, gotRedis); err != nil {
			t.Fatalf("redisstore on miniredis differs from memstore: %v", err)
		}
		for i, o := range gotRedis {
			if o.Err != nil && !typed(o.Err) {
				t.Fatalf("step %d (%s): untyped error %v", i, steps[i], o.Err)
			}
		}
	})
}

// typed reports whether err is one of the core's typed errors.
func typed(err error) bool {
	for _, e := range []error{core.ErrInvalidKey, core.ErrNoPolicy, core.ErrInvalidPolicy, core.ErrInvalidCost, core.ErrCostExceedsCapacity} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
