package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
)

// TestReadsStatesOfTheVersionBefore: a rolling deploy runs the version
// before this one beside it on one Redis. Its rate states carry no
// interval (GCRA a bare TAT, the buckets' hashes no i field); they are read
// with the policy's interval, as that version read them: a client that
// used 6 of 10 has 4 left.
func TestReadsStatesOfTheVersionBefore(t *testing.T) {
	m, c := newMiniredis(t)
	s := newStore(t, c)
	ctx := context.Background()
	now := time.Date(2026, 5, 5, 10, 0, 30, 0, time.UTC)
	us := now.UnixMicro()
	const used = 36_000_000 // 6 units of 6 s: 10/1m
	for alg, write := range map[core.Algorithm]func(key string){
		core.GCRA:        func(k string) { _ = m.Set(k, fmt.Sprint(us+used)) },
		core.TokenBucket: func(k string) { m.HSet(k, "u", fmt.Sprint(used), "l", fmt.Sprint(us)) },
		core.LeakyBucket: func(k string) { m.HSet(k, "v", fmt.Sprint(used), "l", fmt.Sprint(us)) },
	} {
		t.Run(string(alg), func(t *testing.T) {
			p := core.Policy{Name: "api", Limit: 10, Window: time.Minute, Algorithm: alg}
			write(redisstore.StateKey("ratelimit:", "k-"+string(alg), p))
			var out [1]core.Decision
			if err := core.Check(ctx, s, "k-"+string(alg), []core.Policy{p}, 1, now, out[:]); err != nil {
				t.Fatal(err)
			}
			if d := out[0]; !d.Allowed || d.Remaining != 3 {
				t.Fatalf("6 of 10 used by the version before, then 1: %+v, want remaining 3", d)
			}
		})
	}
}
