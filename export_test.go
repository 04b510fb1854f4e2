package ratelimit

// With is with, for the tests of this package that derive a middleware
// sharing another's limiter.
func (m *Middleware) With(opts ...Option) (*Middleware, error) { return m.with(opts...) }
