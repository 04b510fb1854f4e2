package resilient_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/redis/go-redis/v9"
)

// faultBudget is the latency budget of the fault tests, the default.
const faultBudget = resilient.DefaultBudget

// recoveryBound is the longest the primary may take to serve checks again
// once Redis is back.
const recoveryBound = 5 * time.Second

// faultPolicy limits each load key to 20 per aligned second.
var faultPolicy = core.Policy{Name: "fault", Limit: 20, Window: time.Second, Algorithm: core.FixedWindow}

// sample is one check made by the load.
type sample struct {
	start   time.Time
	latency time.Duration
	key     string
	allowed bool
	source  core.Source
	cause   error // why the primary did not answer, from the Report
	err     error // what the check returned
}

// load runs checks from a few goroutines, each on its own key, with the
// system clock, until stopped.
type load struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	all  []sample
}

// readClock is the system clock, remembering its last reading: the instant
// the Limiter gave the backend. One goroutine uses it.
type readClock struct{ last time.Time }

func (c *readClock) Now() time.Time {
	c.last = time.Now()
	return c.last
}

// startLoad starts workers goroutines checking faultPolicy through b, one
// check every 2 ms each.
func startLoad(b core.Backend, workers int) *load {
	l := &load{stop: make(chan struct{})}
	for w := range workers {
		key := "fault-worker-" + strconv.Itoa(w)
		clk := &readClock{}
		lim := core.NewLimiter(b, core.WithClock(clk))
		l.wg.Go(func() {
			pace := time.NewTicker(2 * time.Millisecond)
			defer pace.Stop()
			for {
				select {
				case <-l.stop:
					return
				case <-pace.C:
				}
				var r resilient.Report
				d, err := lim.Allow(resilient.WithReport(context.Background(), &r), key, faultPolicy)
				s := sample{start: clk.last, latency: time.Since(clk.last), key: key, allowed: d.Allowed, source: r.Source, cause: r.Err, err: err}
				l.mu.Lock()
				l.all = append(l.all, s)
				l.mu.Unlock()
			}
		})
	}
	return l
}

// samples returns a copy of the samples so far.
func (l *load) samples() []sample {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.all)
}

// finish stops the load and returns every sample.
func (l *load) finish() []sample {
	close(l.stop)
	l.wg.Wait()
	return l.samples()
}

