package peers

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// taker is the one method each memory row calls, as an application that
// can swap one limiter for another would: through an interface, so that
// neither side is inlined into the loop.
type taker interface {
	take(ctx context.Context, key string) (bool, error)
}

// oursTaker is the memory store's GCRA through a Limiter on the system
// clock, with a named policy.
type oursTaker struct {
	lim *core.Limiter
	p   core.Policy
}

func (o *oursTaker) take(ctx context.Context, key string) (bool, error) {
	d, err := o.lim.Allow(ctx, key, o.p)
	return d.Allowed, err
}

func newOurs(b *testing.B, limit int, window time.Duration) taker {
	store, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	return &oursTaker{core.NewLimiter(store), core.Policy{Name: "api", Limit: limit, Window: window, Algorithm: core.GCRA}}
}

// theirsTaker is sethvargo/go-limiter's memorystore.
type theirsTaker struct{ st limiter.Store }

func (t theirsTaker) take(ctx context.Context, key string) (bool, error) {
	_, _, _, ok, err := t.st.Take(ctx, key)
	return ok, err
}

func newTheirs(b *testing.B, limit int, window time.Duration) taker {
	st, err := memorystore.New(&memorystore.Config{Tokens: uint64(limit), Interval: window})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close(context.Background()) })
	return theirsTaker{st}
}

// memBench takes from t serially over 1,000 keys round robin, once around
// them before the clock starts, and fails unless every timed take answers
// allowed.
func memBench(b *testing.B, t taker, allowed bool) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	ctx := context.Background()
	for _, k := range keys {
		if _, err := t.take(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
	k := 0
	b.ReportAllocs()
	for b.Loop() {
		ok, err := t.take(ctx, keys[k])
		if err != nil || ok != allowed {
			b.Fatalf("take %s: allowed %v (%v), want %v", keys[k], ok, err, allowed)
		}
		if k++; k == len(keys) {
			k = 0
		}
	}
}

// A million per second per key: a key comes round every 1,000 takes, long
// after its token is back, so every take is admitted. (At 1,000 per
// second, a key taken every 80 us runs out of its burst after a million
// takes, and the rest of a 5,000,000-take run is denied.)
func BenchmarkMemOursGCRA(b *testing.B)  { memBench(b, newOurs(b, 1_000_000, time.Second), true) }
func BenchmarkMemSethvargo(b *testing.B) { memBench(b, newTheirs(b, 1_000_000, time.Second), true) }

// One per hour per key: the warm-up takes each key's token, and every
// timed take is denied.
func BenchmarkMemOursGCRADeny(b *testing.B)  { memBench(b, newOurs(b, 1, time.Hour), false) }
func BenchmarkMemSethvargoDeny(b *testing.B) { memBench(b, newTheirs(b, 1, time.Hour), false) }

// decided is what the two functions below return from, so that neither
// is folded into a constant.
var decided = [1]core.Decision{{Allowed: true, Limit: 5, Remaining: 3}}

//go:noinline
func returnDecision(i int) (core.Decision, error) {
	r := &decided[0]
	return core.Decision{Allowed: r.Allowed, Limit: r.Limit + i, Remaining: r.Remaining, RetryAfter: r.RetryAfter, ResetAfter: r.ResetAfter, Delay: r.Delay, Source: r.Source}, nil
}

//go:noinline
func returnScalars(i int) (bool, int, int, time.Duration, error) {
	r := &decided[0]
	return r.Allowed, r.Limit + i, r.Remaining, r.ResetAfter, nil
}

var returnSink bool

// BenchmarkReturnDecision and BenchmarkReturnScalars price the shape of a
// check's answer at the caller's site, with nothing behind it: a
// core.Decision and an error (returned in nine registers, which
// the caller stores to a temporary one by one and then copies into its
// variable in wide moves), against go-limiter's four values and an error.
func BenchmarkReturnDecision(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		d, _ := returnDecision(i)
		returnSink = d.Allowed
	}
}

func BenchmarkReturnScalars(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		ok, _, _, _, _ := returnScalars(i)
		returnSink = ok
	}
}
