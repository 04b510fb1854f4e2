// Package obs walks a middleware event through the counters the metrics
// packages (Prometheus and OpenTelemetry) keep, so that both count alike.
package obs

import (
	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
)

// Outcomes are the outcome labels, indexed by ratelimit.Outcome, then
// ShadowDenied's.
var Outcomes = [...]string{"unknown", "allowed", "denied", "skipped", "refused", "failed_open", "failed_closed", "shadow_denied"}

// Sources are the decision source labels, indexed by core.Source.
var Sources = [...]string{"primary", "deny_cache", "fallback", "fail_open", "fail_closed"}

// Kinds of a count besides the outcomes: a shadow policy's would-be
// denial, and a denial by a policy.
const (
	ShadowDenied = uint8(len(Outcomes) - 1)
	Denial       = uint8(255)
)

// Walk counts e through policy (p nil for a request no policy was chosen
// for) and source: each enforced policy with the request's outcome, each
// denying policy as a Denial, each shadow policy as allowed or
// ShadowDenied, and the decision's source.
func Walk(e *ratelimit.Event, policy func(p *core.Policy, kind uint8), source func(s int)) {
	out := uint8(e.Outcome)
	if int(out) >= len(Outcomes)-1 {
		out = 0
	}
	switch {
	case len(e.Policies) > 0:
		for i := range e.Policies {
			policy(&e.Policies[i], out)
		}
	case e.Outcome != ratelimit.OutcomeAllowed: // allowed with no enforced policy: a set of shadow policies only
		policy(nil, out)
	}
	if e.Outcome == ratelimit.OutcomeDenied {
		for i := range e.Result.Decisions {
			if !e.Result.Decisions[i].Allowed && i < len(e.Result.Policies) {
				policy(&e.Result.Policies[i], Denial)
			}
		}
	}
	for i := range e.Shadow.Decisions {
		k := uint8(ratelimit.OutcomeAllowed)
		if !e.Shadow.Decisions[i].Allowed {
			k = ShadowDenied
		}
		if i < len(e.Shadow.Policies) {
			policy(&e.Shadow.Policies[i], k)
		}
	}
	switch e.Outcome {
	case ratelimit.OutcomeAllowed, ratelimit.OutcomeDenied:
		if len(e.Result.Decisions) == 0 {
			break
		}
		fallthrough
	case ratelimit.OutcomeFailedOpen, ratelimit.OutcomeFailedClosed:
		if s := int(e.Source); s < len(Sources) {
			source(s)
		}
	}
}
