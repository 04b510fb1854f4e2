package memstore

// sweepChunk is the number of entries Sweep visits per lock hold;
// checks on the shard wait at most that long.
const sweepChunk = 256

// Sweep reclaims every state expired by the store's time (its most recent
// check's instant), compacts sliding logs and shrinks mostly empty tables,
// shard by shard, holding a lock for a few hundred entries at a time.
// Checks reclaim on their own as new keys arrive; a store that stops
// receiving them returns its memory by calling Sweep on a ticker.
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
