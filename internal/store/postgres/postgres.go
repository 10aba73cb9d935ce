// Package postgres is Foundry's scale-out store: several stateless nodes
// share one PostgreSQL database. Every guarded write is one read-committed
// transaction around store.Guarded, which locks the Note/Room row (SELECT …
// FOR UPDATE) before it looks the idempotency key up, so two nodes handling
// the same key serialize and the second replays. The transaction is
// pipelined (pipeline.go): a small edit costs three round trips. Every node
// follows the event feed on one dedicated connection (follow.go), woken by
// the other nodes' batched NOTIFY doorbells, and rings its local hub for
// their writes, so a waiter on any node wakes.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"foundry/internal/events"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// notifyChannel is the LISTEN/NOTIFY channel of the doorbells (follow.go);
// payloads are "<type>:<id>".
const notifyChannel = "foundry_events"

const (
	maxOpenConns = 16 // per node; plus the follower's and the ringer's connections
	// migrateLock serializes whole Migrate calls, and first-start bootstrap,
	// across nodes. It must differ from the key Migrate itself takes per
	// migration (7204301), which is taken on another connection while this
	// one is held.
	migrateLock = store.MigrationLock
	maxBackoff  = 5 * time.Second
	// Serialization failures and deadlocks are retried this many times.
	maxRetries = 5
)

// Bounds on every connection of the pool (a connection string may set its
// own). A write waits at most LockTimeout for a row lock, e.g. a Note's
// held by another node's write, and is then refused as busy; no statement
// runs longer than StatementTimeout; a transaction left idle (its caller
// stuck between statements) is ended by the server after IdleInTxTimeout,
// which releases its locks.
const (
	LockTimeout      = 5 * time.Second
	StatementTimeout = 15 * time.Second
	IdleInTxTimeout  = 15 * time.Second
)

// errPanic answers the caller whose write panicked: the transaction was
// rolled back and the process goes on.
var errPanic = errors.New("internal error: the write failed and was rolled back")

// Store is the PostgreSQL implementation of store.Store.
type Store struct {
	store.Base
	db  *sql.DB
	cfg *pgx.ConnConfig // the one parsed URL: the pool and the follower both use it

	feed      *feed
	bell      *bell
	stop      context.CancelFunc // stops the follower and the ringer
	following chan struct{}      // closed when the follower goroutine has exited
	ringing   chan struct{}      // closed when the ringer goroutine has exited
	ringerPID atomic.Uint32      // the ringer's backend, whose doorbells the follower ignores
	closeOnce sync.Once
	closeErr  error
	pruner    *store.Pruner

	// BenchmarkNotify only: each write sends NOTIFY in its transaction, as
	// earlier releases did, instead of ringing the doorbell; or rings none.
	notifyPerWrite, noBell bool
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string; runtime parameters such as search_path=… in it apply to
// every connection, the follower's included), applies migrations and starts
// following the event feed for other nodes' writes.
func Open(ctx context.Context, url string) (*Store, error) {
	return OpenWith(ctx, url, Options{})
}

// Options tune a PostgreSQL store.
type Options struct {
	// Retention: how long idempotency keys and events are kept, and how
	// often the background pruner runs (zero: the defaults of
	// store.Retention). Every node prunes; pruning twice is harmless.
	Retention store.Retention

	// dial, if set, opens every connection of the pool (tests count round
	// trips with it).
	dial pgconn.DialFunc
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse connection string: %w", err)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "foundry"
	}
	for k, v := range map[string]time.Duration{
		"lock_timeout":                        LockTimeout,
		"statement_timeout":                   StatementTimeout,
		"idle_in_transaction_session_timeout": IdleInTxTimeout,
	} {
		if cfg.RuntimeParams[k] == "" {
			cfg.RuntimeParams[k] = fmt.Sprint(v.Milliseconds())
		}
	}

	// Every connection is pgx's stdlib one; a guarded write's transaction
	// pipelines its statements over it (pipeline.go).
	poolCfg := cfg.Copy()
	if opts.dial != nil {
		poolCfg.DialFunc = opts.dial
	}
	db := sql.OpenDB(connector{inner: stdlib.GetConnector(*poolCfg)})
	db.SetMaxOpenConns(maxOpenConns)
	db.SetMaxIdleConns(maxOpenConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	db.SetConnMaxLifetime(30 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}

	// Find the feed's end before Open returns: a write committed by another
	// node after Open must reach this node's waiters.
	conn, err := followConn(ctx, cfg)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: follow the event feed: %w", err)
	}
	hi, err := lastCursor(ctx, conn)
	if err != nil {
		closeConn(conn)
		db.Close()
		return nil, fmt.Errorf("postgres: follow the event feed: %w", err)
	}
	lctx, stop := context.WithCancel(context.Background())
	s := &Store{db: db, cfg: cfg, feed: newFeed(hi), bell: newBell(), stop: stop, following: make(chan struct{}), ringing: make(chan struct{})}
	s.Base = store.Base{R: db, D: store.Postgres, Hub: events.NewHub(), Tx: s.tx, Retention: opts.Retention}
	go s.follower(lctx, conn)
	go s.ringer(lctx)
	s.pruner = s.StartPruner() // plain short transactions, one per batch
	return s, nil
}

