// Package sqlite is Foundry's embedded default store: one SQLite file in WAL
// mode. All writes go through one connection owned by a single goroutine that
// groups concurrent requests into one transaction (group commit): each request
// runs in its own savepoint, and every caller is answered only after COMMIT,
// so one fsync makes a whole batch durable. Reads use a separate pool.
//
// One job's fault never decides another's answer: a job that panics or is
// refused is rolled back to its savepoint and the batch goes on; when SQLite
// rolls the whole transaction back by itself (disk full, I/O error, a failed
// RELEASE that leaves the state unknown), the jobs that had already run are
// answered with an error, because their work went with the transaction, and
// the jobs not yet run get a fresh transaction. Each job runs at most once.
// No statement of a job can commit on its own: the writer's connection
// refuses every commit but the writer's own COMMIT.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	msqlite "modernc.org/sqlite" // pure Go: the binary builds and runs without cgo

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
	// Retention: how long idempotency keys and events are kept, and how
	// often the background pruner runs (zero: the defaults of store.Retention).
	Retention store.Retention
}

// Errors the writer answers with when a write did not get its own answer.
// Neither carries a database message or a panic's text; the writer logs
// those, with the stack of a panic.
var (
	// ErrInternal answers a job that panicked. Its savepoint was rolled back:
	// it wrote nothing, and the rest of its batch went on.
	ErrInternal = errors.New("internal error")
	// ErrNotCommitted answers a job whose transaction did not commit (BEGIN
	// or COMMIT failed, or SQLite rolled it back): as far as SQLite tells,
	// nothing it wrote is in the database, and the same request (with the
	// same idempotency key) can be sent again.
	ErrNotCommitted = errors.New("the write was not committed; nothing of it was stored, and it can be sent again")
)

// Store is the SQLite implementation of store.Store.
type Store struct {
	store.Base
	w         *sql.DB
	wc        *sql.Conn // the writer's connection, taken from w
	jobs      chan *job
	mu        sync.RWMutex  // held by submit to queue a job, by Close to stop queuing
	closed    bool          // set by Close under mu: nothing is queued after
	done      chan struct{} // closed by Close
	stopped   chan struct{} // closed when the writer has exited
	opts      Options
	w8        watcher
	watchDone chan struct{}
	faults    *faults // tests only
	pruner    *store.Pruner
	dir       string // the data folder (blobs.go keeps files in it)
	// blobsIndexed: the blob files of the data folder have index rows
	// (blobs.go, once per process).
	blobsIndexed atomic.Bool

	// Kept by the writer's connection hooks, which SQLite calls on the
	// writer goroutine in the middle of a statement.
	rolledBack atomic.Bool // a whole transaction was rolled back
	committing atomic.Bool // the writer is running its COMMIT

	observe atomic.Pointer[func(jobs int, commit time.Duration)] // ObserveCommits
}

// ObserveCommits makes f hear every group commit the writer runs: how many
// writes it holds and how long its COMMIT took (the fsync that makes them
// durable). f runs on the writer goroutine and must not block; nil stops.
func (s *Store) ObserveCommits(f func(jobs int, commit time.Duration)) {
	if f == nil {
		s.observe.Store(nil)
		return
	}
	s.observe.Store(&f)
}

var _ store.Store = (*Store)(nil)

type job struct {
	ctx      context.Context
	fn       func(q store.Querier) (*store.Event, error)
	errc     chan error
	event    *store.Event
	err      error // the job's answer, sent after COMMIT
	answered bool  // the writer has sent on errc (only the writer reads it)
}

// answer sends the job's answer once; later calls do nothing.
func (j *job) answer(err error) {
	if j.answered {
		return
	}
	j.answered = true
	if err != nil {
		j.event = nil
	}
	j.errc <- err
}

// Open opens (creating if needed) the database file foundry.db in dir and
// applies migrations.
// A data folder (or database file) this user may not write is refused
// with a message that names it and the permission missing, not SQLite's
// "attempt to write a readonly database".
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	// Checked first: SQLite opens a file it may not write read-only without
	// a word, and the first write then fails.
	if err := checkAccess(dir, canWrite); err != nil {
		return nil, err
	}
	s, err := open(ctx, dir, opts, nil)
	if err != nil {
		return nil, explainAccess(dir, err, canWrite)
	}
	return s, nil
}

