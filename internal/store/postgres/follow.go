package postgres

// Every node follows the event feed: it reads the events after the newest
// one it has seen, every FollowInterval, on one dedicated connection, and
// rings its local hub for those another node wrote. Writes send no NOTIFY:
// a NOTIFY takes a database-wide lock at commit that serializes every
// notifying transaction, and the events table already says everything a
// waiter needs (BenchmarkNotify measures both).
//
// Cursors come from a sequence, so they are handed out in insert order but
// committed in commit order: a cursor below the newest one seen may still be
// in flight. The follower remembers such gaps and looks for them again each
// time until they show up, or until gapWait has passed (then the
// transaction that took the cursor has been rolled back or ended by the
// server's bounds).

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// FollowInterval is how often every node reads the feed for other
	// nodes' writes: a waiter on one node hears of a write on another
	// within about this long.
	FollowInterval = 100 * time.Millisecond
	// gapWait is how long a missing cursor is looked for. A transaction
	// that took it is idle (IdleInTxTimeout) or committing
	// (StatementTimeout) for at most this long before the server ends it.
	gapWait = IdleInTxTimeout + StatementTimeout
	// maxGaps bounds the missing cursors remembered (the oldest are
	// dropped first); followBatch is the most events read per query.
	maxGaps     = 1000
	followBatch = 1000
)

// feed is the follower's position in the event feed.
type feed struct {
	mu   sync.Mutex
	hi   int64               // the newest cursor seen
	gaps map[int64]time.Time // cursors below hi not seen yet, and since when
	own  map[int64]bool      // cursors of this node's writes: its hub is rung by the writer
}

func newFeed(hi int64) *feed {
	return &feed{hi: hi, gaps: map[int64]time.Time{}, own: map[int64]bool{}}
}

// mark records a cursor this node's write is about to commit; unmark
// forgets it again if the write did not commit.
func (f *feed) mark(c int64) {
	f.mu.Lock()
	f.own[c] = true
	f.mu.Unlock()
}

func (f *feed) unmark(c int64) {
	f.mu.Lock()
	delete(f.own, c)
	f.mu.Unlock()
}

// want answers the query's arguments: the newest cursor seen and the gaps.
func (f *feed) want(now time.Time) (int64, []int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	gaps := make([]int64, 0, len(f.gaps))
	for c, since := range f.gaps {
		if now.Sub(since) > gapWait {
			delete(f.gaps, c)
			continue
		}
		gaps = append(gaps, c)
	}
	return f.hi, gaps
}

type feedEvent struct {
	cursor  int64
	typ, id string
}

// saw records events read from the feed (in cursor order) and answers those
// another node wrote.
func (f *feed) saw(evs []feedEvent, now time.Time) []feedEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var foreign []feedEvent
	for _, e := range evs {
		switch {
		case e.cursor > f.hi:
			for c := max(f.hi+1, e.cursor-maxGaps); c < e.cursor; c++ {
				f.gaps[c] = now
			}
			f.hi = e.cursor
		case f.gaps[e.cursor].IsZero():
			continue // seen already
		default:
			delete(f.gaps, e.cursor)
		}
		if f.own[e.cursor] {
			delete(f.own, e.cursor)
			continue
		}
		foreign = append(foreign, e)
	}
	for len(f.gaps) > maxGaps {
		oldest := int64(-1)
		for c := range f.gaps {
			if oldest < 0 || c < oldest {
				oldest = c
			}
		}
		delete(f.gaps, oldest)
	}
	return foreign
}

// followConn opens the follower's connection.
func followConn(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	return pgx.ConnectConfig(ctx, cfg.Copy())
}

// lastCursor is the newest cursor in the feed.
func lastCursor(ctx context.Context, conn *pgx.Conn) (int64, error) {
	var c int64
	err := conn.QueryRow(ctx, `SELECT COALESCE(MAX(cursor), 0) FROM events`).Scan(&c)
	return c, err
}

// poll reads what is new in the feed once (more than once if a read came
// back full) and rings the hub for other nodes' writes.
func (s *Store) poll(ctx context.Context, conn *pgx.Conn) error {
	for {
		now := time.Now()
		hi, gaps := s.feed.want(now)
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rows, err := conn.Query(qctx, `SELECT cursor, resource_type, resource_id FROM events WHERE cursor > $1 OR cursor = ANY($2) ORDER BY cursor LIMIT $3`, hi, gaps, followBatch)
		if err != nil {
			cancel()
			return err
		}
		var evs []feedEvent
		var e feedEvent
		_, err = pgx.ForEachRow(rows, []any{&e.cursor, &e.typ, &e.id}, func() error {
			evs = append(evs, e)
			return nil
		})
		cancel()
		if err != nil {
			return err
		}
		rung := map[[2]string]bool{}
		for _, e := range s.feed.saw(evs, now) {
			if k := [2]string{e.typ, e.id}; !rung[k] {
				rung[k] = true
				s.Hub.Notify(e.typ, e.id)
			}
		}
		if len(evs) < followBatch {
			return nil
		}
	}
}

// follower follows the feed until ctx ends. On a connection error it
// reconnects with backoff and goes on from where it was, so a write made
// meanwhile is still announced.
func (s *Store) follower(ctx context.Context, conn *pgx.Conn) {
	defer close(s.following)
	backoff := 50 * time.Millisecond
	t := time.NewTicker(FollowInterval)
	defer t.Stop()
	for {
		if conn == nil {
			c, err := followConn(ctx, s.cfg)
			if err != nil {
				if ctx.Err() != nil || sleep(ctx, backoff+time.Duration(rand.Int64N(int64(backoff)))) != nil {
					return
				}
				backoff = min(2*backoff, maxBackoff)
				continue
			}
			conn, backoff = c, 50*time.Millisecond
		}
		err := s.poll(ctx, conn)
		if err != nil && ctx.Err() == nil {
			closeConn(conn)
			conn = nil
			continue
		}
		select {
		case <-ctx.Done():
			closeConn(conn)
			return
		case <-t.C:
		}
	}
}
