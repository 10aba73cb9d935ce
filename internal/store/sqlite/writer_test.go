package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"foundry/internal/logtest"
	"foundry/internal/problem"
	"foundry/internal/store"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// harness is a store whose writer can be held so that chosen jobs share one
// batch, in a chosen order, and whose own statements can be made to fail.
type harness struct {
	t        *testing.T
	dir      string
	s        *sqlite.Store
	holdNext atomic.Bool   // hold the writer at its next batch
	release  chan struct{} // closed to let it go
	counting atomic.Bool
	queued   chan struct{} // one per job queued while counting
	stmt     atomic.Pointer[func(q string) error]
}

func newHarness(t *testing.T, opts sqlite.Options) *harness {
	h := &harness{t: t, dir: t.TempDir(), queued: make(chan struct{}, 1024)}
	f := &sqlite.Faults{
		Stmt: func(q string) error {
			if fn := h.stmt.Load(); fn != nil {
				return (*fn)(q)
			}
			return nil
		},
		Batch: func() {
			if h.holdNext.CompareAndSwap(true, false) {
				<-h.release
			}
		},
		Queued: func() {
			if h.counting.Load() {
				h.queued <- struct{}{}
			}
		},
	}
	s, err := sqlite.OpenWithFaults(context.Background(), h.dir, opts, f)
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	t.Cleanup(func() { s.Close() })
	return h
}

// failStmt makes the writer's statements go through fn until the test ends.
func (h *harness) failStmt(fn func(q string) error) {
	h.stmt.Store(&fn)
	h.t.Cleanup(func() { h.stmt.Store(nil) })
}

// hold makes the writer stop at its next batch; queue then queues calls in
// order behind it, and go lets it run them as one batch.
func (h *harness) hold() {
	h.release = make(chan struct{})
	h.holdNext.Store(true)
	h.counting.Store(true)
}

// queue starts call and returns once its job is queued; wait gives its error.
func (h *harness) queue(call func() error) (wait func() error) {
	errc := make(chan error, 1)
	go func() { errc <- call() }()
	select {
	case <-h.queued:
	case err := <-errc: // answered without being queued
		h.t.Fatalf("call was not queued: %v", err)
	}
	return func() error { return <-errc }
}

func (h *harness) letGo() {
	h.counting.Store(false)
	close(h.release)
}

// together runs calls as one batch, in order, and returns their errors.
func (h *harness) together(calls ...func() error) []error {
	h.hold()
	waits := make([]func() error, len(calls))
	for i, c := range calls {
		waits[i] = h.queue(c)
	}
	h.letGo()
	errs := make([]error, len(calls))
	for i, w := range waits {
		errs[i] = w()
	}
	return errs
}

func (h *harness) guarded(m store.Mutation) func() error {
	return func() error {
		_, err := h.s.Guarded(context.Background(), m)
		return err
	}
}

// lines reads a counter Note's log from the database file itself, through a
// connection of its own, as a restarted process would.
func lines(t *testing.T, dir, id string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dir+"/foundry.db?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var doc string
	if err := db.QueryRow(`SELECT doc FROM resources WHERE type = ? AND id = ?`, store.TypeNote, id).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	var d storetest.CounterDoc
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	return d.Log
}

func wantLines(t *testing.T, dir, id string, want ...string) {
	t.Helper()
	if got := lines(t, dir, id); !slices.Equal(got, want) {
		t.Fatalf("note %s holds %q in the database; want %q", id, got, want)
	}
}

