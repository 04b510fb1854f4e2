package redisstore_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

// TestMain runs the tests and then, whatever order -shuffle chose, scans the
// real test servers: every key there, written by these tests or by any other
// package's, must have a TTL.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		code = checkTTLs()
	}
	os.Exit(code)
}

// checkTTLs scans the standalone Redis and every cluster master that is
// configured and returns 1 if a key has no TTL, or if a full run of this
// package left no key to look at (the check would then prove nothing).
func checkTTLs() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := 0
	for _, srv := range []struct {
		name   string
		client func() redis.UniversalClient
		ok     bool
	}{
		{"redis", func() redis.UniversalClient { return redistest.NewClient() }, redistest.Available()},
		{"cluster", func() redis.UniversalClient { return redistest.NewClusterClient() }, redistest.ClusterAvailable()},
	} {
		if !srv.ok {
			continue
		}
		c := srv.client()
		n, noTTL, err := redistest.ScanTTLs(ctx, c, "*")
		_ = c.Close()
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "TTL check on %s: %v\n", srv.name, err)
			code = 1
		case len(noTTL) > 0:
			fmt.Fprintf(os.Stderr, "TTL check on %s: %d of %d keys have no TTL, e.g. %q\n", srv.name, len(noTTL), n, noTTL[0])
			code = 1
		case n == 0 && flag.Lookup("test.run").Value.String() == "":
			fmt.Fprintf(os.Stderr, "TTL check on %s: no key found after a full run; the check proves nothing\n", srv.name)
			code = 1
		default:
			if testing.Verbose() || os.Getenv("CI") == "true" {
				fmt.Printf("TTL check on %s: all %d keys have a TTL\n", srv.name, n)
			}
		}
	}
	return code
}