// SQLite's primary result codes that a missing permission gives.
const (
	sqlitePerm     = 3
	sqliteReadOnly = 8  // 1544 (READONLY_DIRECTORY), 1032 (READONLY_DBMOVED), …
	sqliteCantOpen = 14 // the folder cannot be written, so the file cannot be made
	sqliteAuth     = 23
)

// AccessError is a data folder or file this user may not write.
type AccessError struct {
	Path string // the folder or file
	msg  string
	err  error
}

func (e *AccessError) Error() string { return e.msg }
func (e *AccessError) Unwrap() error { return e.err }

// explainAccess turns an error of opening the data folder dir that comes
// from a missing permission into the AccessError that names the folder or
// file, the user and what Foundry needs; other errors are returned as they
// are.
func explainAccess(dir string, err error, writable func(path string, isDir bool) error) error {
	var coded interface{ Code() int }
	permission := errors.Is(err, fs.ErrPermission)
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case sqlitePerm, sqliteReadOnly, sqliteCantOpen, sqliteAuth:
			permission = true
		}
	}
	if !permission {
		return err
	}
	if aerr := checkAccess(dir, writable); aerr != nil {
		aerr.(*AccessError).err = err
		return aerr
	}
	return err
}

// checkAccess reports, as an *AccessError, what of the data folder dir this
// user cannot write: the folder (or, when it does not exist yet, the folder
// it would be created in), or foundry.db and its -wal and -shm files.
// writable reports why path (a folder or an existing file) cannot be
// written, or nil.
func checkAccess(dir string, writable func(path string, isDir bool) error) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	notWritable := func(err error) string {
		if errors.Is(err, syscall.EROFS) {
			return "is on a read-only file system"
		}
		return fmt.Sprintf("is not writable by this user (uid %d)", os.Getuid())
	}
	need := "Foundry needs to write foundry.db and its -wal and -shm files there"
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		parent := filepath.Dir(abs)
		for {
			if _, err := os.Stat(parent); err == nil || filepath.Dir(parent) == parent {
				break
			}
			parent = filepath.Dir(parent)
		}
		if werr := writable(parent, true); werr != nil {
			return &AccessError{Path: parent, err: werr, msg: fmt.Sprintf("cannot create the data folder %s: %s %s; create the data folder with this user as its owner, or pass --data with a folder this user can write", abs, parent, notWritable(werr))}
		}
		return nil
	}
	if werr := writable(abs, true); werr != nil {
		return &AccessError{Path: abs, err: werr, msg: fmt.Sprintf("data folder %s %s: %s; fix the folder's permissions (e.g. chown -R %d %s) or pass --data with a folder this user can write", abs, notWritable(werr), need, os.Getuid(), abs)}
	}
	for _, name := range []string{"foundry.db", "foundry.db-wal", "foundry.db-shm"} {
		p := filepath.Join(abs, name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if werr := writable(p, false); werr != nil {
			return &AccessError{Path: p, err: werr, msg: fmt.Sprintf("%s %s: %s; fix the file's permissions (e.g. chown %d %s) or run Foundry as the user that owns it", p, notWritable(werr), need, os.Getuid(), p)}
		}
	}
	return nil
}

