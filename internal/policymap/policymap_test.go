package policymap

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// policies returns n distinct valid policies.
func policies(n int) []core.Policy {
	ps := make([]core.Policy, n)
	for i := range ps {
		ps[i] = core.Policy{Name: "p" + strconv.Itoa(i), Limit: 10 + i, Window: time.Second, Algorithm: core.Algorithms()[i%len(core.Algorithms())]}
	}
	return ps
}

// A Map answers one value per policy, among its first few and beyond, for
// an equal Policy whose strings are other copies too; past max it computes
// a value for every lookup and keeps none, and a failed compute adds
// nothing.
func TestOneValuePerPolicy(t *testing.T) {
	t.Parallel()
	var m Map[*int]
	ps := policies(3 * few)
	first := make([]*int, len(ps))
	for i := range ps {
		v, err := m.LoadOrAdd(&ps[i], 2*few, func() (*int, error) { return &i, nil })
		if err != nil || *v != i {
			t.Fatalf("policy %d: %v %v", i, v, err)
		}
		first[i] = v
	}
	for i, p := range ps {
		q := p
		q.Name = strings.Clone(p.Name)
		q.Algorithm = core.Algorithm(strings.Clone(string(p.Algorithm)))
		got, ok := m.Load(&q)
		if kept := i < 2*few; ok != kept || kept && got != first[i] {
			t.Fatalf("policy %d: Load %v %v, want the first value: %v", i, got, ok, kept)
		}
	}
	p := core.Policy{Limit: 1, Window: time.Second}
	if _, err := m.LoadOrAdd(&p, 0, func() (*int, error) { return nil, errors.New("bad") }); err == nil {
		t.Fatal("compute's error was not returned")
	}
	if _, ok := m.Load(&p); ok {
		t.Fatal("a failed compute added a value")
	}
}

// Concurrent first lookups of the same policies agree on one value each.
// Run with -race.
func TestConcurrentFirstLookups(t *testing.T) {
	t.Parallel()
	for range 200 {
		var m Map[*int]
		ps := policies(2 * few)
		got := make([][]*int, 8)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range got {
			got[g] = make([]*int, len(ps))
			wg.Go(func() {
				order := rand.New(rand.NewPCG(uint64(g), 7)).Perm(len(ps))
				<-start
				for _, i := range order {
					got[g][i], _ = m.LoadOrAdd(&ps[i], 0, func() (*int, error) { return new(int), nil })
				}
			})
		}
		close(start)
		wg.Wait()
		for g := range got {
			for i := range ps {
				if got[g][i] != got[0][i] {
					t.Fatalf("goroutines 0 and %d got different values for policy %d", g, i)
				}
			}
		}
	}
}
