package ratelimit

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// Config is the struct form of the options, for code that prefers a
// configuration value (as Gin and Echo middleware usually take). Every
// zero field means the default of the matching option; Options converts
// it, and NewFromConfig builds a Middleware from it.
type Config struct {
	// Limiter decides checks. nil: an in-memory store on the system clock
	// (see WithLimiter).
	Limiter *core.Limiter
	// Policies are the global policies (see WithPolicy). nil: only routes
	// in Routes are limited.
	Policies []core.Policy
	// Routes is the route table (see WithRoute).
	Routes []RouteRule
	// Plan and Plans choose per-caller policies (see WithPlans). nil: no
	// plans.
	Plan  PlanFunc
	Plans map[string][]core.Policy
	// Algorithm is the algorithm of policies that name none (see
	// WithAlgorithm). Zero: core.DefaultAlgorithm.
	Algorithm core.Algorithm
	// MaxDelay is the ceiling on the hold of leaky-bucket policies that set
	// none (see WithMaxDelay). Zero: DefaultMaxDelay.
	MaxDelay time.Duration
	// Shaping holds admitted requests that a decision asks to delay (see
	// WithShaping). nil: a timer; set DisableShaping to let them proceed at
	// once.
	Shaping        func(ctx context.Context, d time.Duration) error
	DisableShaping bool
	// KeyFunc derives the key. Required.
	KeyFunc keyfuncs.KeyFunc
	// Cost gives a request's cost. nil: 1 for every request.
	Cost func(keyfuncs.Request) int
	// Skip lets matching requests through unchecked. nil: none skipped.
	Skip func(keyfuncs.Request) bool
	// Headers is the header mode. Zero: HeadersDraft11.
	Headers HeaderMode
	// DeniedHandler writes 429 responses. nil: DefaultDeniedHandler.
	DeniedHandler DeniedHandler
	// ErrorHandler writes refusals. nil: DefaultErrorHandler.
	ErrorHandler ErrorHandler
	// FailureMode applies when the limiter fails. Zero: FailOpen.
	FailureMode FailureMode
	// Observer sees every outcome. nil: none.
	Observer Observer
}

// RouteRule is one route table entry of a Config: Method ("" for any) and
// Pattern select the requests, Policies replace the global ones for them.
// See WithRoute.
type RouteRule struct {
	Method   string
	Pattern  string
	Policies []core.Policy
}

// Options returns the options equivalent to c.
func (c Config) Options() []Option {
	opts := []Option{
		WithPolicy(c.Policies...),
		WithKeyFunc(c.KeyFunc),
		WithCost(c.Cost),
		WithSkip(c.Skip),
		WithHeaders(c.Headers),
		WithDeniedHandler(c.DeniedHandler),
		WithErrorHandler(c.ErrorHandler),
		WithFailureMode(c.FailureMode),
		WithObserver(c.Observer),
	}
	if c.Limiter != nil {
		opts = append(opts, WithLimiter(c.Limiter))
	}
	if c.Plan != nil || c.Plans != nil {
		opts = append(opts, WithPlans(c.Plan, c.Plans))
	}
	if c.Algorithm != "" {
		opts = append(opts, WithAlgorithm(c.Algorithm))
	}
	if c.MaxDelay != 0 {
		opts = append(opts, WithMaxDelay(c.MaxDelay))
	}
	switch {
	case c.DisableShaping:
		opts = append(opts, WithShaping(nil))
	case c.Shaping != nil:
		opts = append(opts, WithShaping(c.Shaping))
	}
	for _, r := range c.Routes {
		opts = append(opts, WithRoute(r.Method, r.Pattern, r.Policies...))
	}
	return opts
}

// NewFromConfig is New(c.Options()...).
func NewFromConfig(c Config) (*Middleware, error) { return New(c.Options()...) }
