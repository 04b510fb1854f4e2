package memstore_test

import (
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

func TestMultiKey(t *testing.T) {
	backendtest.RunMultiKey(t, func(*testing.T) core.Backend { return must.Do(memstore.New(memstore.WithShards(4))) })
}