// waitRecovered waits until a check that started after since was answered
// by the primary, and returns when that check started. It fails the test
// after recoveryBound.
func (l *load) waitRecovered(t *testing.T, since time.Time) time.Time {
	t.Helper()
	deadline := time.Now().Add(recoveryBound)
	for {
		for _, s := range l.samples() {
			if !s.start.Before(since) && s.source == core.SourcePrimary && s.err == nil {
				return s.start
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the primary did not serve a check within %v after Redis returned", recoveryBound)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// latencies summarises the latency of samples.
type latencies struct {
	n             int
	p50, p99, max time.Duration
}

func summarise(ss []sample) latencies {
	if len(ss) == 0 {
		return latencies{}
	}
	d := make([]time.Duration, len(ss))
	for i, s := range ss {
		d[i] = s.latency
	}
	slices.Sort(d)
	return latencies{n: len(d), p50: d[len(d)/2], p99: d[len(d)*99/100], max: d[len(d)-1]}
}

func (l latencies) String() string {
	if l.n == 0 {
		return "no checks"
	}
	return "n=" + strconv.Itoa(l.n) + " p50=" + l.p50.String() + " p99=" + l.p99.String() + " max=" + l.max.String()
}

func filter(ss []sample, keep func(sample) bool) []sample {
	var out []sample
	for _, s := range ss {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// faultMode is the failure mode a fault test runs with.
type faultMode uint8

const (
	modeFallback faultMode = iota
	modeClosed
)

// faultRun is one fault test: a wrapper over a redisstore, load, a fault
// injected and removed, and the checks' record.
type faultRun struct {
	name              string
	mode              faultMode
	b                 *resilient.Backend
	ev                eventLog
	injected, cleared time.Time
	recovered         time.Time
	samples           []sample
}

// newFaultBackend wraps a redisstore over client in a resilient Backend
// with the test's mode and the default budget and breaker.
func newFaultBackend(t *testing.T, fr *faultRun, client redis.UniversalClient) {
	t.Helper()
	store, err := redisstore.New(client, redisstore.WithPrefix("fault:"))
	if err != nil {
		t.Fatal(err)
	}
	opts := []resilient.Option{resilient.WithEvents(fr.ev.add)}
	switch fr.mode {
	case modeFallback:
		opts = append(opts, resilient.WithFallback(newMem(t)))
	case modeClosed:
		opts = append(opts, resilient.WithFailClosed())
	}
	fr.b = must.Do(resilient.New(store, opts...))
}

// runFault drives a fault: load on a healthy Redis, inject, hold for
// outage, clear, wait for recovery, then a little more load.
func runFault(t *testing.T, fr *faultRun, inject, clear func(), outage time.Duration) {
	t.Helper()
	l := startLoad(fr.b, 4)
	defer func() {
		if fr.samples == nil {
			l.finish()
		}
	}()
	time.Sleep(300 * time.Millisecond) // healthy traffic first
	fr.injected = time.Now()
	inject()
	time.Sleep(outage)
	clear()
	fr.cleared = time.Now()
	fr.recovered = l.waitRecovered(t, fr.cleared)
	time.Sleep(300 * time.Millisecond)
	fr.samples = l.finish()
	waitFor(t, "abandoned calls to finish", func() bool { return fr.b.Stats().Abandoned == 0 })
}

// check asserts what every fault test promises and logs the figures.
func (fr *faultRun) check(t *testing.T) {
	t.Helper()
	ss := fr.samples
	var openedAt time.Time
	fr.ev.mu.Lock()
	for _, e := range fr.ev.ev {
		if e.Kind == "state_change" && e.To == "open" && e.From == "closed" && !e.Time.Before(fr.injected) {
			openedAt = e.Time
			break
		}
	}
	fr.ev.mu.Unlock()

	all := summarise(ss)
	outage := filter(ss, func(s sample) bool { return !s.start.Before(fr.injected) && s.start.Before(fr.cleared) })
	beforeOpen := filter(outage, func(s sample) bool { return openedAt.IsZero() || s.start.Before(openedAt) })
	shortCircuited := filter(ss, func(s sample) bool { return errors.Is(s.cause, resilient.ErrCircuitOpen) })
	degraded := filter(ss, func(s sample) bool { return s.source != core.SourcePrimary })
	t.Logf("%s: all checks %v", fr.name, all)
	t.Logf("%s: during the fault %v; before the breaker opened %v; short-circuited by the open breaker %v",
		fr.name, summarise(outage), summarise(beforeOpen), summarise(shortCircuited))
	t.Logf("%s: %d checks answered by the failure mode; breaker opened %v after the fault; recovery %v after Redis returned; stats %+v",
		fr.name, len(degraded), durationSince(openedAt, fr.injected), fr.recovered.Sub(fr.cleared), fr.b.Stats())

	worst := ss[0]
	for _, s := range ss {
		if s.latency > worst.latency {
			worst = s
		}
	}
	t.Logf("%s: worst check %v, started %v after the fault, answered by %v (%v)", fr.name, worst.latency, worst.start.Sub(fr.injected), worst.source, worst.cause)
	if all.max > faultBudget+latencyMargin {
		t.Errorf("%s: worst check took %v, more than the budget %v plus %v", fr.name, all.max, faultBudget, latencyMargin)
	}
	if sc := summarise(shortCircuited); sc.n > 0 && sc.p99 > time.Millisecond {
		t.Errorf("%s: checks short-circuited by the open breaker took p99 %v, want under 1ms", fr.name, sc.p99)
	}
	for _, s := range ss {
		if s.err != nil {
			t.Fatalf("%s: a check returned an error despite the failure mode: %v", fr.name, s.err)
		}
	}
	switch fr.mode {
	case modeClosed:
		for _, s := range degraded {
			if s.allowed {
				t.Fatalf("%s: failing closed admitted a check (source %v)", fr.name, s.source)
			}
		}
	case modeFallback:
		// Per key and aligned window, the fallback admits at most the limit.
		perWindow := map[string]int{}
		for _, s := range degraded {
			if s.source != core.SourceFallback {
				t.Fatalf("%s: a check was answered by %v in fallback mode", fr.name, s.source)
			}
			if s.allowed {
				w := s.key + "@" + s.start.Truncate(time.Second).String()
				perWindow[w]++
				if perWindow[w] > faultPolicy.Limit {
					t.Fatalf("%s: the fallback admitted %d checks of %s in one window, limit %d", fr.name, perWindow[w], s.key, faultPolicy.Limit)
				}
			}
		}
	}
	if fr.recovered.Sub(fr.cleared) > recoveryBound {
		t.Errorf("%s: recovery took %v", fr.name, fr.recovered.Sub(fr.cleared))
	}
}

func durationSince(t, since time.Time) string {
	if t.IsZero() {
		return "(never)"
	}
	return t.Sub(since).String()
}
