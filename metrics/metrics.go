package metrics

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/lease"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/obs"
	"github.com/ratelimit-go/ratelimit/internal/opt"
)

// defaultMaxPolicies is the number of distinct policy names a Collector
// labels separately unless WithMaxPolicies says otherwise.
const defaultMaxPolicies = 1000

// otherPolicy is the policy label of policies beyond the limit of distinct
// names, and noPolicy that of requests no policy was chosen for.
const (
	otherPolicy = "other"
	noPolicy    = "none"
)

// Option configures a Collector.
type Option func(*config)

type config struct {
	namespace   string
	maxPolicies int
	buckets     []float64
}

// WithNamespace puts namespace and an underscore before every metric name
// ("myapp_ratelimit_checks_total"). The default is none.
func WithNamespace(namespace string) Option { return func(c *config) { c.namespace = namespace } }

// WithMaxPolicies sets how many distinct policy names get a label of their
// own (0: 1000; negative: an error of New); the rest count as "other".
func WithMaxPolicies(n int) Option { return func(c *config) { c.maxPolicies = n } }

// WithBuckets sets the backend latency histogram's upper bounds, in seconds,
// strictly increasing (nil: 100 µs to 1 s; empty: +Inf alone); New refuses
// any other order.
func WithBuckets(b []float64) Option { return func(c *config) { c.buckets = b } }

// defaultBuckets are the backend latency buckets: 100 µs to 1 s, fine
// around a typical 50 ms budget.
var defaultBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}

// Collector holds the rate limiter's metrics: a prometheus.Collector fed by
// Observer, ResilientEvents, Backend and Watch. Safe for concurrent use.
type Collector struct {
	cfg config

	checks    *prometheus.CounterVec
	denials   *prometheus.CounterVec
	decisions [len(obs.Sources)]prometheus.Counter
	decVec    *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	errs      *prometheus.CounterVec
	errKinds  [len(errorKinds)]prometheus.Counter
	trans     *prometheus.CounterVec

	breakerDesc, denyHitsDesc, memKeysDesc, memRefusedDesc, panicsDesc *prometheus.Desc
	leasesDesc, leaseUnitsDesc, leaseWastedDesc, leaseLocalDesc        *prometheus.Desc

	cache atomic.Pointer[counters] // copy on write
	mu    sync.Mutex               // serialises cache updates and the watched lists

	watched []watched // replaced, never changed, under mu

}

// watched is a value of Watch: its kind and name, and what it exports.
type watched struct {
	kind, name string
	collect    func(ch chan<- prometheus.Metric)
}

// New returns a Collector. The only error is a negative WithMaxPolicies.
func New(opts ...Option) (*Collector, error) {
	cfg := config{}
	opt.Apply(&cfg, opts)
	switch {
	case cfg.maxPolicies < 0:
		return nil, fmt.Errorf("metrics: WithMaxPolicies(%d): must not be negative", cfg.maxPolicies)
	case cfg.maxPolicies == 0:
		cfg.maxPolicies = defaultMaxPolicies
	}
	if cfg.buckets == nil {
		cfg.buckets = defaultBuckets
	}
	for i, b := range cfg.buckets {
		if math.IsNaN(b) || i > 0 && !(cfg.buckets[i-1] < b) {
			return nil, fmt.Errorf("metrics: WithBuckets(%v): bounds must be strictly increasing", cfg.buckets)
		}
	}
	ns, sub := cfg.namespace, "ratelimit"
	c := &Collector{cfg: cfg}
	c.checks = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "checks_total",
		Help: "Requests checked against each policy, by the request's outcome (shadow policies: allowed or shadow_denied)."}, []string{"policy", "outcome"})
	c.denials = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "denials_total",
		Help: "Denied requests, by the policy that denied them."}, []string{"policy"})
	c.decVec = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "decisions_total",
		Help: "Checked requests by what decided them: the primary store, the deny cache, the fallback, or a failure mode."}, []string{"source"})
	for i, s := range obs.Sources {
		c.decisions[i] = c.decVec.WithLabelValues(s)
	}
	c.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "backend_call_duration_seconds",
		Help: "Latency of calls to the instrumented backend, in seconds.", Buckets: cfg.buckets}, []string{"op"})
	c.errs = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "backend_errors_total",
		Help: "Failed calls to the primary backend, by kind."}, []string{"kind"})
	for i, k := range errorKinds {
		c.errKinds[i] = c.errs.WithLabelValues(k)
	}
	c.trans = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "breaker_transitions_total",
		Help: "Circuit breaker transitions, by the state entered."}, []string{"to"})
	for _, s := range stateLabels {
		c.trans.WithLabelValues(s)
	}
	name := func(n string) string { return prometheus.BuildFQName(ns, sub, n) }
	c.breakerDesc = prometheus.NewDesc(name("breaker_state"), "1 for the circuit breaker's current state, 0 for the others.", []string{"backend", "state"}, nil)
	c.denyHitsDesc = prometheus.NewDesc(name("deny_cache_hits_total"), "Checks the deny cache denied without a round trip to the primary.", []string{"backend"}, nil)
	c.memKeysDesc = prometheus.NewDesc(name("memstore_keys"), "States the memory store holds (one per key and policy).", []string{"store"}, nil)
	c.memRefusedDesc = prometheus.NewDesc(name("memstore_refused_total"), "Checks the memory store refused because its key cap was reached.", []string{"store"}, nil)
	c.leasesDesc = prometheus.NewDesc(name("leases_total"), "Leases taken from the store for hot keys.", []string{"backend"}, nil)
	c.leaseUnitsDesc = prometheus.NewDesc(name("lease_units_total"), "Units the leases consumed in the store.", []string{"backend"}, nil)
	c.leaseWastedDesc = prometheus.NewDesc(name("lease_units_wasted_total"), "Leased units that expired unused (consumed in the store, never admitted).", []string{"backend"}, nil)
	c.leaseLocalDesc = prometheus.NewDesc(name("lease_local_admits_total"), "Checks admitted from a lease without a store call.", []string{"backend"}, nil)
	c.panicsDesc = prometheus.NewDesc(name("observer_panics_total"), "Observer calls that panicked and were recovered.", []string{"middleware"}, nil)
	c.cache.Store(&counters{byKey: map[checkKey]prometheus.Counter{}, names: map[core.Policy]string{}})
	return c, nil
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range c.vecs() {
		v.Describe(ch)
	}
	for _, d := range []*prometheus.Desc{c.breakerDesc, c.denyHitsDesc, c.memKeysDesc, c.memRefusedDesc, c.panicsDesc, c.leasesDesc, c.leaseUnitsDesc, c.leaseWastedDesc, c.leaseLocalDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, v := range c.vecs() {
		v.Collect(ch)
	}
	c.mu.Lock()
	ws := c.watched
	c.mu.Unlock()
	for _, w := range ws {
		w.collect(ch)
	}
}

