package memstore

// sweepChunk is the number of entries Sweep visits per lock hold;
// checks on the shard wait at most that long.
const sweepChunk = 256

// Sweep reclaims every state that has expired by the store's time (the
// instant of its most recent check, give or take a millisecond: see
// package doc), compacts sliding logs, and rebuilds the tables that
// have become mostly empty so their memory can be collected. It runs on the
// calling goroutine, shard by shard, holding a shard's lock for at most a
// few hundred entries at a time, so checks proceed meanwhile. Checks
// reclaim expired state incrementally on their own, so Sweep matters only
// for a store that stops receiving new keys and should still return the
// memory of expired ones: such a program calls it from a goroutine of its
// own, on a ticker. Concurrent calls run one after the other.
func (s *Store) Sweep() {
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
			s.keys.Add(-int64(t.sweep(&sh.mu, &s.latest, sweepChunk)))
			if t.size() == 0 {
				sh.tabs[j] = nil // the table's memory goes with it
			} else {
				t.shrink()
			}
		}
		sh.mu.Unlock()
	}
}
