package ratelimit

import "github.com/ratelimit-go/ratelimit/core"

// With is with, for the tests of this package that derive a middleware
// sharing another's limiter.
func (m *Middleware) With(opts ...Option) (*Middleware, error) { return m.with(opts...) }

// Limiter is the limiter m checks with, for the tests of its default.
func (m *Middleware) Limiter() *core.Limiter { return m.s.limiter }
