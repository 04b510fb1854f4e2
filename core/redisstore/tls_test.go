package redisstore_test

import (
	"crypto/tls"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/redisproc"
	"github.com/ratelimit-go/ratelimit/internal/testcerts"
)

// TestConformanceTLSAndACL runs the conformance suite against a real Redis
// over TLS, as an ACL user allowed only docs/redis.md's commands: every
// operation of every algorithm runs within them.
func TestConformanceTLSAndACL(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	const prefix = "rltls:"
	_, addr := redisproc.StartTLS(t, ca, redisproc.StoreACL("ratelimit", "s3cret", prefix))
	roots := ca.Pool()
	opts := &redis.Options{Addr: addr, Username: "ratelimit", Password: "s3cret",
		TLSConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	resilient.RedisOptions(opts, resilient.DefaultBudget)
	opts.ReadTimeout, opts.WriteTimeout = 0, 0 // a loaded CI machine: no spurious timeouts
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	backendtest.Run(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(prefix), redisstore.WithTTLMargin(realMargin))
	})
}

// TestACLLineDocumented: the ACL line the tests grant is the one
// docs/redis.md shows.
func TestACLLineDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/redis.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "ACL SETUSER "+strings.TrimPrefix(redisproc.StoreACLDoc(), "user ")) {
		t.Fatalf("docs/redis.md does not show the ACL line the tests grant:\nACL SETUSER %s", strings.TrimPrefix(redisproc.StoreACLDoc(), "user "))
	}
}

// TestClusterACL: on a real Cluster, docs/redis.md's line plus
// +cluster|slots is all a user of the store needs.
func TestClusterACL(t *testing.T) {
	const prefix = "rlacl:"
	cl := redisproc.StartCluster(t, 3, 0, 2*time.Second, redisproc.StoreACL("ratelimit", "s3cret", prefix)+" +cluster|slots")
	var addrs []string
	for _, n := range cl.Nodes {
		addrs = append(addrs, n.Addr)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Username: "ratelimit", Password: "s3cret", MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	backendtest.Run(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(prefix), redisstore.WithTTLMargin(realMargin))
	})
}

// TestConformanceClusterTLS: the suite over a Cluster that speaks TLS to
// clients and between its nodes, go-redis given one TLS configuration for
// every node (their certificates name their IP address), as the ACL user.
func TestConformanceClusterTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "cluster")
	const prefix = "rlctls:"
	_, addrs := redisproc.StartClusterTLS(t, ca, 3, 2*time.Second, redisproc.StoreACL("ratelimit", "s3cret", prefix)+" +cluster|slots")
	roots := ca.Pool()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Username: "ratelimit", Password: "s3cret", MaxRetries: -1,
		TLSConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}})
	t.Cleanup(func() { _ = c.Close() })
	backendtest.Run(t, func(t *testing.T) core.Backend {
		return newStore(t, c, redisstore.WithPrefix(prefix), redisstore.WithTTLMargin(realMargin))
	})
}