// wantErrs checks each caller's answer: nil for a committed write, an error
// wrapping target otherwise.
func wantErrs(t *testing.T, errs []error, want ...error) {
	t.Helper()
	for i, err := range errs {
		switch {
		case want[i] == nil && err != nil:
			t.Errorf("call %d: %v; want it committed", i, err)
		case want[i] != nil && !errors.Is(err, want[i]):
			t.Errorf("call %d: %v; want %v", i, err, want[i])
		case want[i] != nil && err.Error() != want[i].Error():
			t.Errorf("call %d: the answer %q carries more than %q (a database message or a panic's text)", i, err, want[i])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

func captureLog(t *testing.T) *logtest.Buffer {
	b := &logtest.Buffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(b, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return b
}

// TestPanicFailsOnlyItsCaller: a panic inside a write (a Mutation's Apply, or
// any function the writer runs) answers that caller with an internal error
// and rolls back only its savepoint; the others in its batch commit, the
// panic and its stack are logged, and the writer goes on.
func TestPanicFailsOnlyItsCaller(t *testing.T) {
	log := captureLog(t)
	h := newHarness(t, sqlite.Options{})
	ws := storetest.Seed(t, h.s)
	a, p := storetest.Create(t, h.s, ws), storetest.Create(t, h.s, ws)
	boom := storetest.AppendLine(ws, p, "key-p", 0, "p")
	apply := boom.Apply
	boom.Apply = func(cur *store.Resource) (*store.Change, error) {
		apply(cur)
		panic("secret-panic-text in Apply")
	}
	panicTx := func() error {
		return h.s.Tx(context.Background(), func(q store.Querier) error {
			if _, err := q.ExecContext(context.Background(), `INSERT INTO idempotency_keys (scope_type, scope_id, key, fingerprint, result, version, created_us) VALUES ('note', ?, 'tx-key', '', '{}', 1, 0)`, p); err != nil {
				return err
			}
			var none []string
			_ = none[len(p)] // a runtime error, not a panic(value)
			return nil
		})
	}
	// A panic in the middle of reading rows leaves them open; they must not
	// hold the connection (the guarded write reads the same statement).
	panicInRows := func() error {
		return h.s.Tx(context.Background(), func(q store.Querier) error {
			rows, err := q.QueryContext(context.Background(), `SELECT workspace_id, owner_id, title, approved, version, doc, updated_us FROM resources WHERE type = ? AND id = ?`, store.TypeNote, a)
			if err != nil {
				return err
			}
			rows.Next()
			panic("secret-panic-text in a rows loop")
		})
	}
	errs := h.together(
		h.guarded(storetest.AppendLine(ws, a, "key-1", 0, "1")),
		h.guarded(boom),
		h.guarded(storetest.AppendLine(ws, a, "key-2", 0, "2")),
		panicTx,
		h.guarded(storetest.AppendLine(ws, a, "key-3", 0, "3")),
		panicInRows,
		h.guarded(storetest.AppendLine(ws, a, "key-4", 0, "4")),
	)
	wantErrs(t, errs, nil, sqlite.ErrInternal, nil, sqlite.ErrInternal, nil, sqlite.ErrInternal, nil)
	for _, i := range []int{1, 3, 5} {
		if strings.Contains(errs[i].Error(), "secret") {
			t.Errorf("the answer %q carries the panic's text", errs[i])
		}
		var pr *problem.Problem
		if errors.As(errs[i], &pr) {
			t.Errorf("a panic answered as a refusal: %v", pr)
		}
	}
	wantLines(t, h.dir, a, "1", "2", "3", "4")
	wantLines(t, h.dir, p)
	for _, want := range []string{"secret-panic-text in Apply", "index out of range", "secret-panic-text in a rows loop", "goroutine ", "runtime/debug.Stack"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not have %q:\n%s", want, log)
		}
	}
	// The writer is alive, and the panicking writes left nothing behind:
	// their keys are free.
	if _, err := h.s.Guarded(context.Background(), storetest.AppendLine(ws, p, "key-p", 0, "p")); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Tx(context.Background(), func(q store.Querier) error {
		_, err := q.ExecContext(context.Background(), `INSERT INTO idempotency_keys (scope_type, scope_id, key, fingerprint, result, version, created_us) VALUES ('note', ?, 'tx-key', '', '{}', 1, 0)`, p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wantLines(t, h.dir, p, "p")
}

// TestFailedReleaseAfterRollbackTo: when RELEASE fails after a refused job's
// ROLLBACK TO, the transaction's state is unknown: the writer rolls it back,
// answers every job that had run in it with an error (none is told "ok" for
// a write that is not there), and runs the rest in a new transaction.
func TestFailedReleaseAfterRollbackTo(t *testing.T) {
	h := newHarness(t, sqlite.Options{})
	ws := storetest.Seed(t, h.s)
	a, b := storetest.Create(t, h.s, ws), storetest.Create(t, h.s, ws)
	var afterRollbackTo, failed atomic.Bool
	h.failStmt(func(q string) error {
		switch {
		case q == "ROLLBACK TO w":
			afterRollbackTo.Store(true)
		case q == "RELEASE w" && afterRollbackTo.Load() && failed.CompareAndSwap(false, true):
			return errors.New("disk I/O error (injected)")
		}
		return nil
	})
	errs := h.together(
		h.guarded(storetest.AppendLine(ws, a, "key-1", 0, "1")),
		h.guarded(storetest.AppendLine(ws, b, "key-stale", 7, "stale")), // refused: version 7 is not current
		h.guarded(storetest.AppendLine(ws, a, "key-2", 0, "2")),
		h.guarded(storetest.AppendLine(ws, b, "key-3", 0, "3")),
	)
	wantErrs(t, errs, sqlite.ErrNotCommitted, sqlite.ErrNotCommitted, nil, nil)
	wantLines(t, h.dir, a, "2")
	wantLines(t, h.dir, b, "3")
	// Those told "not committed" can send the same request again.
	if _, err := h.s.Guarded(context.Background(), storetest.AppendLine(ws, a, "key-1", 0, "1")); err != nil {
		t.Fatal(err)
	}
	wantLines(t, h.dir, a, "2", "1")
}

// diskFull is a write that fills the disk: SQLite answers SQLITE_FULL and
// rolls the whole transaction back by itself. swallow makes the write ignore
// that and go on writing, as a buggy write might.
func diskFull(s *sqlite.Store, ws string, swallow bool) func() error {
	return func() error {
		ctx := context.Background()
		return s.Tx(ctx, func(q store.Querier) error {
			var pages, max int64
			if err := q.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
				return err
			}
			if err := q.QueryRowContext(ctx, `PRAGMA max_page_count`).Scan(&max); err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
				return err
			}
			_, err := q.ExecContext(ctx, `INSERT INTO events (workspace_id, resource_type, resource_id, kind, version, at_us) VALUES (?, 'note', 'full', ?, 1, 0)`,
				ws, strings.Repeat("x", 1<<20))
			if _, err := q.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, max)); err != nil {
				return err
			}
			if err == nil || !strings.Contains(err.Error(), "full") {
				return fmt.Errorf("the disk did not fill: %v", err)
			}
			if !swallow {
				return err
			}
			// Now in autocommit, were it not for the writer's guard.
			_, _ = q.ExecContext(ctx, `INSERT INTO events (workspace_id, resource_type, resource_id, kind, version, at_us) VALUES (?, 'note', 'after-full', 'k', 1, 0)`, ws)
			return nil
		})
	}
}

// TestTransactionRolledBackBySQLite: SQLite rolls a group commit's whole
// transaction back by itself (here SQLITE_FULL). The jobs that had run in it
// lost their work and are answered with an error; the jobs after it run in a
// new transaction and are answered by what it did; nothing runs in
// autocommit.
func TestTransactionRolledBackBySQLite(t *testing.T) {
	for _, swallow := range []bool{false, true} {
		t.Run(fmt.Sprintf("write ignores the error=%v", swallow), func(t *testing.T) {
			h := newHarness(t, sqlite.Options{})
			ws := storetest.Seed(t, h.s)
			a, b := storetest.Create(t, h.s, ws), storetest.Create(t, h.s, ws)
			errs := h.together(
				h.guarded(storetest.AppendLine(ws, a, "key-1", 0, "1")),
				h.guarded(storetest.AppendLine(ws, b, "key-2", 0, "2")),
				diskFull(h.s, ws, swallow),
				h.guarded(storetest.AppendLine(ws, a, "key-3", 0, "3")),
				h.guarded(storetest.AppendLine(ws, b, "key-4", 1, "4")), // version 1: key-2 is not there
				h.guarded(storetest.AppendLine(ws, a, "key-5", 0, "5")),
			)
			wantErrs(t, errs, sqlite.ErrNotCommitted, sqlite.ErrNotCommitted, sqlite.ErrNotCommitted, nil, nil, nil)
			wantLines(t, h.dir, a, "3", "5")
			wantLines(t, h.dir, b, "4")
			var n int
			if err := h.s.R.QueryRow(`SELECT COUNT(*) FROM events WHERE resource_id IN ('full', 'after-full')`).Scan(&n); err != nil || n != 0 {
				t.Fatalf("%d rows of the failed write are in the database (%v)", n, err)
			}
			if _, err := h.s.Guarded(context.Background(), storetest.AppendLine(ws, b, "key-2", 0, "2")); err != nil {
				t.Fatal(err)
			}
			wantLines(t, h.dir, b, "4", "2")
		})
	}
}

// TestFailedCommitUnmarksCursors: when COMMIT fails, every job of the batch
// is answered with an error, and the cursors its events would have had are
// no longer taken for this process's own: another process's write that gets
// one of them is announced here.
func TestFailedCommitUnmarksCursors(t *testing.T) {
	h := newHarness(t, sqlite.Options{})
	ws := storetest.Seed(t, h.s)
	a, b := storetest.Create(t, h.s, ws), storetest.Create(t, h.s, ws)
	h.failNextCommit(func() error { return errors.New("disk I/O error (injected)") })
	errs := h.together(
		h.guarded(storetest.AppendLine(ws, a, "key-1", 0, "1")),
		h.guarded(storetest.AppendLine(ws, b, "key-2", 0, "2")),
	)
	wantErrs(t, errs, sqlite.ErrNotCommitted, sqlite.ErrNotCommitted)
	wantLines(t, h.dir, a)
	wantLines(t, h.dir, b)
	h.noCursorMarkedPastCommit(t)

	// Another process writes: its events take the cursors the failed batch
	// had; this process must announce them.
	other, err := sqlite.Open(context.Background(), h.dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	woke, stop := h.s.Hub.Wait(store.TypeNote, b)
	defer stop()
	if _, err := other.Guarded(context.Background(), storetest.AppendLine(ws, a, "other-1", 0, "o1")); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Guarded(context.Background(), storetest.AppendLine(ws, b, "other-2", 0, "o2")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-time.After(100 * sqlite.WatchInterval):
		t.Fatal("another process's write was never announced: its cursor was taken for this process's own")
	}
	if _, err := h.s.Guarded(context.Background(), storetest.AppendLine(ws, a, "key-1", 0, "1")); err != nil {
		t.Fatal(err)
	}
	wantLines(t, h.dir, a, "o1", "1")
}

// TestCloseRunsQueuedJobs: Close stops queuing and runs every job already
// queued; each caller is answered, and each one told "ok" is in the file.
func TestCloseRunsQueuedJobs(t *testing.T) {
	h := newHarness(t, sqlite.Options{MaxBatch: 1})
	ws := storetest.Seed(t, h.s)
	a := storetest.Create(t, h.s, ws)
	const n = 24
	h.hold()
	waits := make([]func() error, n)
	for i := range n {
		waits[i] = h.queue(h.guarded(storetest.AppendLine(ws, a, fmt.Sprintf("key-%d", i), 0, fmt.Sprint(i))))
	}
	closed := make(chan error, 1)
	go func() { closed <- h.s.Close() }()
	<-sqlite.Closing(h.s)
	late := make(chan error, 1)
	go func() {
		_, err := h.s.Guarded(context.Background(), storetest.AppendLine(ws, a, "late", 0, "late"))
		late <- err
	}()
	h.letGo()
	if err := <-late; err == nil {
		t.Error("a write submitted after Close was accepted")
	}
	var want []string
	for i, w := range waits {
		if err := w(); err != nil {
			t.Errorf("queued write %d: %v", i, err)
		}
		want = append(want, fmt.Sprint(i))
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	wantLines(t, h.dir, a, want...)
}

// TestWriterFaultFailsItsBatch: a panic in the writer's own code (here while
// committing) answers every caller of that batch with an internal error,
// leaves nothing of it in the database, and the writer goes on.
func TestWriterFaultFailsItsBatch(t *testing.T) {
	captureLog(t)
	h := newHarness(t, sqlite.Options{})
	ws := storetest.Seed(t, h.s)
	a := storetest.Create(t, h.s, ws)
	h.failNextCommit(func() error { panic("writer fault") })
	errs := h.together(
		h.guarded(storetest.AppendLine(ws, a, "key-1", 0, "1")),
		h.guarded(storetest.AppendLine(ws, a, "key-2", 0, "2")),
	)
	wantErrs(t, errs, sqlite.ErrInternal, sqlite.ErrInternal)
	wantLines(t, h.dir, a)
	h.noCursorMarkedPastCommit(t)
	if _, err := h.s.Guarded(context.Background(), storetest.AppendLine(ws, a, "key-1", 0, "1")); err != nil {
		t.Fatal(err)
	}
	wantLines(t, h.dir, a, "1")
}

// failNextCommit makes the next COMMIT the writer sends fail as fault does
// (an error, or a panic).
func (h *harness) failNextCommit(fault func() error) {
	var fail atomic.Bool
	fail.Store(true)
	h.failStmt(func(q string) error {
		if q == "COMMIT" && fail.CompareAndSwap(true, false) {
			return fault()
		}
		return nil
	})
}

// noCursorMarkedPastCommit: no cursor after the last committed event is
// still marked as this process's own.
func (h *harness) noCursorMarkedPastCommit(t *testing.T) {
	t.Helper()
	var last int64
	if err := h.s.R.QueryRow(`SELECT MAX(cursor) FROM events`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	for _, c := range sqlite.OwnCursors(h.s) {
		if c > last {
			t.Fatalf("cursor %d of the failed commit is still marked as this process's own (last committed: %d)", c, last)
		}
	}
}
