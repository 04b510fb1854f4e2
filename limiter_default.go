package ratelimit

import (
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// defaultMaxKeys bounds the states of the default limiter's store: a flood
// of new keys (client addresses, say) costs at most about 180 MB.
const defaultMaxKeys = 1_000_000

// defaultLimiter is the limiter of a Middleware built without WithLimiter:
// a fresh in-memory store of at most defaultMaxKeys states, on the system
// clock. The store reclaims expired keys on the request path and starts no
// goroutine.
func defaultLimiter() (*core.Limiter, error) {
	s, err := memstore.New(memstore.WithMaxKeys(defaultMaxKeys))
	if err != nil {
		return nil, err
	}
	return core.NewLimiter(s), nil
}
