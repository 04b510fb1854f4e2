package memstore

import "time"

// sweepChunk is the number of entries the sweeper visits per lock hold;
// checks on the shard wait at most that long.
const sweepChunk = 256

// sweepLoop runs a sweep every interval until Close.
func (s *Store) sweepLoop() {
	defer close(s.done)
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			if s.sweep(s.stop) {
				return
			}
		}
	}
}

// Sweep reclaims every state that has expired by the store's time (the
// instant of its most recent check, give or take a millisecond: see
// package doc), compacts sliding logs, and rebuilds the tables that
// have become mostly empty so their memory can be collected. It runs on the
// calling goroutine, shard by shard, holding a shard's lock for at most a
// few hundred entries at a time, so checks proceed meanwhile. The background
// sweeper calls it every sweep interval; call it directly when that is
// disabled. Concurrent calls run one after the other.
func (s *Store) Sweep() { s.sweep(nil) }

// sweep visits every shard and reports whether it stopped early because
// stop was closed.
func (s *Store) sweep(stop <-chan struct{}) (stopped bool) {
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j := 0; j < len(sh.tabs); j++ {
			t := sh.tabs[j]
			if t == nil {
				continue
			}
			removed, halted := t.sweep(&sh.mu, &s.latest, sweepChunk, stop)
			s.keys.Add(-int64(removed))
			if halted {
				sh.mu.Unlock()
				return true
			}
			if t.size() == 0 {
				sh.tabs[j] = nil // the table's memory goes with it
			} else {
				t.shrink()
			}
		}
		sh.mu.Unlock()
	}
	return false
}
