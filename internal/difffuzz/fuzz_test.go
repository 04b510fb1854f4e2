package difffuzz_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/alicebob/miniredis/v2"
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

		// Backends 1 and 2: memstore and the Redis store on miniredis. The
		// reference answers bad input with typed errors only, so an untyped
		// error of either differs from it.
		if err := backendtest.Diff(ctx, steps, backendtest.NewReference(), mem, store); err != nil {
			t.Fatal(err)
		}
	})
}
