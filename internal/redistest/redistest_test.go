package redistest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func TestPrefixUnique(t *testing.T) {
	a, b := Prefix(t), Prefix(t)
	if a == b || !strings.HasPrefix(a, "rltest:") || strings.ContainsAny(a, "{}*?[]") {
		t.Fatalf("prefixes %q and %q", a, b)
	}
}

func TestEscapeGlob(t *testing.T) {
	if got := escapeGlob(`a*b?c[d]e\f`); got != `a\*b\?c\[d\]e\\f` {
		t.Fatalf("escapeGlob: %q", got)
	}
}

// TestScanAndDelete: ScanTTLs counts keys and finds one without a TTL, and
// DeletePrefix removes exactly the keys under its prefix, on miniredis, the
// standalone Redis and every master of the cluster.
func TestScanAndDelete(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		defer c.Close()
		testScanAndDelete(ctx, t, c.Set, c.Exists, c, true)
	})
	t.Run("redis", func(t *testing.T) {
		c := Client(t)
		testScanAndDelete(ctx, t, c.Set, c.Exists, c, false)
	})
	t.Run("cluster", func(t *testing.T) {
		c := Cluster(t)
		testScanAndDelete(ctx, t, c.Set, c.Exists, c, false)
	})
}
