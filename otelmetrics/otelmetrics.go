// Package otelmetrics counts what the middleware does on an OpenTelemetry
// metric.Meter, from its observer: the checks, denials and decision
// sources that package metrics counts for Prometheus (counters
// ratelimit.checks, ratelimit.denials and ratelimit.decisions, unit
// "{request}", docs/observability.md).
//
//	obs, err := otelmetrics.New(otel.Meter("ratelimit"))
//	...
//	m, err := ratelimit.New(..., ratelimit.WithObserver(obs.Observer()))
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
)

// maxPolicies is the number of distinct policy names that get an attribute
// value of their own.
const maxPolicies = 1000

// Observer counts the middleware's events on a Meter. Build it with New.
// Safe for concurrent use.
type Observer struct {
	checks, denials, decisions metric.Int64Counter
	sources                    [5][]metric.AddOption

	mu   sync.Mutex
	sets sync.Map // optKey -> []metric.AddOption
	n    int      // distinct policy names given an attribute
}

type optKey struct {
	policy string
	kind   uint8 // an outcome, or denial
}

const denial = uint8(255)

var outcomes = [...]string{"unknown", "allowed", "denied", "skipped", "refused", "failed_open", "failed_closed", "shadow_denied"}

const shadowDenied = uint8(len(outcomes) - 1)

// New creates the instruments on meter. A nil meter is an error.
func New(meter metric.Meter) (*Observer, error) {
	if meter == nil {
		return nil, errors.New("otelmetrics: New(nil): no meter")
	}
	o := &Observer{}
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
	for i, s := range [...]string{"primary", "deny_cache", "fallback", "fail_open", "fail_closed"} {
		o.sources[i] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("source", s)))}
	}
	return o, nil
}

// Observer returns the observer to install with ratelimit.WithObserver.
func (o *Observer) Observer() ratelimit.Observer { return o.observe }

func (o *Observer) observe(ctx context.Context, e ratelimit.Event) {
	out := uint8(e.Outcome)
	if int(out) >= len(outcomes)-1 {
		out = 0
	}
	switch {
	case len(e.Policies) > 0:
		for i := range e.Policies {
			o.checks.Add(ctx, 1, o.option(&e.Policies[i], out)...)
		}
	case e.Outcome != ratelimit.OutcomeAllowed:
		o.checks.Add(ctx, 1, o.named("none", out)...)
	}
	if e.Outcome == ratelimit.OutcomeDenied {
		for i := range e.Result.Decisions {
			if d := &e.Result.Decisions[i]; !d.Allowed && i < len(e.Result.Policies) {
				o.denials.Add(ctx, 1, o.option(&e.Result.Policies[i], denial)...)
			}
		}
	}
	for i := range e.Shadow.Decisions {
		d := &e.Shadow.Decisions[i]
		k := uint8(ratelimit.OutcomeAllowed)
		if !d.Allowed {
			k = shadowDenied
		}
		if i < len(e.Shadow.Policies) {
			o.checks.Add(ctx, 1, o.option(&e.Shadow.Policies[i], k)...)
		}
	}
	switch e.Outcome {
	case ratelimit.OutcomeAllowed, ratelimit.OutcomeDenied:
		if len(e.Result.Decisions) == 0 {
			break
		}
		fallthrough
	case ratelimit.OutcomeFailedOpen, ratelimit.OutcomeFailedClosed:
		if s := int(e.Source); s < len(o.sources) {
			o.decisions.Add(ctx, 1, o.sources[s]...)
		}
	}
}

func (o *Observer) option(p *core.Policy, kind uint8) []metric.AddOption {
	name := p.Name
	if name == "" {
		name = ratelimit.PolicyName(*p)
	}
	return o.named(name, kind)
}

// named returns the cached attribute options of policy name and kind, as
// the slice Add takes, so that passing them allocates nothing.
func (o *Observer) named(name string, kind uint8) []metric.AddOption {
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
	if kind != denial {
		attrs = append(attrs, attribute.String("outcome", outcomes[kind]))
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