// migrate runs store.Migrate under a session advisory lock, so nodes starting
// together on a fresh database don't race on its CREATE TABLE IF NOT EXISTS
// (which PostgreSQL does not make safe under concurrency).
func migrate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Another node may migrate for longer than a write may wait for a lock:
	// this one wait is unbounded (the connection goes back to the pool with
	// its bounds reset).
	for _, p := range []string{"lock_timeout", "statement_timeout"} {
		if _, err := conn.ExecContext(ctx, `SET `+p+` = 0`); err != nil {
			return err
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `RESET `+p)
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock)
	if err := store.Migrate(ctx, db, store.Postgres); err != nil {
		return err
	}
	ensureTitleIndex(ctx, conn)
	return nil
}

// Guarded runs the guarded write in its own transaction, rings the local
// hub and this node's doorbell; other nodes read the write from the event
// feed (follow.go). The store's
// errors (conflict, key reused, not found, a refused Apply) pass through
// unchanged.
func (s *Store) Guarded(ctx context.Context, m store.Mutation) (store.Outcome, error) {
	for attempt := 1; ; attempt++ {
		var out store.Outcome
		var ev *store.Event
		err := s.run(withPipeline(ctx), func(tx *sql.Tx) error {
			var err error
			out, ev, err = store.Guarded(ctx, tx, store.Postgres, m, time.Now())
			if err != nil || ev == nil {
				return err
			}
			s.feed.mark(ev.Cursor) // this node rings its own hub below
			if s.notifyPerWrite {
				_, err = tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, ev.Type+":"+ev.ID)
			}
			return err
		})
		if err != nil && ev != nil {
			s.feed.unmark(ev.Cursor)
		}
		if err != nil {
			if attempt <= maxRetries && retryable(err, attempt, m.CreateIfMissing) && ctx.Err() == nil {
				if err := sleep(ctx, time.Duration(attempt)*time.Duration(1+rand.IntN(10))*time.Millisecond); err != nil {
					return store.Outcome{}, err
				}
				continue
			}
			return store.Outcome{}, busy(ctx, err, m.Type+"_id")
		}
		if ev != nil {
			s.Hub.Notify(ev.Type, ev.ID)
			if !s.notifyPerWrite && !s.noBell {
				s.bell.add(ev.Type, ev.ID)
			}
		}
		return out, nil
	}
}

// retryable reports whether running the whole transaction again may succeed:
// a serialization failure or deadlock (rolled back by the server), or, once,
// a unique violation. The latter is what the loser of two concurrent creates
// of the same resource gets: its key lookup ran before the winner committed,
// and the insert then hit the winner's row. Run again, it finds the winner's
// key and replays (or, without a matching key, gets the same error back).
// A create-if-missing finds the winner's row when run again, so it may
// always be retried.
func retryable(err error, attempt int, createIfMissing bool) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return true
	case "23505": // unique_violation
		return attempt == 1 || createIfMissing
	}
	return false
}

// busy turns a lock wait or statement that ran out of time into a refusal
// the caller can act on (nothing was written: resending the same call is
// safe); other errors pass through.
func busy(ctx context.Context, err error, field string) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || ctx.Err() != nil {
		return err
	}
	switch pe.Code {
	case "55P03", "57014": // lock_not_available (lock_timeout), query_canceled (statement_timeout)
	default:
		return err
	}
	return problem.New("resource_busy", field,
		"another write held this resource for longer than %s, so this one was not made and nothing was written; resend the same call (same idempotency_key) in a moment",
		LockTimeout).With("retry_after", 1)
}

// tx is Base's write path: one plain transaction.
func (s *Store) tx(ctx context.Context, fn func(q store.Querier) error) error {
	return busy(ctx, s.run(ctx, func(tx *sql.Tx) error { return fn(tx) }), "")
}

// run runs fn in a read-committed transaction and commits it. The statements
// run under ctx, but the transaction itself does not: once every statement
// has succeeded, COMMIT is sent and awaited even if ctx ends meanwhile, so a
// committed write is never reported as failed because its caller gave up.
//
// The transaction is rolled back on every other way out, a panic in fn
// included: the panic is logged with its stack and answered as an internal
// error to this caller alone, so no lock outlives a failed write.
func (s *Store) run(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	tx, err := s.db.BeginTx(context.WithoutCancel(ctx), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return err
	}
	// After Commit this is a no-op (sql.ErrTxDone). Otherwise fn's error
	// (or the panic) is the answer; a failed rollback only means the
	// connection is gone, and the server then rolls back by itself.
	defer tx.Rollback()
	defer func() {
		if v := recover(); v != nil {
			slog.ErrorContext(ctx, "postgres: a write panicked; its transaction is rolled back", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = errPanic
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return tx.Commit()
}

func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.Close(ctx)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the follower and the ringer, waits for them, and closes the
// pool.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.pruner.Stop()
		s.stop()
		<-s.following
		<-s.ringing
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

// SQLDB is the store's connection pool, for its statistics (sql.DBStats:
// connections open, in use and idle, waits for one); nothing writes
// through it but the store.
func (s *Store) SQLDB() *sql.DB { return s.db }
