package ratelimit

import (
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// defaultLimiter is the limiter of a Middleware built without WithLimiter:
// a fresh in-memory store on the system clock. The store reclaims expired
// keys on the request path and starts no goroutine.
func defaultLimiter() (*core.Limiter, error) {
	s, err := memstore.New()
	if err != nil {
		return nil, err
	}
	return core.NewLimiter(s), nil
}
