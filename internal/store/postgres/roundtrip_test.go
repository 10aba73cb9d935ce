package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"foundry/internal/problem"
	"foundry/internal/store"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/storetest"
)

// tripCounter counts round trips: each time a connection sends after it
// has received (or sends first), the client waits for the server once more.
type tripCounter struct{ n atomic.Int64 }

func (tc *tripCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, tc: tc, readLast: true}, nil
}

type countingConn struct {
	net.Conn
	tc       *tripCounter
	mu       sync.Mutex
	readLast bool
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if c.readLast {
		c.tc.n.Add(1)
		c.readLast = false
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.readLast = true
		c.mu.Unlock()
	}
	return n, err
}

func openCounted(t *testing.T) (*Store, *tripCounter) {
	t.Helper()
	u, _ := pgtest.Schema(t)
	tc := &tripCounter{}
	s, err := OpenWith(context.Background(), u, Options{Retention: store.Retention{Every: -1}, dial: tc.dial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, tc
}

// trips runs fn and answers how many round trips it took.
func trips(t *testing.T, tc *tripCounter, fn func() error) int64 {
	t.Helper()
	before := tc.n.Load()
	if err := fn(); err != nil {
		t.Fatal(err)
	}
	return tc.n.Load() - before
}

// A small guarded edit costs at most three round trips: BEGIN with the
// locking read and the key lookup; the writes with the event; the
// notification with COMMIT.
func TestGuardedRoundTrips(t *testing.T) {
	s, tc := openCounted(t)
	ctx := context.Background()
	ws := storetest.Seed(t, s)
	id := storetest.Create(t, s, ws)
	v := int64(1)
	edit := func(key string) error {
		out, err := s.Guarded(ctx, storetest.AppendLine(ws, id, key, v, "x"))
		if err == nil && !out.Replayed {
			v = out.Version
		}
		return err
	}
	// Warm up: the first use of each statement on a connection prepares it.
	for i := range 3 {
		trips(t, tc, func() error { return edit(fmt.Sprintf("warm-%d", i)) })
		trips(t, tc, func() error { return edit(fmt.Sprintf("warm-%d", i)) })
	}
	for i := range 5 {
		key := fmt.Sprintf("edit-%d", i)
		if n := trips(t, tc, func() error { return edit(key) }); n > 3 {
			t.Errorf("edit %d took %d round trips, want at most 3", i, n)
		}
		// The same call again replays: lock and key, the event's cursor, COMMIT.
		if n := trips(t, tc, func() error { return edit(key) }); n > 3 {
			t.Errorf("replay %d took %d round trips, want at most 3", i, n)
		}
	}
	// An edit without a key (people's acts) costs no more.
	m := storetest.AppendLine(ws, id, "", v, "y")
	if n := trips(t, tc, func() error { _, err := s.Guarded(ctx, m); return err }); n > 3 {
		t.Errorf("an edit without a key took %d round trips, want at most 3", n)
	}
}

// A queued statement that fails surfaces its own error at the next read,
// and the transaction is rolled back: nothing it queued is committed.
func TestQueuedErrorSurfaces(t *testing.T) {
	s, _ := openCounted(t)
	ctx := context.Background()
	ws := storetest.Seed(t, s)
	id := storetest.Create(t, s, ws)
	err := s.run(withPipeline(ctx), func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE resources SET title = 'changed' WHERE id = $1`, id); err != nil {
			return err
		}
		// Fails on the server; the call itself only queues it.
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_us) VALUES ($1, 'dup', 0)`, ws); err != nil {
			t.Fatalf("a queued statement answered %v before it was sent", err)
		}
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" {
			t.Fatalf("the read after a failed statement answered %v, want its unique violation", err)
		}
		// Later statements answer the same error without being sent.
		if _, err2 := tx.ExecContext(ctx, `SELECT 1`); !errors.As(err2, &pe) || pe.Code != "23505" {
			t.Fatalf("a statement after the failure answered %v", err2)
		}
		return err
	})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		t.Fatalf("run answered %v, want the unique violation", err)
	}
	r, err := s.Get(ctx, store.TypeNote, id)
	if err != nil || r.Title != "T" {
		t.Fatalf("after the failed transaction: title %q, %v; want the old title", r.Title, err)
	}
	// The connection is clean again: a write goes through.
	if _, err := s.Guarded(ctx, storetest.AppendLine(ws, id, "after", 1, "a")); err != nil {
		t.Fatal(err)
	}
}

