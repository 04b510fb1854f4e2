package redisproc

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/testcerts"
)

// storeACL is the least an ACL user of redisstore needs on Redis 7.0, as
// docs/redis.md shows it: the script calls and the commands the script
// runs (Redis checks the ACL inside Lua), DEL for a reset, PING for
// readiness, HELLO for the connection, on the keys of the store's prefix.
// Redis 7.2 and later also take +client|setinfo, which 7.0 refuses.
const storeACL = "user ratelimit on >PASSWORD resetchannels ~ratelimit:* -@all +evalsha +eval +get +set +hmget +hset +lindex +llen +lrem +ltrim +rpush +pexpire +del +ping +hello"

// StoreACL returns docs/redis.md's ACL line for a user of that name and
// password on keys of the prefix, without the commands in drop.
func StoreACL(user, password, prefix string, drop ...string) string {
	acl := strings.NewReplacer("user ratelimit", "user "+user, ">PASSWORD", ">"+password, "~ratelimit:*", "~"+prefix+"*").Replace(storeACL)
	for _, d := range drop {
		acl = strings.Replace(acl, " +"+d, "", 1)
	}
	return acl
}

// StoreACLDoc is the ACL line as docs/redis.md writes it.
func StoreACLDoc() string { return storeACL }

// StartClusterTLS starts a cluster of masters with no replicas, as
// StartCluster does, whose nodes also speak TLS on ports of their own, with
// TLS between the nodes (tls-cluster yes): a client over TLS is told the
// nodes' TLS ports. Each node's certificate, of ca, names 127.0.0.1. It
// returns the cluster and the nodes' TLS addresses.
func StartClusterTLS(t testing.TB, ca *testcerts.CA, masters int, nodeTimeout time.Duration, config ...string) (*Cluster, []string) {
	t.Helper()
	var tlsAddrs []string
	node := func() []string {
		port := freeTCPPort(t)
		tlsAddrs = append(tlsAddrs, "127.0.0.1:"+port)
		srv := ca.Server("redis-" + port)
		return []string{"tls-port " + port, "tls-cert-file " + srv.CertFile, "tls-key-file " + srv.KeyFile,
			"tls-ca-cert-file " + ca.File, "tls-auth-clients optional", "tls-cluster yes", "tls-replication yes"}
	}
	c := startCluster(t, masters, 0, nodeTimeout, node, config)
	return c, tlsAddrs
}

func freeTCPPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// StartTLS starts a standalone redis-server that also speaks TLS on a
// port of its own (its plaintext port stays, for setup), with a server
// certificate of ca for 127.0.0.1, and client certificates of ca accepted
// but not required. It returns the server and its TLS address.
func StartTLS(t testing.TB, ca *testcerts.CA, config ...string) (*Server, string) {
	t.Helper()
	port := freeTCPPort(t)
	srv := ca.Server("redis-" + port)
	s := Start(t, append([]string{"tls-port " + port, "tls-cert-file " + srv.CertFile, "tls-key-file " + srv.KeyFile,
		"tls-ca-cert-file " + ca.File, "tls-auth-clients optional"}, config...)...)
	return s, "127.0.0.1:" + port
}
