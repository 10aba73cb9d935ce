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
// announced, so only other processes' writes are announced again. The writer
// marks its cursors in own and holds mu until its COMMIT has succeeded or the
// marks are undone (see Store.commit), so the watcher decides whose an event
// is only under mu, after reading it.
type watcher struct {
	mu   sync.Mutex
	last int64          // the last cursor seen; only the watcher moves it
	own  map[int64]bool // cursors this process announces itself
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
		type ev struct {
			cursor  int64
			typ, id string
		}
		var seen []ev
		for rows.Next() {
			var e ev
			if rows.Scan(&e.cursor, &e.typ, &e.id) != nil {
				break
			}
			seen = append(seen, e)
		}
		rows.Close()
		var foreign []ev
		s.w8.mu.Lock()
		for _, e := range seen {
			if !s.w8.own[e.cursor] {
				foreign = append(foreign, e)
			}
			delete(s.w8.own, e.cursor)
			s.w8.last = e.cursor
		}
		s.w8.mu.Unlock()
		for _, e := range foreign {
			s.Hub.Notify(e.typ, e.id)
		}
	}
}
