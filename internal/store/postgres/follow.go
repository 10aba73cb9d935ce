package postgres

// Every node follows the event feed: it reads the events after the newest
// one it has seen, on one dedicated connection, and rings its local hub for
// those another node wrote. A write sends no NOTIFY in its transaction: a
// NOTIFY takes a database-wide lock at commit that serializes every
// notifying transaction (BenchmarkNotify measures it). Instead each node
// rings a doorbell after its writes commit: one NOTIFY transaction per
// batch, at most one per bellSpacing, naming every resource written since
// the last. Followers read the feed when the doorbell rings, and every
// FollowInterval anyway, so a lost doorbell (a node that stopped between
// its commit and its NOTIFY) delays a wake by at most that long and loses
// none.
//
// Cursors come from a sequence, so they are handed out in insert order but
// committed in commit order: a cursor below the newest one seen may still be
// in flight. The follower remembers such gaps and looks for them again each
// time until they show up, or until gapWait has passed (then the
// transaction that took the cursor has been rolled back or ended by the
// server's bounds).

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// FollowInterval is how often every node reads the feed for other
	// nodes' writes even when no doorbell rings: a waiter on one node hears
	// of a write on another within about this long at worst.
	FollowInterval = 250 * time.Millisecond
	// bellSpacing is the least time between two doorbells of one node;
	// maxBell caps the resources one doorbell names.
	bellSpacing = 10 * time.Millisecond
	maxBell     = 1000
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

// follower follows the feed until ctx ends: it reads it, then waits for a
// doorbell or FollowInterval, whichever comes first. On a connection error
// it reconnects with backoff and goes on from where it was, so a write made
// meanwhile is still announced.
func (s *Store) follower(ctx context.Context, conn *pgx.Conn) {
	defer close(s.following)
	backoff := 50 * time.Millisecond
	var last time.Time
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
		// Doorbells come in bursts (one per node per batch): read the
		// feed at most once per bellSpacing.
		if sleep(ctx, time.Until(last.Add(bellSpacing))) != nil {
			closeConn(conn)
			return
		}
		last = time.Now()
		err := s.poll(ctx, conn)
		if err == nil {
			err = s.awaitBell(ctx, conn)
		}
		if ctx.Err() != nil {
			closeConn(conn)
			return
		}
		if err != nil {
			closeConn(conn)
			conn = nil
		}
	}
}

// awaitBell waits for another node's doorbell, or FollowInterval. This
// node's own doorbells are not for it: its hub was rung by its writers.
func (s *Store) awaitBell(ctx context.Context, conn *pgx.Conn) error {
	wctx, cancel := context.WithTimeout(ctx, FollowInterval)
	defer cancel()
	for {
		n, err := conn.WaitForNotification(wctx)
		if errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed() {
			return nil
		}
		if err != nil || n.PID != s.ringerPID.Load() {
			return err
		}
	}
}

// followConn opens the follower's connection and listens for doorbells.
func followConn(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{notifyChannel}.Sanitize()); err != nil {
		closeConn(conn)
		return nil, err
	}
	return conn, nil
}

// bell collects the resources this node wrote since its last doorbell.
type bell struct {
	mu      sync.Mutex
	pending map[string]bool // "<type>:<id>"
	ring    chan struct{}   // holds one token while pending is not empty
}

func newBell() *bell { return &bell{pending: map[string]bool{}, ring: make(chan struct{}, 1)} }

// add notes a committed write of (typ, id).
func (b *bell) add(typ, id string) {
	b.mu.Lock()
	if len(b.pending) < maxBell {
		b.pending[typ+":"+id] = true
	}
	b.mu.Unlock()
	select {
	case b.ring <- struct{}{}:
	default:
	}
}

func (b *bell) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.pending))
	for k := range b.pending {
		out = append(out, k)
	}
	clear(b.pending)
	return out
}

// ringer sends this node's doorbells until ctx ends, on a connection of
// its own: one NOTIFY transaction for everything written since the last,
// one payload per resource ("<type>:<id>", the payload earlier releases
// listen for). A doorbell that fails is not resent: followers read the
// feed anyway.
func (s *Store) ringer(ctx context.Context) {
	defer close(s.ringing)
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			closeConn(conn)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.bell.ring:
		}
		if keys := s.bell.take(); len(keys) > 0 {
			nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			var err error
			if conn == nil {
				if conn, err = pgx.ConnectConfig(nctx, s.cfg.Copy()); err == nil {
					s.ringerPID.Store(conn.PgConn().PID())
				}
			}
			if err == nil {
				_, err = conn.Exec(nctx, `SELECT pg_notify($1, k) FROM unnest($2::text[]) AS k`, notifyChannel, keys)
			}
			cancel()
			if err != nil {
				if conn != nil {
					closeConn(conn)
					conn = nil
				}
				if ctx.Err() == nil {
					slog.Debug("postgres: a doorbell was not sent; other nodes read the feed on their next interval", "err", err)
				}
			}
		}
		if sleep(ctx, bellSpacing) != nil {
			return
		}
	}
}
