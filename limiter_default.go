package ratelimit

import (
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// defaultLimiter is the limiter of a Middleware built without WithLimiter:
// a fresh in-memory store on the system clock. The store reclaims expired
// keys on the request path and starts no goroutine.
func defaultLimiter() (*core.Limiter, *memstore.Store) {
	store := memstore.New()
	return core.NewLimiter(store), store
}

// Close closes the in-memory store the Middleware created because it was
// built without WithLimiter. That store starts no goroutine, so Close has
// nothing to stop today and a Middleware that is never closed leaks nothing;
// it stays for symmetry with stores that hold resources. A limiter passed
// with WithLimiter is left alone: its owner closes its backend. Close is
// safe to call more than once.
func (m *Middleware) Close() error {
	if m.s.owned == nil {
		return nil
	}
	return m.s.owned.Close()
}
