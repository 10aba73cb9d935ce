package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"foundry/internal/problem"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/storetest"
)

// A write waiting for a row lock that another transaction holds gives up
// after the lock timeout with a refusal the caller can act on, instead of
// hanging (and holding its own connection and locks) for as long as the
// other one does.
func TestLockWaitIsBounded(t *testing.T) {
	u, _ := freshSchema(t)
	s := open(t, u)
	ws := storetest.Seed(t, s)
	id := storetest.Create(t, s, ws)

	holder, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	tx, err := holder.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(context.Background(), `SELECT 1 FROM resources WHERE type = 'note' AND id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}

	// The deadline only keeps a regression from hanging the suite: the
	// store must answer on its own, long before it.
	ctx, cancel := context.WithTimeout(context.Background(), 6*postgres.LockTimeout)
	defer cancel()
	_, err = s.Guarded(ctx, storetest.AppendLine(ws, id, "key-blocked", 1, "b"))
	if ctx.Err() != nil {
		t.Fatalf("the write waited for the lock until its caller gave up (%v)", err)
	}
	var p *problem.Problem
	if !errors.As(err, &p) || p.Code != "resource_busy" || p.Field != "note_id" || p.Details["retry_after"] == nil {
		t.Fatalf("blocked write: %v, want a resource_busy refusal naming note_id with retry_after", err)
	}
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Nothing was written: the same call succeeds once the lock is free.
	out, err := s.Guarded(context.Background(), storetest.AppendLine(ws, id, "key-blocked", 1, "b"))
	if err != nil || out.Replayed || out.Version != 2 {
		t.Fatalf("resend after the lock was freed: %+v, %v", out, err)
	}
}

// A panic inside a write is that caller's internal error: the process goes
// on, the transaction is rolled back, and no lock is left behind.
func TestPanicInApplyLeavesNoLock(t *testing.T) {
	u, _ := freshSchema(t)
	s := open(t, u)
	ws := storetest.Seed(t, s)
	id := storetest.Create(t, s, ws)

	for i := range 3 { // more panics than one connection: none may leak
		m := storetest.AppendLine(ws, id, "key-panic", 1, "p")
		m.Apply = func(*store.Resource) (*store.Change, error) { panic("apply fault") }
		var err error
		func() {
			defer func() {
				if v := recover(); v != nil {
					err = errors.New("the panic reached the caller")
				}
			}()
			_, err = s.Guarded(context.Background(), m)
		}()
		if err == nil {
			t.Fatalf("panic %d: no error", i)
		}
		if err.Error() == "the panic reached the caller" {
			t.Fatalf("panic %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*postgres.LockTimeout)
	defer cancel()
	out, err := s.Guarded(ctx, storetest.AppendLine(ws, id, "key-after-panic", 1, "a"))
	if err != nil || out.Version != 2 {
		t.Fatalf("write after the panics: %+v, %v (a lock outlived the panicking write?)", out, err)
	}
	// The panicking key was not recorded.
	if out, err := s.Guarded(ctx, storetest.AppendLine(ws, id, "key-panic", 2, "p")); err != nil || out.Replayed {
		t.Fatalf("the key of a panicked write: %+v, %v", out, err)
	}
}

// Every pooled connection carries the bounds.
func TestConnectionsAreBounded(t *testing.T) {
	u, _ := freshSchema(t)
	s := open(t, u)
	var lock, stmt, idle string
	if err := s.Base.R.QueryRowContext(context.Background(),
		`SELECT current_setting('lock_timeout'), current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')`).Scan(&lock, &stmt, &idle); err != nil {
		t.Fatal(err)
	}
	if lock == "0" || stmt == "0" || idle == "0" {
		t.Fatalf("lock_timeout %s, statement_timeout %s, idle_in_transaction_session_timeout %s: all must be bounded", lock, stmt, idle)
	}
	for _, d := range []time.Duration{postgres.LockTimeout, postgres.StatementTimeout, postgres.IdleInTxTimeout} {
		if d <= 0 {
			t.Fatalf("bound %v", d)
		}
	}
	if postgres.StatementTimeout < postgres.LockTimeout {
		t.Fatalf("statement_timeout %v is shorter than lock_timeout %v: a lock wait would answer as a slow statement", postgres.StatementTimeout, postgres.LockTimeout)
	}
}
