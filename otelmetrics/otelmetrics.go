// Package otelmetrics counts what the middleware does on an OpenTelemetry
// metric.Meter, from its observer: the checks, denials and decision
// sources that package metrics counts for Prometheus (counters
// ratelimit.checks, ratelimit.denials and ratelimit.decisions, unit
// "{request}", docs/observability.md).
//
//	obs, err := otelmetrics.New(otel.Meter("ratelimit"))
//	...
//	m, err := ratelimit.New(..., ratelimit.WithObserver(obs))
//
// Attributes are policy names (at most 1000, the rest "other") and fixed
// enumerations, never a key.
package otelmetrics

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/obs"
)

// maxPolicies is the number of distinct policy names that get an attribute
// value of their own.
const maxPolicies = 1000

// observer counts the middleware's events on a Meter.
type observer struct {
	checks, denials, decisions metric.Int64Counter
	sources                    [len(obs.Sources)][]metric.AddOption

	mu   sync.Mutex
	sets sync.Map // optKey -> []metric.AddOption
	n    int      // distinct policy names given an attribute
}

type optKey struct {
	policy string
	kind   uint8 // an outcome, or obs.Denial
}

// New creates the instruments on meter and returns the observer to install
// with ratelimit.WithObserver, safe for concurrent use. A nil meter is an
// error.
func New(meter metric.Meter) (ratelimit.Observer, error) {
	if meter == nil {
		return nil, errors.New("otelmetrics: New(nil): no meter")
	}
	o := &observer{}
	var err error
	if o.checks, err = meter.Int64Counter("ratelimit.checks", metric.WithUnit("{request}"),
		metric.WithDescription("Requests checked against each policy, by the request's outcome.")); err != nil {
		return nil, err
	}
	if o.denials, err = meter.Int64Counter("ratelimit.denials", metric.WithUnit("{request}"),
		metric.WithDescription("Denied requests, by the policy that denied them.")); err != nil {
		return nil, err
	}
	if o.decisions, err = meter.Int64Counter("ratelimit.decisions", metric.WithUnit("{request}"),
		metric.WithDescription("Checked requests by what decided them.")); err != nil {
		return nil, err
	}
	for i, s := range obs.Sources {
		o.sources[i] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("source", s)))}
	}
	return o.observe, nil
}

func (o *observer) observe(ctx context.Context, e ratelimit.Event) {
	obs.Walk(&e, func(p *core.Policy, kind uint8) {
		c := o.checks
		if kind == obs.Denial {
			c = o.denials
		}
		if p == nil {
			c.Add(ctx, 1, o.named("none", kind)...)
		} else {
			c.Add(ctx, 1, o.option(p, kind)...)
		}
	}, func(s int) { o.decisions.Add(ctx, 1, o.sources[s]...) })
}

func (o *observer) option(p *core.Policy, kind uint8) []metric.AddOption {
	name := p.Name
	if name == "" {
		name = fields.PolicyName(*p)
	}
	return o.named(name, kind)
}

// named returns the cached attribute options of policy name and kind, as
// the slice Add takes, so that passing them allocates nothing.
func (o *observer) named(name string, kind uint8) []metric.AddOption {
	if v, ok := o.sets.Load(optKey{name, kind}); ok {
		return v.([]metric.AddOption)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if v, ok := o.sets.Load(optKey{name, kind}); ok {
		return v.([]metric.AddOption)
	}
	label := name
	fresh := true
	o.sets.Range(func(k, _ any) bool {
		if k.(optKey).policy == name {
			fresh = false
			return false
		}
		return true
	})
	if fresh && o.n >= maxPolicies {
		label = "other"
	}
	attrs := []attribute.KeyValue{attribute.String("policy", label)}
	if kind != obs.Denial {
		attrs = append(attrs, attribute.String("outcome", obs.Outcomes[kind]))
	}
	opt := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	if label == name {
		if fresh {
			o.n++
		}
		o.sets.Store(optKey{name, kind}, opt)
	}
	return opt
}
