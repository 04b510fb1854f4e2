package redisproc

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of servers started by a test.
type Cluster struct {
	// Nodes are every node, masters and replicas, in start order.
	Nodes []*Server
	t     testing.TB
}

// StartCluster starts masters*(1+replicasPerMaster) nodes with the given
// cluster-node-timeout, joins them into a cluster with redis-cli, and waits
// until every node reports cluster_state:ok. Extra configuration directives
// apply to every node. The nodes are stopped when t ends.
func StartCluster(t testing.TB, masters, replicasPerMaster int, nodeTimeout time.Duration, config ...string) *Cluster {
	t.Helper()
	return startCluster(t, masters, replicasPerMaster, nodeTimeout, nil, config)
}

// startCluster is StartCluster with, when node is not nil, the directives
// node returns added to each node's own configuration.
func startCluster(t testing.TB, masters, replicasPerMaster int, nodeTimeout time.Duration, node func() []string, config []string) *Cluster {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		Require(t)
		if os.Getenv("CI") == "true" {
			t.Fatal("redisproc: redis-cli is not installed and CI=true: it is needed to create a cluster")
		}
		t.Skip("redisproc: redis-cli is not installed; it is needed to create a cluster")
	}
	c := &Cluster{t: t}
	conf := append([]string{
		"cluster-enabled yes",
		"cluster-config-file nodes.conf",
		"cluster-node-timeout " + strconv.FormatInt(nodeTimeout.Milliseconds(), 10),
		// Keep serving the slots that are still covered while a master is
		// being replaced.
		"cluster-require-full-coverage no",
		// Replicas sync at once instead of after the default 5 s delay: a
		// replica that never synced cannot take over.
		"repl-diskless-sync-delay 0",
	}, config...)
	n := masters * (1 + replicasPerMaster)
	args := []string{"--cluster", "create"}
	for range n {
		nc := conf
		if node != nil {
			nc = append(nc[:len(nc):len(nc)], node()...)
		}
		s := Start(t, nc...)
		c.Nodes = append(c.Nodes, s)
		args = append(args, s.Addr)
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redisproc: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitOK(30 * time.Second)
	c.waitReplicas(30 * time.Second)
	return c
}

// waitReplicas waits until every replica's link to its master is up.
func (c *Cluster) waitReplicas(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for _, s := range c.Nodes {
		for {
			info := s.info("INFO", "replication")
			if strings.Contains(info, "role:master") || strings.Contains(info, "master_link_status:up") {
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("redisproc: replica %s not in sync after %v: %s", s.Addr, timeout, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// Addrs returns the addresses of every node, as seeds for a cluster client.
func (c *Cluster) Addrs() []string { return addrsOf(c.Nodes) }

// addrsOf returns the addresses of servers.
func addrsOf(servers []*Server) []string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	return addrs
}

// WaitOK waits until every running node reports cluster_state:ok and sees
// all 16384 slots assigned, or fails the test after timeout.
func (c *Cluster) WaitOK(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		bad := ""
		for _, s := range c.Nodes {
			if s.PID() == 0 {
				continue
			}
			if info := s.info("CLUSTER", "INFO"); !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_assigned:16384") {
				bad = s.Addr + ": " + info
				break
			}
		}
		if bad == "" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("redisproc: cluster not ok after %v: %s", timeout, bad)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// MasterOf returns the running node that is master of the slot holding
// key, as the running nodes see it, or nil when none is.
func (c *Cluster) MasterOf(key string) *Server {
	c.t.Helper()
	for _, s := range c.Nodes {
		if s.PID() == 0 {
			continue
		}
		cl := s.Client()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		slot, err := cl.ClusterKeySlot(ctx, key).Result()
		var shards []string
		if err == nil {
			var nodes string
			nodes, err = cl.ClusterNodes(ctx).Result()
			shards = strings.Split(nodes, "\n")
		}
		cancel()
		_ = cl.Close()
		if err != nil {
			continue
		}
		for _, line := range shards {
			f := strings.Fields(line)
			if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
				continue
			}
			for _, r := range f[8:] {
				lo, hi, ok := strings.Cut(r, "-")
				if !ok {
					hi = lo
				}
				l, err1 := strconv.ParseInt(lo, 10, 64)
				h, err2 := strconv.ParseInt(hi, 10, 64)
				if err1 == nil && err2 == nil && slot >= l && slot <= h {
					addr, _, _ := strings.Cut(f[1], "@")
					for _, n := range c.Nodes {
						if n.Addr == addr && n.PID() != 0 {
							return n
						}
					}
				}
			}
		}
		return nil
	}
	return nil
}

// info runs a command that returns text on a fresh connection, returning
// the error's text when it fails.
func (s *Server) info(args ...any) string {
	cl := s.Client()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	v, err := cl.Do(ctx, args...).Text()
	if err != nil {
		return err.Error()
	}
	return v
}
