package resilient

import (
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// TestDenyCacheBounded: a flood of distinct denied keys never grows the
// cache past its capacity, and long keys or large policy sets are not kept.
func TestDenyCacheBounded(t *testing.T) {
	t.Parallel()
	const capacity = 1024
	c := newDenyCache(capacity)
	p := []core.Policy{{Limit: 1, Window: time.Minute}}
	denied := []core.Decision{{Limit: 1, RetryAfter: time.Minute, ResetAfter: time.Minute}}
	now := time.Unix(1_700_000_000, 0)
	for i := range 100_000 {
		c.record(keyed("ip-"+strconv.Itoa(i), p, 1), now, denied)
	}
	slots, used := 0, 0
	for i := range c.shards {
		for _, bk := range c.shards[i].buckets {
			for _, e := range bk {
				slots++
				if e.until != 0 {
					used++
				}
			}
		}
	}
	if slots != capacity || used > slots {
		t.Fatalf("%d slots (%d used) for a capacity of %d", slots, used, capacity)
	}
	// The newest denials are served.
	out := make([]core.Decision, 1)
	if !c.answer(keyed("ip-99999", p, 1), now, out) || out[0].RetryAfter != time.Minute {
		t.Fatalf("newest denial not served: %+v", out)
	}
	long := string(make([]byte, denyMaxKeyLen+1))
	c.record(keyed(long, p, 1), now, denied)
	if c.answer(keyed(long, p, 1), now, out) {
		t.Fatal("a key longer than the bound was cached")
	}
	many := make([]core.Policy, denyMaxPolicies+1)
	manyOut := make([]core.Decision, len(many))
	for i := range many {
		many[i] = core.Policy{Limit: i + 1, Window: time.Minute}
		manyOut[i] = core.Decision{RetryAfter: time.Second}
	}
	c.record(keyed("k", many, 1), now, manyOut)
	if c.answer(keyed("k", many, 1), now, manyOut) {
		t.Fatal("a check with too many policies was cached")
	}
}

// TestDenyCacheExpiry: an entry stops answering at its deadline, and an
// admission drops the denials it proves stale.
func TestDenyCacheExpiry(t *testing.T) {
	t.Parallel()
	c := newDenyCache(16)
	p := []core.Policy{{Limit: 1, Window: time.Minute}}
	now := time.Unix(1_700_000_000, 0)
	c.record(keyed("k", p, 1), now, []core.Decision{{RetryAfter: 2 * time.Second, ResetAfter: 3 * time.Second}})
	out := make([]core.Decision, 1)
	if !c.answer(keyed("k", p, 1), now.Add(1999999*time.Microsecond), out) || out[0].RetryAfter != time.Microsecond || out[0].ResetAfter != time.Second+time.Microsecond {
		t.Fatalf("just before the deadline: %+v", out)
	}
	if c.answer(keyed("k", p, 1), now.Add(2*time.Second), out) {
		t.Fatal("answered at the deadline")
	}
	c.record(keyed("k", p, 2), now, []core.Decision{{RetryAfter: 2 * time.Second}})
	c.record(keyed("k", p, 3), now, []core.Decision{{Allowed: true}})
	if c.answer(keyed("k", p, 3), now, out) {
		t.Fatal("a denial of cost 2 survived an admission of cost 3")
	}
}

// keyed returns the items of a check of key under policies at cost.
func keyed(key string, policies []core.Policy, cost int) []core.Item {
	items := make([]core.Item, len(policies))
	for i, p := range policies {
		items[i] = core.Item{Key: key, Policy: p, Cost: cost}
	}
	return items
}
