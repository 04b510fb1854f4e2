package redisstore

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// cachePolicies returns n distinct valid policies.
func cachePolicies(n int) []core.Policy {
	ps := make([]core.Policy, n)
	for i := range ps {
		ps[i] = core.Policy{Name: "p" + strconv.Itoa(i), Limit: 10 + i, Window: time.Second, Algorithm: core.Algorithms()[i%len(core.Algorithms())]}
	}
	return ps
}

// The cache answers one info per policy, in and beyond its hot entries, for
// an equal Policy whose strings are other copies too, and the info is the
// policy's own.
func TestPolicyCacheOneInfoPerPolicy(t *testing.T) {
	var c policyCache
	ps := cachePolicies(3 * hotPolicies)
	first := make([]*policyInfo, len(ps))
	for i, p := range ps {
		first[i] = c.get(p)
	}
	for round := range 2 {
		for i, p := range ps {
			q := p
			q.Name = strings.Clone(p.Name)
			q.Algorithm = core.Algorithm(strings.Clone(string(p.Algorithm)))
			if got := c.get(q); got != first[i] {
				t.Fatalf("round %d, policy %d: another info than the first", round, i)
			}
			if want := newPolicyInfo(p); first[i].id != want.id || first[i].args != want.args {
				t.Fatalf("policy %d: info %q %v, want %q %v", i, first[i].id, first[i].args, want.id, want.args)
			}
		}
	}
	if hot := c.hot.Load(); hot == nil || len(*hot) != hotPolicies {
		t.Fatalf("hot entries: %v, want %d", hot, hotPolicies)
	}
	if n := c.n.Load(); n != int64(len(ps)-hotPolicies) {
		t.Fatalf("%d policies in the map, want %d", n, len(ps)-hotPolicies)
	}
}

// Concurrent first lookups of the same policies agree on one info each,
// and no policy takes two hot entries. Run with -race.
func TestPolicyCacheConcurrentFirstLookups(t *testing.T) {
	for range 200 {
		var c policyCache
		ps := cachePolicies(2 * hotPolicies)
		got := make([][]*policyInfo, 8)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range got {
			got[g] = make([]*policyInfo, len(ps))
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 7))
				order := r.Perm(len(ps))
				<-start
				for _, i := range order {
					got[g][i] = c.get(ps[i])
				}
			})
		}
		close(start)
		wg.Wait()
		for g := range got {
			for i := range ps {
				if got[g][i] != got[0][i] {
					t.Fatalf("goroutines 0 and %d got different infos for policy %d", g, i)
				}
			}
		}
		hot := *c.hot.Load()
		for i := range hot {
			for j := range i {
				if hot[i].p == hot[j].p {
					t.Fatalf("policy %s has hot entries %d and %d", hot[i].p.Name, j, i)
				}
			}
		}
	}
}
