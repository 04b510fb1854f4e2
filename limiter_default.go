package ratelimit

import (
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// defaultLimiter is the limiter of a Middleware built without WithLimiter:
// a fresh in-memory store on the system clock. The store's background
// sweeper, which reclaims expired keys, runs until Middleware.Close.
func defaultLimiter() (*core.Limiter, *memstore.Store) {
	store := memstore.New()
	return core.NewLimiter(store), store
}

// Close stops the background work of the in-memory store the Middleware
// created because it was built without WithLimiter; Middlewares derived from
// it with With share that store, and closing any of them closes it. The store
// keeps answering checks afterwards, it only stops reclaiming expired keys in
// the background. A limiter passed with WithLimiter is left alone: its owner
// closes its backend. Close is safe to call more than once.
func (m *Middleware) Close() error {
	if m.s.owned == nil {
		return nil
	}
	return m.s.owned.Close()
}
