package sqlite

import (
	"context"
	"sync"
	"time"
)

// WatchInterval is how often the store looks for writes made by another
// process on the same file (a `foundry proposals approve` next to a running
// server), so that long polls and subscriptions hear of them too.
const WatchInterval = 200 * time.Millisecond

// watcher remembers the feed position and the cursors this process already
// announced, so only other processes' writes are announced again.
type watcher struct {
	mu   sync.Mutex
	last int64
	own  map[int64]bool
}

func (w *watcher) mine(cursor int64) {
	w.mu.Lock()
	w.own[cursor] = true
	w.mu.Unlock()
}

// watch runs until Close: each tick it reads the events after the last one
// seen and rings the doorbell for those another process wrote.
func (s *Store) watch() {
	defer close(s.watchDone)
	ctx := context.Background()
	t := time.NewTicker(WatchInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		s.w8.mu.Lock()
		last := s.w8.last
		s.w8.mu.Unlock()
		rows, err := s.R.QueryContext(ctx, `SELECT cursor, resource_type, resource_id FROM events WHERE cursor > ? ORDER BY cursor LIMIT 1000`, last)
		if err != nil {
			continue // closed or busy: the next tick tries again
		}
		type ev struct{ typ, id string }
		var foreign []ev
		s.w8.mu.Lock()
		for rows.Next() {
			var c int64
			var e ev
			if rows.Scan(&c, &e.typ, &e.id) != nil {
				break
			}
			if !s.w8.own[c] {
				foreign = append(foreign, e)
			}
			delete(s.w8.own, c)
			s.w8.last = c
		}
		s.w8.mu.Unlock()
		rows.Close()
		for _, e := range foreign {
			s.Hub.Notify(e.typ, e.id)
		}
	}
}
