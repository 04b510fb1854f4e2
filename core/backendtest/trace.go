package backendtest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

type traceConfig struct {
	algorithms []core.Algorithm
	backwards  bool // the clock also moves back, by up to a few seconds
	errors     bool
	keys       int
}

// Trace start instants: the present, the year 2100 (timestamps larger than
// any clock reads) and a day before the Unix epoch (negative timestamps).
var (
	nearToday  = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	year2100   = time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC)
	before1970 = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)
)

// RandomTrace returns the deterministic trace of n steps for seed: a step
// that sets the clock, then mostly checks, some peeks and resets, across
// keys keys (3 when 0; awkward bytes and a long key included) and policies
// of every algorithm, single and multi-policy, with costs up to the
// capacity and clock advances from zero to days. With invalid, some costs
// are invalid (0, -1, above the capacity) and some steps refund or charge.
func RandomTrace(seed uint64, n, keys int, invalid bool) []Step {
	return randomTrace(seed, n, traceConfig{keys: keys, errors: invalid})
}

// randomTrace is RandomTrace with the clock also moving backwards when
// cfg.backwards, where only the invariants hold.
func randomTrace(seed uint64, n int, cfg traceConfig) []Step {
	if cfg.keys <= 0 {
		cfg.keys = 3
	}
	if len(cfg.algorithms) == 0 {
		cfg.algorithms = append(core.Algorithms(), core.Concurrency)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed_c0f_fee))
	keys := traceKeys(rng, cfg.keys)
	pool := make([]core.Policy, 0, len(cfg.algorithms)+2)
	for _, a := range cfg.algorithms {
		pool = append(pool, randomPolicy(rng, a))
	}
	for range 2 {
		p := randomPolicy(rng, cfg.algorithms[rng.IntN(len(cfg.algorithms))])
		if !slices.Contains(pool, p) { // a step never names one policy twice
			pool = append(pool, p)
		}
	}
	start := [...]time.Time{nearToday, year2100, before1970}[rng.IntN(3)]
	start = start.Add(time.Duration(rng.Int64N(int64(48*time.Hour))) / time.Microsecond * time.Microsecond)

	steps := make([]Step, 0, n)
	for i := range n {
		s := Step{Key: keys[rng.IntN(len(keys))], Cost: 1}
		if i == 0 {
			s.Set = start
		} else {
			s.Advance = randomAdvance(rng, cfg.backwards)
		}
		np := 1
		if r := rng.IntN(10); r >= 7 {
			np = 2 + r/9 // 2 or 3 policies
		}
		perm := rng.Perm(len(pool))
		for _, j := range perm[:min(np, len(pool))] {
			s.Policies = append(s.Policies, pool[j])
		}
		capacity := s.Policies[0].Capacity()
		for _, p := range s.Policies[1:] {
			capacity = min(capacity, p.Capacity())
		}
		switch r := rng.IntN(100); {
		case r < 82:
			if rng.IntN(3) == 0 {
				s.Cost = 1 + rng.IntN(capacity)
			}
		case r < 91 || (r < 94 && !cfg.errors):
			s.Peek = true
		case r < 94: // refunds and charges, in the traces of differential tests
			s.adjust, s.Cost = core.OpRefund, 1+rng.IntN(capacity)
			if rng.IntN(3) == 0 {
				s.adjust = core.OpCharge
			}
			s.at = -time.Duration(rng.Int64N(int64(2*time.Minute))) / time.Microsecond * time.Microsecond
		case r < 97:
			s.Reset = true
		default:
			if cfg.errors {
				s.Cost = []int{0, -1, capacity + 1}[rng.IntN(3)]
			}
		}
		steps = append(steps, s)
	}
	return steps
}

// traceKeys picks n keys, always starting with the awkward ones.
func traceKeys(rng *rand.Rand, n int) []string {
	awkward := []string{
		"user:{42}",
		"user:42",
		"}{",
		"bin\x00\xff\x01\r\n",
		"long:" + strings.Repeat("k", 3000+rng.IntN(1000)),
		"ключ/пользователь",
		"{",
		"a}b{c",
	}
	rng.Shuffle(len(awkward), func(i, j int) { awkward[i], awkward[j] = awkward[j], awkward[i] })
	keys := make([]string, 0, n)
	for i := range n {
		if i < len(awkward) {
			keys = append(keys, awkward[i])
		} else {
			keys = append(keys, "k"+string(rune('a'+i%26))+strings.Repeat("x", i/26))
		}
	}
	return keys
}

// randomPolicy draws a valid policy for alg with small limits, so traces hit
// both admission and denial often.
func randomPolicy(rng *rand.Rand, alg core.Algorithm) core.Policy {
	windows := []time.Duration{10 * time.Millisecond, 250 * time.Millisecond, time.Second, 7 * time.Second, time.Minute, time.Hour, 24 * time.Hour}
	limits := []int{1, 2, 3, 5, 7, 10, 60, 100}
	p := core.Policy{
		Limit:     limits[rng.IntN(len(limits))],
		Window:    windows[rng.IntN(len(windows))],
		Algorithm: alg,
	}
	if _, windowed := windowAlgorithms[alg]; !windowed && rng.IntN(2) == 0 {
		p.Burst = 1 + rng.IntN(2*p.Limit)
	}
	if rng.IntN(4) == 0 {
		p.Name = "p" + string(rune('a'+rng.IntN(26)))
	}
	if (alg == core.FixedWindow || alg == core.SlidingWindow) && rng.IntN(6) == 0 {
		// A calendar day or month, whose bounds the backends get from Go.
		zones := []string{"", "Europe/Paris", "America/New_York", "America/Santiago"}
		p.Window, p.Calendar, p.Zone = 0, []string{"day", "month"}[rng.IntN(2)], zones[rng.IntN(len(zones))]
	}
	if alg == core.LeakyBucket && rng.IntN(2) == 0 {
		// A ceiling on the hold, from a tenth of the window to a whole one.
		p.MaxDelay = (p.Window * time.Duration(1+rng.IntN(10)) / 10).Truncate(time.Microsecond)
	}
	return p
}

// randomAdvance draws a clock movement: often none, often tiny, sometimes a
// fraction of a typical window, rarely hours or days.
func randomAdvance(rng *rand.Rand, backwards bool) time.Duration {
	us := time.Microsecond
	var d time.Duration
	switch r := rng.IntN(100); {
	case r < 40:
		d = 0
	case r < 65:
		d = time.Duration(1+rng.IntN(1000)) * us
	case r < 80:
		d = time.Duration(rng.Int64N(int64(300*time.Millisecond/us))) * us
	case r < 92:
		d = time.Duration(rng.Int64N(int64(10*time.Second/us))) * us
	case r < 98:
		d = time.Duration(rng.Int64N(int64(2*time.Hour/us))) * us
	default:
		d = time.Duration(rng.Int64N(int64(3*24*time.Hour/us))) * us
	}
	if backwards && rng.IntN(12) == 0 {
		d = -time.Duration(1+rng.Int64N(int64(3*time.Second/us))) * us
	}
	return d
}

// windowAlgorithms are the algorithms that count units (in windows, or
// slots), with no burst.
var windowAlgorithms = map[core.Algorithm]bool{core.FixedWindow: true, core.SlidingWindow: true, core.SlidingLog: true, core.Concurrency: true}