// vecs are the Collector's metric vectors.
func (c *Collector) vecs() [6]prometheus.Collector {
	return [...]prometheus.Collector{c.checks, c.denials, c.decVec, c.latency, c.errs, c.trans}
}

// stateLabels are the breaker's states (resilient.Stats.State).
var stateLabels = [...]string{"closed", "open", "half_open"}

// Watch exports, at every scrape, the state of v under the label name: a
// *resilient.Backend's breaker state and deny-cache hits, a
// *lease.Backend's leases and units, a *memstore.Store's keys and refusals,
// a *ratelimit.Middleware's recovered observer panics. Any other or nil
// value, or a name already watched for that kind, is an error.
func (c *Collector) Watch(name string, v any) error {
	counter := func(ch chan<- prometheus.Metric, d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), name)
	}
	var collect func(ch chan<- prometheus.Metric)
	switch v := v.(type) {
	case *resilient.Backend:
		if v != nil {
			collect = func(ch chan<- prometheus.Metric) {
				st := v.Stats()
				for _, s := range stateLabels {
					on := 0.0
					if st.State == s {
						on = 1
					}
					ch <- prometheus.MustNewConstMetric(c.breakerDesc, prometheus.GaugeValue, on, name, s)
				}
				counter(ch, c.denyHitsDesc, st.DenyCacheHits)
			}
		}
	case *lease.Backend:
		if v != nil {
			collect = func(ch chan<- prometheus.Metric) {
				st := v.Stats()
				counter(ch, c.leasesDesc, st.Leases)
				counter(ch, c.leaseUnitsDesc, st.UnitsLeased)
				counter(ch, c.leaseWastedDesc, st.UnitsWasted)
				counter(ch, c.leaseLocalDesc, st.LocalAdmits)
			}
		}
	case *memstore.Store:
		if v != nil {
			collect = func(ch chan<- prometheus.Metric) {
				ch <- prometheus.MustNewConstMetric(c.memKeysDesc, prometheus.GaugeValue, float64(v.Len()), name)
				counter(ch, c.memRefusedDesc, v.Refused())
			}
		}
	case *ratelimit.Middleware:
		if v != nil {
			collect = func(ch chan<- prometheus.Metric) { counter(ch, c.panicsDesc, v.ObserverPanics()) }
		}
	default:
		return fmt.Errorf("metrics: Watch: cannot watch a %T (want a *resilient.Backend, *lease.Backend, *memstore.Store or *ratelimit.Middleware)", v)
	}
	if collect == nil {
		return fmt.Errorf("metrics: Watch: nil %T", v)
	}
	kind := fmt.Sprintf("%T", v)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.watched {
		if w.kind == kind && w.name == name {
			return fmt.Errorf("metrics: %q is watched already", name)
		}
	}
	c.watched = append(c.watched[:len(c.watched):len(c.watched)], watched{kind, name, collect})
	return nil
}
