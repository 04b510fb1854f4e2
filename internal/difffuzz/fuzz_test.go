package difffuzz_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
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

// TestDifferentialOnRealRedis decides the seed corpus and 300 traces of a
// fixed random source on a real Redis and a real Cluster as on the
// reference and the memory store: the fuzzer runs on miniredis, whose Lua
// is not Redis's.
func TestDifferentialOnRealRedis(t *testing.T) {
	var inputs [][]byte
	files, err := filepath.Glob("testdata/fuzz/FuzzDifferential/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed corpus: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(src)), "\n")
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[len(lines)-1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		inputs = append(inputs, []byte(s))
	}
	r := rand.New(rand.NewPCG(13, 16))
	for range 300 {
		b := make([]byte, 8+r.IntN(320))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		inputs = append(inputs, b)
	}
	for name, client := range map[string]func(testing.TB) redis.UniversalClient{
		"redis":   func(t testing.TB) redis.UniversalClient { return redistest.Client(t) },
		"cluster": func(t testing.TB) redis.UniversalClient { return redistest.Cluster(t) },
	} {
		t.Run(name, func(t *testing.T) {
			c := client(t)
			for i, in := range inputs {
				steps := decodeTrace(in)
				if len(steps) == 0 {
					continue
				}
				// Each trace under a prefix of its own. Redis expires
				// keys by its own clock, which runs while the trace's
				// manual clock stands still: a margin keeps states for as
				// long as they matter to the trace.
				store := must.Do(redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithTTLMargin(time.Hour)))
				if err := backendtest.Diff(context.Background(), steps, backendtest.NewReference(), must.Do(memstore.New()), store); err != nil {
					t.Fatalf("input %d (%q): %v", i, in, err)
				}
			}
		})
	}
}