// canWrite tries what SQLite will do: create a file in the folder, or open
// the file for writing.
func canWrite(path string, isDir bool) error {
	if isDir {
		f, err := os.CreateTemp(path, ".foundry-write-check-*")
		if err != nil {
			return err
		}
		f.Close()
		return os.Remove(f.Name())
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

func open(ctx context.Context, dir string, opts Options, f *faults) (*Store, error) {
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
	if err := createSmallPages(ctx, path); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
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
	// The writer keeps its statement journals in memory (temp_store): each
	// job runs in a savepoint, whose journal holds the original of every
	// page the job changes; past 64 KiB SQLite spills it to a temporary
	// file, which doubled the bytes a small write made the disk write. It
	// only serves to roll a savepoint back inside the open transaction, so
	// crash safety is the WAL's, as before.
	w, err := sql.Open("sqlite", dsn("temp_store(MEMORY)"))
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
	s := &Store{w: w, jobs: make(chan *job, 1024), done: make(chan struct{}), stopped: make(chan struct{}), opts: opts, faults: f, dir: dir}
	if s.wc, err = w.Conn(ctx); err == nil {
		err = s.wc.Raw(s.hook)
	}
	if err == nil {
		err = setCheckpointPages(ctx, s.wc)
	}
	if err != nil {
		if s.wc != nil {
			s.wc.Close()
		}
		w.Close()
		return nil, fmt.Errorf("open the writer's connection to %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn("query_only(1)"))
	if err != nil {
		s.wc.Close()
		w.Close()
		return nil, err
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	s.Base = store.Base{R: r, D: store.SQLite, Hub: events.NewHub(), Tx: s.tx, Retention: opts.Retention}
	if err := r.QueryRowContext(ctx, `SELECT COALESCE(MAX(cursor), 0) FROM events`).Scan(&s.w8.last); err != nil {
		r.Close()
		s.wc.Close()
		w.Close()
		return nil, err
	}
	s.w8.own = map[int64]bool{}
	s.watchDone = make(chan struct{})
	go s.writer()
	go s.watch()
	// Each prune transaction is a job of its own for the writer.
	s.pruner = s.StartPruner()
	return s, nil
}

// PageSize is the page size of a database Foundry creates. Every page a
// write changes is written whole to the WAL, and a small guarded write
// changes one page of about fifteen B-trees (the resource, its part, the
// history rows, the key, the event and their indexes): with SQLite's default
// 4 KiB pages that was ~70 KB per write whatever the change, with 1 KiB pages
// it is about a quarter of it. A database made before keeps its page size
// (SQLite changes it only by rebuilding the whole file with VACUUM).
const PageSize = 1024

// createSmallPages creates the database file at path with PageSize pages
// if there is none yet. The page size must be set before the first page is
// written, and the pragmas of a connection string run in an order of their
// own (journal_mode, which writes the first page, before page_size), so a
// connection of its own does it first.
func createSmallPages(ctx context.Context, path string) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		return nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A no-op on a database that already has pages (another process made
	// it meanwhile): its page size stays.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA page_size = %d", PageSize)); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "PRAGMA journal_mode = WAL")
	return err
}

// checkpointBytes is how much WAL the writer lets grow before it copies the
// WAL back into the database (SQLite's automatic checkpoint, run in the
// COMMIT that crosses it). A page changed by many writes is copied once per
// checkpoint, so fewer checkpoints write less; SQLite's default is 1000
// pages, 1 MiB with 1 KiB pages.
const checkpointBytes = 4 << 20

// setCheckpointPages sets the writer's automatic checkpoint to
// checkpointBytes of the database's pages.
func setCheckpointPages(ctx context.Context, c *sql.Conn) error {
	var size int64
	if err := c.QueryRowContext(ctx, "PRAGMA page_size").Scan(&size); err != nil {
		return err
	}
	_, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", checkpointBytes/max(size, 512)))
	return err
}

// hook registers the writer connection's hooks. The rollback hook tells the
// writer that SQLite rolled a whole transaction back, which it may do by
// itself on SQLITE_FULL, IOERR, NOMEM or an interrupt; after that, later
// statements would run in autocommit. The commit hook refuses every commit
// but the writer's own COMMIT, so no job's statement ever commits alone.
func (s *Store) hook(dc any) error {
	h, ok := dc.(msqlite.HookRegisterer)
	if !ok {
		return fmt.Errorf("the driver connection (%T) takes no commit and rollback hooks", dc)
	}
	h.RegisterRollbackHook(func() { s.rolledBack.Store(true) })
	h.RegisterCommitHook(func() int32 {
		if s.committing.Load() {
			return 0
		}
		return 1 // SQLite turns the commit into a rollback
	})
	return nil
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

var errClosed = errors.New("store is closed")

func (s *Store) submit(ctx context.Context, fn func(q store.Querier) (*store.Event, error)) error {
	j := &job{ctx: ctx, fn: fn, errc: make(chan error, 1)}
	// Queued under mu, so that once Close holds it nothing more is queued
	// and the writer can run what is there and stop.
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return errClosed
	}
	select {
	case s.jobs <- j:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	if s.faults != nil && s.faults.Queued != nil {
		s.faults.Queued()
	}
	// Once queued, the answer is awaited even if ctx ends: the write may
	// commit, and the caller must not report a failure for a committed write.
	// The writer answers every queued job, Close included.
	var err error
	select {
	case err = <-j.errc:
	case <-s.stopped:
		select {
		case err = <-j.errc:
		default:
			return errClosed // the writer died without answering: it ran nothing more
		}
	}
	if err == nil && j.event != nil {
		s.Hub.Notify(j.event.Type, j.event.ID)
	}
	return err
}

// writer is the only goroutine that writes. It takes whatever is queued (up to
// MaxBatch), runs each job in a savepoint of one transaction, commits once,
// then answers everyone. After Close it runs what is still queued, then stops.
func (s *Store) writer() {
	defer close(s.stopped)
	ctx := context.Background()
	conn := &stmtConn{conn: s.wc, stmts: map[string]*sql.Stmt{}}
	defer s.wc.Close()
	defer conn.close()
	batch := make([]*job, 0, s.opts.MaxBatch)
	for {
		var j *job
		select {
		case j = <-s.jobs:
		case <-s.done:
			// Close holds mu past s.closed: nothing is queued any more.
			select {
			case j = <-s.jobs:
			default:
				return
			}
		}
		if s.faults != nil && s.faults.Batch != nil {
			s.faults.Batch()
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
		s.runBatch(ctx, conn, batch)
		clear(batch) // let answered jobs go
	}
}

// runBatch runs batch in as few transactions as it takes (one, unless SQLite
// rolls one back) and answers every job in it.
func (s *Store) runBatch(ctx context.Context, conn *stmtConn, batch []*job) {
	defer func() {
		// A fault in the writer's own code (a job's panic is recovered in
		// runJob): nothing of this batch is known to be committed or not, so
		// roll back and answer whoever is still waiting; the writer goes on.
		if r := recover(); r != nil {
			slog.Error("sqlite writer: panic", "panic", r, "stack", string(debug.Stack()))
			s.ctl(ctx, conn, "ROLLBACK")
			for _, j := range batch {
				j.answer(ErrInternal)
			}
		}
	}()
	for len(batch) > 0 {
		batch = s.runTx(ctx, conn, batch)
	}
}

// runTx runs batch in one transaction and answers the jobs it ran. If SQLite
// rolls the transaction back in the middle, the jobs that had run are
// answered with ErrNotCommitted and the ones that had not are returned, to
// run in a fresh transaction.
func (s *Store) runTx(ctx context.Context, conn *stmtConn, batch []*job) (rest []*job) {
	if err := s.ctl(ctx, conn, "BEGIN IMMEDIATE"); err != nil {
		slog.Error("sqlite writer: BEGIN failed; the batch is answered as not committed", "cause", err, "jobs", len(batch))
		for _, j := range batch {
			j.answer(ErrNotCommitted)
		}
		return nil
	}
	s.rolledBack.Store(false)
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			j.answer(err) // the caller gave up before we started: nothing runs
			continue
		}
		var lost error
		j.err, lost = s.runJob(ctx, conn, j)
		if lost == nil && s.rolledBack.Load() {
			lost = errors.New("the transaction was rolled back during the write")
		}
		if lost != nil {
			// Make the unknown state known: whatever is still open goes.
			// With no transaction left, ROLLBACK fails, as it may.
			s.ctl(ctx, conn, "ROLLBACK")
			slog.Error("sqlite writer: a group commit's transaction was lost; its writes are answered as not committed, the rest of the batch runs in a new one",
				"cause", lost, "write_error", j.err, "jobs_failed", i+1, "jobs_retried", len(batch)-i-1)
			for _, r := range batch[:i+1] {
				r.answer(ErrNotCommitted) // those skipped above are answered already
			}
			return batch[i+1:]
		}
	}
	start := time.Now()
	err := s.commit(ctx, conn, batch)
	if f := s.observe.Load(); f != nil {
		(*f)(len(batch), time.Since(start))
	}
	if err != nil {
		slog.Error("sqlite writer: COMMIT failed; the batch is answered as not committed", "cause", err, "jobs", len(batch))
		for _, j := range batch {
			j.answer(ErrNotCommitted)
		}
		return nil
	}
	for _, j := range batch {
		j.answer(j.err)
	}
	return nil
}

// commit commits the batch's transaction, and rolls it back if that fails.
// The events of the batch's writes are announced by this process after
// COMMIT, so they are marked as its own for the watcher before it; the
// watcher's lock is held until COMMIT has succeeded or the marks are undone,
// so it never takes them for another process's, nor misses another process's
// event that got one of their cursors after a failed COMMIT.
func (s *Store) commit(ctx context.Context, conn *stmtConn, batch []*job) error {
	s.w8.mu.Lock()
	defer s.w8.mu.Unlock()
	for _, j := range batch {
		if !j.answered && j.err == nil && j.event != nil {
			s.w8.own[j.event.Cursor] = true
		}
	}
	committed := false
	defer func() {
		if !committed { // failed, or panicked
			for _, j := range batch {
				if !j.answered && j.err == nil && j.event != nil {
					delete(s.w8.own, j.event.Cursor)
				}
			}
		}
	}()
	if err := s.commitStmt(ctx, conn); err != nil {
		s.ctl(ctx, conn, "ROLLBACK") // COMMIT may leave the transaction open (BUSY)
		return err
	}
	committed = true
	return nil
}

// commitStmt runs COMMIT, the one statement the commit hook lets commit.
func (s *Store) commitStmt(ctx context.Context, conn *stmtConn) error {
	s.committing.Store(true)
	defer s.committing.Store(false)
	return s.ctl(ctx, conn, "COMMIT")
}

// runJob runs one job in its own savepoint: a refusal, a fault or a panic
// rolls back that job alone, and the batch goes on. The savepoint is
// released before the next job, so one name serves all. err is the job's
// answer; lost reports that the batch's transaction is gone or in a state
// the writer cannot know (a savepoint statement failed).
func (s *Store) runJob(ctx context.Context, conn *stmtConn, j *job) (err, lost error) {
	if err := s.ctl(ctx, conn, "SAVEPOINT w"); err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	ev, err := call(j.ctx, j.fn, conn)
	conn.closeRows()
	if err != nil {
		if rbErr := s.ctl(ctx, conn, "ROLLBACK TO w"); rbErr != nil {
			return err, fmt.Errorf("rollback to savepoint: %w", rbErr)
		}
		if relErr := s.ctl(ctx, conn, "RELEASE w"); relErr != nil {
			return err, fmt.Errorf("release savepoint after rollback: %w", relErr)
		}
		return err, nil
	}
	if relErr := s.ctl(ctx, conn, "RELEASE w"); relErr != nil {
		return nil, fmt.Errorf("release savepoint: %w", relErr)
	}
	j.event = ev
	return nil, nil
}

// call runs a job, turning a panic into ErrInternal; the panic and its stack
// go to the log, never to the caller.
func call(ctx context.Context, fn func(q store.Querier) (*store.Event, error), q store.Querier) (ev *store.Event, err error) {
	defer func() {
		if r := recover(); r != nil {
			slog.ErrorContext(ctx, "sqlite writer: a write panicked; it was rolled back", "panic", r, "stack", string(debug.Stack()))
			ev, err = nil, ErrInternal
		}
	}()
	return fn(q)
}

// ctl runs one of the writer's own statements.
func (s *Store) ctl(ctx context.Context, conn *stmtConn, q string) error {
	if s.faults != nil && s.faults.Stmt != nil {
		if err := s.faults.Stmt(q); err != nil {
			return err
		}
	}
	_, err := conn.ExecContext(ctx, q)
	return err
}

// Close stops queuing, lets the writer run and answer every job already
// queued, and closes the database.
func (s *Store) Close() error {
	s.pruner.Stop() // its jobs need the writer: stopped first
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.stopped
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	<-s.stopped
	if s.watchDone != nil {
		<-s.watchDone
	}
	return errors.Join(s.R.Close(), s.w.Close())
}