// A failure at COMMIT (a deferred constraint) is Commit's answer, and
// nothing is committed.
func TestCommitErrorSurfaces(t *testing.T) {
	s, _ := openCounted(t)
	ctx := context.Background()
	ws := storetest.Seed(t, s)
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE deferred_check (k INT UNIQUE DEFERRABLE INITIALLY DEFERRED)`); err != nil {
		t.Fatal(err)
	}
	err := s.run(withPipeline(ctx), func(tx *sql.Tx) error {
		for range 2 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO deferred_check VALUES (1)`); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE workspaces SET name = 'changed' WHERE id = $1`, ws)
		return err
	})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		t.Fatalf("commit answered %v, want the deferred unique violation", err)
	}
	var name string
	if err := s.db.QueryRowContext(ctx, `SELECT name FROM workspaces WHERE id = $1`, ws).Scan(&name); err != nil || name != "test" {
		t.Fatalf("workspace name %q, %v after a failed commit; want the old name", name, err)
	}
}

// holdLock locks the Note's row from another connection until the test ends
// or the returned func is called.
func holdLock(t *testing.T, u, id string) func() {
	t.Helper()
	ctx := context.Background()
	holder, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM resources WHERE type = 'note' AND id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			tx.Rollback(ctx)
			holder.Close(ctx)
		})
	}
	t.Cleanup(release)
	return release
}

// A statement that runs out of statement_timeout inside a pipelined write
// is refused as busy, like a lock wait that runs out of lock_timeout.
func TestPipelinedStatementTimeout(t *testing.T) {
	u, _ := pgtest.Schema(t)
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := pu.Query()
	q.Set("lock_timeout", "10000")
	q.Set("statement_timeout", "200")
	pu.RawQuery = q.Encode()
	// Opening runs its own statements under the same 200 ms limit, which
	// a loaded machine can exceed: opening is tried again a few times
	// (what is tested is the write below).
	var s *Store
	for try := 1; ; try++ {
		s, err = OpenWith(context.Background(), pu.String(), Options{Retention: store.Retention{Every: -1}})
		if err == nil {
			break
		}
		if try == 5 || !strings.Contains(err.Error(), "57014") {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	defer s.Close()
	ws := storetest.Seed(t, s)
	id := storetest.Create(t, s, ws)
	release := holdLock(t, u, id)
	_, err = s.Guarded(context.Background(), storetest.AppendLine(ws, id, "key-slow", 1, "s"))
	var p *problem.Problem
	if !errors.As(err, &p) || p.Code != "resource_busy" {
		t.Fatalf("a write whose lock wait ran out of statement_timeout answered %v, want resource_busy", err)
	}
	release()
	if out, err := s.Guarded(context.Background(), storetest.AppendLine(ws, id, "key-slow", 1, "s")); err != nil || out.Replayed || out.Version != 2 {
		t.Fatalf("resend: %+v, %v", out, err)
	}
}

// A write whose caller gives up while it waits leaves no broken connection
// in the pool: the writes after it go through.
func TestPipelinedCallerGivesUp(t *testing.T) {
	u, _ := pgtest.Schema(t)
	s, err := OpenWith(context.Background(), u, Options{Retention: store.Retention{Every: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws := storetest.Seed(t, s)
	id := storetest.Create(t, s, ws)
	release := holdLock(t, u, id)
	for i := range maxOpenConns + 2 { // more than the pool holds
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := s.Guarded(ctx, storetest.AppendLine(ws, id, fmt.Sprintf("key-gave-up-%d", i), 1, "g"))
		cancel()
		if err == nil {
			t.Fatalf("write %d went through while the row was locked", i)
		}
	}
	release()
	v := int64(1)
	for i := range maxOpenConns + 2 {
		out, err := s.Guarded(context.Background(), storetest.AppendLine(ws, id, fmt.Sprintf("key-after-%d", i), v, "a"))
		if err != nil {
			t.Fatalf("write %d after the callers gave up: %v", i, err)
		}
		v = out.Version
	}
	if r, err := s.Get(context.Background(), store.TypeNote, id); err != nil || r.Version != v {
		t.Fatalf("version %d, %v; want %d", r.Version, err, v)
	}
}
