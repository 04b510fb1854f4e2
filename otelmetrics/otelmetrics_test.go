package otelmetrics_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/internal/sink"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
	"github.com/ratelimit-go/ratelimit/otelmetrics"
)

// sums collects the reader and returns every counter's points as
// "name policy outcome source" -> value.
func sums(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			s, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s is %T, want a monotonic int64 sum", m.Name, m.Data)
			}
			for _, dp := range s.DataPoints {
				get := func(k string) string { v, _ := dp.Attributes.Value(attribute.Key(k)); return v.AsString() }
				out[m.Name+" "+get("policy")+" "+get("outcome")+" "+get("source")] = dp.Value
			}
		}
	}
	return out
}

func TestObserver(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	obs, err := otelmetrics.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("ratelimit"))
	if err != nil {
		t.Fatal(err)
	}
	clock := core.NewManualClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	m, err := ratelimit.New(ratelimit.WithLimiter(core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock))),
		ratelimit.WithKeyFunc(keyfuncs.Header("X-Key", keyfuncs.Verbatim())),
		ratelimit.WithPolicy(core.MustParsePolicy("2/1m;name=api"), core.MustParsePolicy("1/1m;name=api-next;shadow=true")),
		ratelimit.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "a", "a", "", "b"} {
		req := keyfuncstest.New("192.0.2.1:1")
		if key != "" {
			req.Headers.Set("X-Key", key)
		}
		m.Handle(context.Background(), req, sink.Response{}, nil)
	}
	got := sums(t, reader)
	for k, want := range map[string]int64{
		"ratelimit.checks api allowed ":            3,
		"ratelimit.checks api denied ":             1,
		"ratelimit.checks none refused ":           1,
		"ratelimit.checks api-next allowed ":       2,
		"ratelimit.checks api-next shadow_denied ": 1,
		"ratelimit.denials api  ":                  1,
		"ratelimit.decisions   primary":            4,
	} {
		if got[k] != want {
			t.Errorf("%q = %d, want %d (all: %v)", k, got[k], want, got)
		}
	}
	if _, err := otelmetrics.New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}

func TestObserverAllocatesNothing(t *testing.T) {
	obs, _ := otelmetrics.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())).Meter("ratelimit"))
	o := obs
	p := core.MustParsePolicy("100/1m;name=api")
	ev := ratelimit.Event{Outcome: ratelimit.OutcomeAllowed, Policies: []core.Policy{p},
		Result: core.Result{Allowed: true, Decisions: []core.Decision{{Allowed: true}}, Policies: []core.Policy{p}}}
	o(context.Background(), ev)
	if n := testing.AllocsPerRun(100, func() { o(context.Background(), ev) }); n > 0 {
		t.Fatalf("%v allocations per event", n)
	}
}
