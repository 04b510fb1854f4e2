package redistest

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func testScanAndDelete(ctx context.Context, t *testing.T,
	set func(context.Context, string, any, time.Duration) *redis.StatusCmd,
	exists func(context.Context, ...string) *redis.IntCmd,
	c redis.UniversalClient, forever bool) {
	t.Helper()
	p, other := Prefix(t), Prefix(t)
	// Keys in different slots, so the cluster spreads them over masters.
	for i := range 20 {
		if err := set(ctx, p+"k"+strconv.Itoa(i), "v", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	want, wantNoTTL := 20, []string(nil)
	if forever {
		// Only on a private server: the shared ones are scanned for keys
		// without a TTL by other tests at the same time.
		if err := set(ctx, p+"forever", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		want, wantNoTTL = 21, []string{p + "forever"}
	}
	if err := set(ctx, other+"keep", "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	n, noTTL, err := ScanTTLs(ctx, c, escapeGlob(p)+"*")
	if err != nil || n != want || !slices.Equal(noTTL, wantNoTTL) {
		t.Fatalf("ScanTTLs: %d keys, no TTL %q, err %v; want %d and %q", n, noTTL, err, want, wantNoTTL)
	}
	if err := DeletePrefix(ctx, c, p); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := ScanTTLs(ctx, c, escapeGlob(p)+"*"); n != 0 {
		t.Fatalf("%d keys left under the prefix after DeletePrefix", n)
	}
	if exists(ctx, other+"keep").Val() != 1 {
		t.Fatal("DeletePrefix removed a key under another prefix")
	}
}
