package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/lease"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/sink"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
	"github.com/ratelimit-go/ratelimit/metrics"
)

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// broken is a primary that always fails.
type broken struct{ err error }

func (b broken) Do(context.Context, []core.Item, time.Time, []core.Decision) error {
	return b.err
}

// rig is a collector wired to every source it reads, on its own registry.
type rig struct {
	c        *metrics.Collector
	reg      *prometheus.Registry
	m        *ratelimit.Middleware
	clock    *core.ManualClock
	fallback *memstore.Store
}

// registered returns a new collector registered with a new registry.
func registered(t *testing.T, opts ...metrics.Option) (*metrics.Collector, *prometheus.Registry) {
	t.Helper()
	c, err := metrics.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	return c, reg
}

func newRig(t *testing.T, extra ...ratelimit.Option) *rig {
	t.Helper()
	c, reg := registered(t)
	clock := core.NewManualClock(t0)
	fallback := must.Do(memstore.New(memstore.WithMaxKeys(3)))
	store := must.Do(resilient.New(c.Backend(must.Do(memstore.New())), resilient.WithFallback(fallback), resilient.WithEvents(c.ResilientEvents()), resilient.WithClock(clock), resilient.WithDenyCache(0)))
	m, err := ratelimit.New(append([]ratelimit.Option{
		ratelimit.WithLimiter(core.NewLimiter(store, core.WithClock(clock))),
		ratelimit.WithKeyFunc(keyfuncs.Header("X-Key", keyfuncs.Verbatim())),
		ratelimit.WithPolicy(core.MustParsePolicy("2/1m;algorithm=fixed_window;name=api"), core.MustParsePolicy("1/1m;name=api-next;shadow=true")),
		ratelimit.WithObserver(c.Observer()),
	}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{c.Watch("primary", store), c.Watch("fallback", fallback), c.Watch("api", m)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return &rig{c: c, reg: reg, m: m, clock: clock, fallback: fallback}
}

func (r *rig) request(key string) bool {
	req := keyfuncstest.New("192.0.2.1:1")
	if key != "" {
		req.Headers.Set("X-Key", key)
	}
	return r.m.Handle(context.Background(), req, sink.Response{}, nil)
}

// scrape renders the registry in the text exposition format and parses it
// back, as a Prometheus server would.
func scrape(t *testing.T, reg *prometheus.Registry) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatalf("the exposition does not parse back: %v\n%s", err, buf.String())
	}
	return buf.String(), parsed
}

// value returns the value of the series of family name with the given
// labels (name=value pairs), or -1 when there is none.
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	mf := mfs[name]
	if mf == nil {
		return -1
	}
next:
	for _, m := range mf.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetrics drives every outcome and source through a middleware, a
// resilient store and a capped fallback, then scrapes, lints and checks the
// counts.
func TestMetrics(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.request("a")  // allowed; the shadow policy admits
	r.request("a")  // allowed; the shadow policy would deny
	r.request("a")  // denied by api
	r.request("")   // refused: no key (400)
	r.request("ok") // allowed
	if v := r.request("\x00bad"); !v {
		t.Logf("verdict for a hashed key: %v", v)
	}

	text, mfs := scrape(t, r.reg)
	problems, err := testutil.GatherAndLint(r.reg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	for _, want := range []struct {
		name   string
		labels []string
		v      float64
	}{
		{"ratelimit_checks_total", []string{"policy", "api", "outcome", "allowed"}, 4},
		{"ratelimit_checks_total", []string{"policy", "api", "outcome", "denied"}, 1},
		{"ratelimit_checks_total", []string{"policy", "none", "outcome", "refused"}, 1},
		{"ratelimit_checks_total", []string{"policy", "api-next", "outcome", "allowed"}, 3},
		{"ratelimit_checks_total", []string{"policy", "api-next", "outcome", "shadow_denied"}, 1},
		{"ratelimit_denials_total", []string{"policy", "api"}, 1},
		{"ratelimit_decisions_total", []string{"source", "primary"}, 5},         // 4 admissions and the primary's denial
		{"ratelimit_backend_call_duration_seconds", []string{"op", "check"}, 9}, // 5 enforced checks and 4 shadow ones
		{"ratelimit_breaker_state", []string{"backend", "primary", "state", "closed"}, 1},
		{"ratelimit_breaker_state", []string{"backend", "primary", "state", "open"}, 0},
		{"ratelimit_memstore_keys", []string{"store", "fallback"}, 0},
		{"ratelimit_observer_panics_total", []string{"middleware", "api"}, 0},
	} {
		if got := value(mfs, want.name, want.labels...); got != want.v {
			t.Errorf("%s%v = %v, want %v\n%s", want.name, want.labels, got, want.v, text)
		}
	}
	for _, name := range []string{"ratelimit_backend_errors_total", "ratelimit_breaker_transitions_total", "ratelimit_deny_cache_hits_total", "ratelimit_memstore_refused_total"} {
		if mfs[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
}

// TestMetricsSources: a failing primary moves decisions to the fallback,
// counts the errors by kind and the breaker's transitions; the capped
// fallback's refusals and a panicking observer are counted too.
func TestMetricsSources(t *testing.T) {
	c, reg := registered(t)
	clock := core.NewManualClock(t0)
	fallback := must.Do(memstore.New(memstore.WithMaxKeys(2)))
	store := must.Do(resilient.New(c.Backend(broken{&netErr{}}), resilient.WithFallback(fallback), resilient.WithEvents(c.ResilientEvents()),
		resilient.WithClock(clock), resilient.WithBreaker(2, time.Second)))
	m, err := ratelimit.New(ratelimit.WithLimiter(core.NewLimiter(store, core.WithClock(clock))),
		ratelimit.WithKeyFunc(keyfuncs.Header("X-Key", keyfuncs.Verbatim())),
		ratelimit.WithPolicy(core.MustParsePolicy("10/1m;name=api")),
		ratelimit.WithObserver(c.Observer()),
		ratelimit.WithObserver(func(context.Context, ratelimit.Event) { panic("broken") }))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Watch("redis", store)
	_ = c.Watch("fallback", fallback)
	_ = c.Watch("api", m)
	for i := range 4 {
		req := keyfuncstest.New("192.0.2.1:1", "X-Key", "k"+strconv.Itoa(i))
		m.Handle(context.Background(), req, sink.Response{}, nil)
	}
	_, mfs := scrape(t, reg)
	if p, err := testutil.GatherAndLint(reg); err != nil || len(p) > 0 {
		t.Fatalf("lint: %v %+v", err, p)
	}
	for _, want := range []struct {
		name   string
		labels []string
		v      float64
	}{
		{"ratelimit_decisions_total", []string{"source", "fallback"}, 2},                   // two keys fit the capped fallback
		{"ratelimit_checks_total", []string{"policy", "api", "outcome", "failed_open"}, 2}, // two were refused there: fail open
		{"ratelimit_decisions_total", []string{"source", "fail_open"}, 2},
		{"ratelimit_backend_errors_total", []string{"kind", "timeout"}, 2}, // then the breaker opened
		{"ratelimit_breaker_transitions_total", []string{"to", "open"}, 1},
		{"ratelimit_breaker_state", []string{"backend", "redis", "state", "open"}, 1},
		{"ratelimit_memstore_keys", []string{"store", "fallback"}, 2},
		{"ratelimit_memstore_refused_total", []string{"store", "fallback"}, 2},
		{"ratelimit_observer_panics_total", []string{"middleware", "api"}, 4},
	} {
		if got := value(mfs, want.name, want.labels...); got != want.v {
			t.Errorf("%s%v = %v, want %v", want.name, want.labels, got, want.v)
		}
	}
}

// netErr is a network timeout.
type netErr struct{}

func (*netErr) Error() string   { return "i/o timeout" }
func (*netErr) Timeout() bool   { return true }
func (*netErr) Temporary() bool { return true }

// TestKeysNeverBecomeLabels: 10,000 distinct keys add no series.
func TestKeysNeverBecomeLabels(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.request("warm-up")
	r.request("warm-up")
	r.request("warm-up")
	before, err := testutil.GatherAndCount(r.reg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10_000 {
		r.request("client-" + strconv.Itoa(i))
	}
	after, err := testutil.GatherAndCount(r.reg)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("series %d before and %d after 10,000 distinct keys", before, after)
	}
	text, _ := scrape(t, r.reg)
	if strings.Contains(text, "client-") {
		t.Fatal("a key appears in the exposition")
	}
}

// TestPolicyNamesAreBounded: past WithMaxPolicies distinct names, further
// ones are counted as "other".
func TestPolicyNamesAreBounded(t *testing.T) {
	t.Parallel()
	c, err := metrics.New(metrics.WithMaxPolicies(3))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	_ = reg.Register(c)
	obs := c.Observer()
	for i := range 50 {
		p := core.MustParsePolicy("10/1m;name=p" + strconv.Itoa(i))
		obs(context.Background(), ratelimit.Event{Outcome: ratelimit.OutcomeAllowed, Policies: []core.Policy{p},
			Result: core.Result{Allowed: true, Decisions: []core.Decision{{Allowed: true}}, Policies: []core.Policy{p}}})
	}
	_, mfs := scrape(t, reg)
	if n := len(mfs["ratelimit_checks_total"].Metric); n != 4 {
		t.Fatalf("%d series, want 3 names and other", n)
	}
	if v := value(mfs, "ratelimit_checks_total", "policy", "other"); v != 47 {
		t.Fatalf("other = %v, want 47", v)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	c, _ := metrics.New()
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	other, _ := metrics.New()
	var are prometheus.AlreadyRegisteredError
	if err := reg.Register(other); !errors.As(err, &are) {
		t.Fatalf("a second collector of the same names: %v", err)
	}
	if _, err := metrics.New(metrics.WithMaxPolicies(-1)); err == nil {
		t.Fatal("WithMaxPolicies(-1) accepted")
	}
	// Prometheus would panic at the first observation, in a request.
	for _, b := range [][]float64{{1, 0.5}, {0.1, 0.1}, {math.NaN()}, {0.1, math.NaN(), 1}} {
		if _, err := metrics.New(metrics.WithBuckets(b)); err == nil || !strings.Contains(err.Error(), "WithBuckets") {
			t.Fatalf("WithBuckets(%v): %v", b, err)
		}
	}
	for _, v := range []any{nil, (*memstore.Store)(nil), (*resilient.Backend)(nil), "a store"} {
		if err := c.Watch("m", v); err == nil || !strings.HasPrefix(err.Error(), "metrics: Watch: ") {
			t.Fatalf("Watch(%#v): %v", v, err)
		}
	}
	s := must.Do(memstore.New())
	if err := c.Watch("m", s); err != nil {
		t.Fatal(err)
	}
	if err := c.Watch("m", s); err == nil {
		t.Fatal("a name watched twice")
	}
}

// TestBackendIsBoundedAsItsStore: the instrumented backend is core.Bounded
// exactly when the store is, so that resilient over it calls it on the
// caller's goroutine, as it would the store; and it passes batches through.
func TestBackendIsBoundedAsItsStore(t *testing.T) {
	t.Parallel()
	c, _ := metrics.New()
	b := c.Backend(must.Do(memstore.New()))
	out := make([]core.Decision, 2)
	items := []core.Item{{Key: "k", Policy: core.MustParsePolicy("1/s"), Cost: 1}, {Key: "j", Policy: core.MustParsePolicy("1/s"), Cost: 1}}
	if err := b.Do(context.Background(), items, t0, out); err != nil || !out[0].Allowed || !out[1].Allowed {
		t.Fatalf("%v %+v", err, out)
	}
	if !bounded(b) {
		t.Error("the instrumented memory store is not bounded")
	}
	if bounded(c.Backend(broken{})) {
		t.Error("an instrumented backend that says nothing is bounded")
	}
}

// TestBackendLatencyByOp: each operation's calls are timed under its own
// op label, as resilient's events name them.
func TestBackendLatencyByOp(t *testing.T) {
	t.Parallel()
	c, reg := registered(t)
	b := c.Backend(must.Do(memstore.New()))
	out := make([]core.Decision, 1)
	for _, op := range []core.Op{core.OpConsume, core.OpPeek, core.OpRefund, core.OpCharge, core.OpCharge, core.OpReset} {
		if err := b.Do(context.Background(), []core.Item{{Key: "k", Policy: core.MustParsePolicy("10/s"), Cost: 1, Op: op}}, t0, out); err != nil {
			t.Fatalf("op %d: %v", op, err)
		}
	}
	text, mfs := scrape(t, reg)
	for op, want := range map[string]float64{"check": 1, "peek": 1, "adjust": 3, "reset": 1} {
		if got := value(mfs, "ratelimit_backend_call_duration_seconds", "op", op); got != want {
			t.Errorf("op %q: %v calls, want %v\n%s", op, got, want, text)
		}
	}
}

// TestNamespaceAndBuckets: the namespace prefixes every name, and the
// latency histogram has the buckets given.
func TestNamespaceAndBuckets(t *testing.T) {
	t.Parallel()
	c, reg := registered(t, metrics.WithNamespace("myapp"), metrics.WithBuckets([]float64{0.001, 1}))
	b := c.Backend(must.Do(memstore.New()))
	if err := b.Do(context.Background(), []core.Item{{Key: "k", Policy: core.MustParsePolicy("10/s"), Cost: 1}}, t0, make([]core.Decision, 1)); err != nil {
		t.Fatal(err)
	}
	text, mfs := scrape(t, reg)
	for name := range mfs {
		if !strings.HasPrefix(name, "myapp_ratelimit_") {
			t.Errorf("%s: no namespace\n%s", name, text)
		}
	}
	mf := mfs["myapp_ratelimit_backend_call_duration_seconds"]
	if mf == nil {
		t.Fatalf("no latency histogram\n%s", text)
	}
	for _, m := range mf.Metric {
		var bounds []float64
		for _, bk := range m.Histogram.Bucket {
			bounds = append(bounds, bk.GetUpperBound())
		}
		if want := []float64{0.001, 1, math.Inf(1)}; !slices.Equal(bounds, want) {
			t.Fatalf("buckets %v, want %v", bounds, want)
		}
	}
}

// TestWatchLease: a lease backend's counters are exported under its name,
// and match its Stats at the scrape.
func TestWatchLease(t *testing.T) {
	c, reg := registered(t)
	p := core.Policy{Limit: 1_000_000, Window: time.Minute, Algorithm: core.TokenBucket}
	b, err := lease.New(must.Do(memstore.New()), []core.Policy{p}, lease.WithMaxUnits(100))
	if err != nil {
		t.Fatal(err)
	}
	if err = c.Watch("redis", b); err != nil {
		t.Fatal(err)
	}
	if err := c.Watch("redis", b); err == nil {
		t.Fatal("a name watched twice: no error")
	}
	for i := range 5000 {
		if _, err := backendtest.CheckOne(context.Background(), b, "hot", p, 1, t0.Add(time.Duration(i)*10*time.Microsecond)); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = backendtest.CheckOne(context.Background(), b, "hot", p, 1, t0.Add(time.Hour)) // the last lease expires unused
	st := b.Stats()
	_, mfs := scrape(t, reg)
	for name, want := range map[string]uint64{
		"ratelimit_leases_total": st.Leases, "ratelimit_lease_units_total": st.UnitsLeased,
		"ratelimit_lease_units_wasted_total": st.UnitsWasted, "ratelimit_lease_local_admits_total": st.LocalAdmits,
	} {
		if got := value(mfs, name, "backend", "redis"); got != float64(want) || want == 0 {
			t.Errorf("%s = %v, want %d (nonzero)", name, got, want)
		}
	}
}

func TestObserverAllocatesNothing(t *testing.T) {
	c := must.Do(metrics.New())
	o := c.Observer()
	named, unnamed := core.MustParsePolicy("100/1m;name=api"), core.MustParsePolicy("5/1s")
	shadow := core.MustParsePolicy("1/1m;name=next;shadow=true")
	ps := []core.Policy{named, unnamed}
	ev := ratelimit.Event{Outcome: ratelimit.OutcomeDenied, Policies: ps,
		Result: core.Result{Decisions: []core.Decision{{Allowed: true}, {}}, Policies: ps},
		Shadow: core.Result{Decisions: []core.Decision{{}}, Policies: []core.Policy{shadow}}}
	o(context.Background(), ev)
	if n := testing.AllocsPerRun(100, func() { o(context.Background(), ev) }); n > 0 {
		t.Fatalf("%v allocations per event", n)
	}
}

// bounded reports whether b is a core.Bounded that says yes.
func bounded(b core.Backend) bool {
	bb, ok := b.(core.Bounded)
	return ok && bb.Bounded()
}
