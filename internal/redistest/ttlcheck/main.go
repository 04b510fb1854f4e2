// Command ttlcheck scans the test Redis servers (RATELIMIT_REDIS_ADDR and
// RATELIMIT_REDIS_CLUSTER_ADDRS) and fails if any key has no TTL. .ci/run
// runs it after the whole test suite, so it sees the keys every package
// left behind.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/internal/redistest"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var clients []redis.UniversalClient
	if c := redistest.NewClient(); c != nil {
		clients = append(clients, c)
	}
	if c := redistest.NewClusterClient(); c != nil {
		clients = append(clients, c)
	}
	if len(clients) == 0 {
		fmt.Fprintf(os.Stderr, "ttlcheck: neither %s nor %s is set\n", redistest.AddrEnv, redistest.ClusterEnv)
		os.Exit(2)
	}
	failed := false
	for _, c := range clients {
		n, noTTL, err := redistest.ScanTTLs(ctx, c, "*")
		_ = c.Close()
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "ttlcheck: %v\n", err)
			failed = true
		case len(noTTL) > 0:
			fmt.Fprintf(os.Stderr, "ttlcheck: %d of %d keys have no TTL:\n", len(noTTL), n)
			for i, k := range noTTL {
				if i == 20 {
					fmt.Fprintf(os.Stderr, "  ...\n")
					break
				}
				fmt.Fprintf(os.Stderr, "  %q\n", k)
			}
			failed = true
		default:
			fmt.Printf("ttlcheck: all %d keys have a TTL\n", n)
		}
	}
	if failed {
		os.Exit(1)
	}
}
