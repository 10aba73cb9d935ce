// Package sqlite is Foundry's embedded default store: one SQLite file in WAL
// mode. All writes go through one connection owned by a single goroutine that
// groups concurrent requests into one transaction (group commit): each request
// runs in its own savepoint, and every caller is answered only after COMMIT,
// so one fsync makes a whole batch durable. Reads use a separate pool.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	_ "modernc.org/sqlite" // pure Go: the binary builds and runs without cgo

	"foundry/internal/events"
	"foundry/internal/store"
)

// Options tune durability and batching.
type Options struct {
	// Sync is SQLite's synchronous pragma: "full" (default: an acknowledged
	// write survives a power cut) or "normal" (survives a process crash only).
	Sync string
	// MaxBatch caps how many requests share one commit; 1 turns group commit
	// off (one fsync per write), which benchmarks compare against.
	MaxBatch int
}

// Store is the SQLite implementation of store.Store.
type Store struct {
	store.Base
	w         *sql.DB
	jobs      chan *job
	done      chan struct{} // closed by Close
	stopped   chan struct{} // closed when the writer has exited
	opts      Options
	w8        watcher
	watchDone chan struct{}
}

type job struct {
	ctx   context.Context
	fn    func(q store.Querier) (*store.Event, error)
	errc  chan error
	event *store.Event
}

// Open opens (creating if needed) the database file foundry.db in dir and
// applies migrations.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if opts.Sync == "" {
		opts.Sync = "full"
	}
	if opts.Sync != "full" && opts.Sync != "normal" {
		return nil, fmt.Errorf("sync: %q is not full or normal", opts.Sync)
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	path := filepath.Join(dir, "foundry.db")
	dsn := func(extra ...string) string {
		v := url.Values{}
		v.Add("_pragma", "busy_timeout(10000)")
		v.Add("_pragma", "journal_mode(WAL)")
		v.Add("_pragma", "synchronous("+opts.Sync+")")
		v.Add("_pragma", "foreign_keys(ON)")
		for _, e := range extra {
			v.Add("_pragma", e)
		}
		return "file:" + path + "?" + v.Encode()
	}
	w, err := sql.Open("sqlite", dsn())
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := store.Migrate(ctx, w, store.SQLite); err != nil {
		w.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn("query_only(1)"))
	if err != nil {
		w.Close()
		return nil, err
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	s := &Store{w: w, jobs: make(chan *job, 1024), done: make(chan struct{}), stopped: make(chan struct{}), opts: opts}
	s.Base = store.Base{R: r, D: store.SQLite, Hub: events.NewHub(), Tx: s.tx}
	if err := r.QueryRowContext(ctx, `SELECT COALESCE(MAX(cursor), 0) FROM events`).Scan(&s.w8.last); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	s.w8.own = map[int64]bool{}
	s.watchDone = make(chan struct{})
	go s.writer()
	go s.watch()
	return s, nil
}

// Guarded runs the guarded write in the next group commit.
func (s *Store) Guarded(ctx context.Context, m store.Mutation) (store.Outcome, error) {
	var out store.Outcome
	err := s.submit(ctx, func(q store.Querier) (*store.Event, error) {
		o, ev, err := store.Guarded(ctx, q, store.SQLite, m, time.Now())
		out = o
		return ev, err
	})
	return out, err
}

func (s *Store) tx(ctx context.Context, fn func(q store.Querier) error) error {
	return s.submit(ctx, func(q store.Querier) (*store.Event, error) { return nil, fn(q) })
}

func (s *Store) submit(ctx context.Context, fn func(q store.Querier) (*store.Event, error)) error {
	j := &job{ctx: ctx, fn: fn, errc: make(chan error, 1)}
	select {
	case s.jobs <- j:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return errors.New("store is closed")
	}
	// Once queued, the answer is awaited even if ctx ends: the write may
	// commit, and the caller must not report a failure for a committed write.
	var err error
	select {
	case err = <-j.errc:
	case <-s.stopped:
		select {
		case err = <-j.errc:
		default:
			return errors.New("store is closed")
		}
	}
	if err == nil && j.event != nil {
		s.Hub.Notify(j.event.Type, j.event.ID)
	}
	return err
}

// writer is the only goroutine that writes. It takes whatever is queued (up to
// MaxBatch), runs each job in a savepoint of one transaction, commits once,
// then answers everyone.
func (s *Store) writer() {
	defer close(s.stopped)
	ctx := context.Background()
	raw, err := s.w.Conn(ctx)
	if err != nil {
		panic(fmt.Sprintf("sqlite writer: %v", err)) // Open has just used this pool: it can't be gone
	}
	defer raw.Close()
	conn := &stmtConn{conn: raw, stmts: map[string]*sql.Stmt{}}
	defer conn.close()
	batch := make([]*job, 0, s.opts.MaxBatch)
	errs := make([]error, 0, s.opts.MaxBatch)
	for {
		var j *job
		select {
		case j = <-s.jobs:
		case <-s.done:
			return
		}
		batch = append(batch[:0], j)
	fill:
		for len(batch) < s.opts.MaxBatch {
			select {
			case j := <-s.jobs:
				batch = append(batch, j)
			default:
				break fill
			}
		}
		errs = errs[:0]
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			for _, j := range batch {
				j.errc <- fmt.Errorf("begin: %w", err)
			}
			continue
		}
		for _, j := range batch {
			if err := j.ctx.Err(); err != nil {
				errs = append(errs, err) // the caller gave up before we started: nothing runs
				continue
			}
			errs = append(errs, runSavepoint(ctx, conn, j))
		}
		// Announced by this process after COMMIT; marked before it, while the
		// watcher can't see them yet, so it won't announce them again.
		for i, j := range batch {
			if errs[i] == nil && j.event != nil {
				s.w8.mine(j.event.Cursor)
			}
		}
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			conn.ExecContext(ctx, "ROLLBACK")
			for _, j := range batch {
				j.errc <- fmt.Errorf("commit: %w", err)
			}
			continue
		}
		for i, j := range batch {
			j.errc <- errs[i]
		}
	}
}

// runSavepoint runs one job in its own savepoint: a refusal or fault rolls
// back that job alone, and the batch goes on. The savepoint is released
// before the next job, so one name serves all.
func runSavepoint(ctx context.Context, conn *stmtConn, j *job) error {
	if _, err := conn.ExecContext(ctx, "SAVEPOINT w"); err != nil {
		return err
	}
	ev, err := j.fn(conn)
	if err != nil {
		if _, rbErr := conn.ExecContext(ctx, "ROLLBACK TO w"); rbErr != nil {
			return errors.Join(err, rbErr)
		}
		conn.ExecContext(ctx, "RELEASE w")
		return err
	}
	if _, err := conn.ExecContext(ctx, "RELEASE w"); err != nil {
		return err
	}
	j.event = ev
	return nil
}

// Close stops the writer after the queued jobs and closes the database.
func (s *Store) Close() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	close(s.done)
	<-s.stopped
	if s.watchDone != nil {
		<-s.watchDone
	}
	return errors.Join(s.R.Close(), s.w.Close())
}
