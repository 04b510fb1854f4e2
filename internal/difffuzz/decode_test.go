package difffuzz_test

import (
	"slices"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
)

// maxSteps bounds the steps decoded from one input, so that every input
// replays quickly.
const maxSteps = 64

// decoder reads bytes from a fuzz input, yielding zeros once it is
// exhausted, so that every input decodes to a valid trace.
type decoder struct {
	data []byte
	pos  int
}

func (d *decoder) byte() byte {
	if d.pos >= len(d.data) {
		d.pos++
		return 0
	}
	b := d.data[d.pos]
	d.pos++
	return b
}

func (d *decoder) more() bool { return d.pos < len(d.data) }

var (
	fuzzWindows = []time.Duration{time.Millisecond, 10 * time.Millisecond, 250 * time.Millisecond, time.Second, 7 * time.Second, time.Minute, time.Hour, 24 * time.Hour}
	fuzzLimits  = []int{1, 2, 3, 5, 7, 10, 60, 100}
	fuzzKeys    = []string{"a", "user:{42}", "}{", "bin\x00\xff\r\n", "ключ", "k:" + string(make([]byte, 200))}
	fuzzStarts  = []time.Time{
		time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC), // crosses the epoch within a trace
	}
)

// decodeTrace turns data into a trace: a header choosing the start instant
// and a pool of up to four policies, then steps of five bytes each.
//
//	header: start (1 byte: epoch and offset), pool size (1), 4 bytes per policy
//	policy: algorithm, limit, window, burst/name flags
//	step:   op, key, policy subset, cost, clock advance
func decodeTrace(data []byte) []backendtest.Step {
	d := &decoder{data: data}
	s0 := d.byte()
	start := fuzzStarts[int(s0)%len(fuzzStarts)].Add(time.Duration(s0/3) * 1237 * time.Millisecond)
	pool := make([]core.Policy, 0, 4)
	for range 1 + int(d.byte()%4) {
		p := core.Policy{
			Algorithm: core.Algorithms()[int(d.byte())%len(core.Algorithms())],
			Limit:     fuzzLimits[int(d.byte())%len(fuzzLimits)],
			Window:    fuzzWindows[int(d.byte())%len(fuzzWindows)],
		}
		flags := d.byte()
		if rateBased(p.Algorithm) && flags&1 == 1 {
			p.Burst = 1 + int(flags>>1)%(2*p.Limit)
		}
		if flags&0x80 != 0 {
			p.Name = "p" + string(rune('a'+len(pool)))
		}
		if p.Algorithm == core.LeakyBucket && flags&0x40 != 0 {
			p.MaxDelay = (p.Window / 3).Truncate(time.Microsecond)
		}
		if p.Validate() != nil {
			// Faster than one unit per microsecond: slow it to the limit.
			p.Window = time.Duration(p.Limit) * time.Microsecond * 1000
		}
		if !slices.Contains(pool, p) {
			pool = append(pool, p)
		}
	}
	steps := []backendtest.Step{}
	for i := 0; d.more() && i < maxSteps; i++ {
		op, key, mask, cost, adv := d.byte(), d.byte(), d.byte(), d.byte(), d.byte()
		s := backendtest.Step{Key: fuzzKeys[int(key)%len(fuzzKeys)], Cost: 1}
		if i == 0 {
			s.Set = start
		}
		s.Advance = decodeAdvance(adv)
		for j, p := range pool {
			if mask&(1<<j) != 0 {
				s.Policies = append(s.Policies, p)
			}
		}
		if len(s.Policies) == 0 {
			s.Policies = []core.Policy{pool[int(mask>>4)%len(pool)]}
		}
		capacity := s.Policies[0].Capacity()
		for _, p := range s.Policies[1:] {
			capacity = min(capacity, p.Capacity())
		}
		switch o := op % 16; {
		case o < 11:
			if cost&0x80 != 0 {
				s.Cost = 1 + int(cost&0x7f)%capacity
			}
		case o < 13:
			s.Peek = true
		case o < 14:
			s.Reset = true
		default: // a check the backends must refuse with a typed error
			s.Cost = []int{0, -1, capacity + 1}[int(cost)%3]
		}
		steps = append(steps, s)
	}
	return steps
}

// decodeAdvance maps one byte to a forward clock step: none, microseconds,
// milliseconds, seconds, minutes or hours.
func decodeAdvance(b byte) time.Duration {
	n := time.Duration(b & 0x1f)
	switch b >> 5 {
	case 0, 1:
		return 0
	case 2:
		return n * time.Microsecond
	case 3:
		return n * 37 * time.Microsecond
	case 4:
		return n * 13 * time.Millisecond
	case 5:
		return n * 211 * time.Millisecond
	case 6:
		return n * 7 * time.Second
	}
	return n * 17 * time.Minute
}

// rateBased reports whether a is driven by a rate and a burst (token
// bucket, GCRA, leaky bucket; "" is GCRA).
func rateBased(a core.Algorithm) bool {
	switch a {
	case core.TokenBucket, core.GCRA, core.LeakyBucket, "":
		return true
	}
	return false
}
