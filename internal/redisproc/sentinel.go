package redisproc

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SentinelGroup is a master, its replicas and the Sentinels that watch them,
// all started by a test.
type SentinelGroup struct {
	// MasterName is the name the Sentinels monitor the master under.
	MasterName string
	// Data holds the master (first) and its replicas, in start order; after
	// a failover another of them is master.
	Data []*Server
	// Sentinels are the Sentinel processes.
	Sentinels []*Server
	t         testing.TB
}

// StartSentinel starts a master, replicas replicas of it, and sentinels
// Sentinels with a quorum of sentinels/2+1, which consider the master down
// after downAfter without an answer. It waits until every Sentinel knows the
// master and every replica is in sync. Everything is stopped when t ends.
func StartSentinel(t testing.TB, replicas, sentinels int, downAfter time.Duration) *SentinelGroup {
	t.Helper()
	g := &SentinelGroup{MasterName: "rlmaster", t: t}
	master := Start(t, "repl-diskless-sync-delay 0")
	g.Data = append(g.Data, master)
	for range replicas {
		r := Start(t, "replicaof 127.0.0.1 "+strconv.Itoa(master.Port))
		g.Data = append(g.Data, r)
	}
	ms := strconv.FormatInt(downAfter.Milliseconds(), 10)
	for range sentinels {
		s := start(t, true, []string{
			"sentinel monitor " + g.MasterName + " 127.0.0.1 " + strconv.Itoa(master.Port) + " " + strconv.Itoa(sentinels/2+1),
			"sentinel down-after-milliseconds " + g.MasterName + " " + ms,
			"sentinel failover-timeout " + g.MasterName + " " + strconv.FormatInt(4*downAfter.Milliseconds(), 10),
			"sentinel parallel-syncs " + g.MasterName + " 1",
		})
		g.Sentinels = append(g.Sentinels, s)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready := true
		for _, r := range g.Data[1:] {
			if !strings.Contains(r.info("INFO", "replication"), "master_link_status:up") {
				ready = false
			}
		}
		for _, s := range g.Sentinels {
			info := s.info("INFO", "sentinel")
			if !strings.Contains(info, "status=ok") || !strings.Contains(info, "slaves="+strconv.Itoa(replicas)) || !strings.Contains(info, "sentinels="+strconv.Itoa(sentinels)) {
				ready = false
			}
		}
		if ready {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("redisproc: sentinel group not ready after 30s: %s", g.Sentinels[0].info("INFO", "sentinel"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SentinelAddrs returns the Sentinels' addresses, for redis.FailoverOptions.
func (g *SentinelGroup) SentinelAddrs() []string { return addrsOf(g.Sentinels) }

// Master returns the data server the first Sentinel names as master, or nil
// when it names none of them.
func (g *SentinelGroup) Master() *Server {
	cl := g.Sentinels[0].Client()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	addr, err := cl.Do(ctx, "SENTINEL", "get-master-addr-by-name", g.MasterName).StringSlice()
	if err != nil || len(addr) != 2 {
		return nil
	}
	for _, s := range g.Data {
		if s.Addr == addr[0]+":"+addr[1] {
			return s
		}
	}
	return nil
}
