package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"foundry/internal/auth"
	"foundry/internal/benchtest"
	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
)

// BenchmarkWrites16VsBarePgx: PostgreSQL at FOUNDRY_TEST_POSTGRES_URL, in
// a fresh schema (skipped when unset), 16 clients, FOUNDRY_BENCH_WRITES
// writes (1600) per round of each, one after the other in the same round:
//
//   - foundry: small agent edits through the service (edit_note_tab
//     replace_text of a short text, each client on its own Note, with its
//     version and a fresh idempotency key): access check, guarded write,
//     key, history, event and notification, without MCP;
//   - bare_pgx: a bare pgx loop on 16 connections, one transaction of one
//     INSERT of as short a text per write (BEGIN, INSERT, COMMIT).
//
// Reports writes/s of each and foundry/bare_pgx. Target: ≥ 0.3.
func BenchmarkWrites16VsBarePgx(b *testing.B) {
	const clients = 16
	n := 1600
	if v := os.Getenv("FOUNDRY_BENCH_WRITES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("FOUNDRY_BENCH_WRITES=%q: want a positive integer", v)
		}
	}
	u, _ := pgtest.Schema(b)
	ctx := context.Background()
	st, err := postgres.Open(ctx, u)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	svc := service.New(st)
	o, _, err := svc.Bootstrap(ctx, "Bench", "owner@example.org")
	if err != nil {
		b.Fatal(err)
	}
	p := auth.Principal{Workspace: o.Workspace.ID, User: o.User.ID, TokenID: "bench", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}}
	ids := make([]string, clients)
	versions := make([]int64, clients)
	for w := range ids {
		n, err := svc.CreateNote(ctx, service.Operator(o), service.CreateNoteArgs{Title: fmt.Sprintf("Client %d", w), Approved: true})
		if err != nil {
			b.Fatal(err)
		}
		ids[w], versions[w] = n.NoteID, 1
	}

	conns := make([]*pgx.Conn, clients)
	for w := range conns {
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close(context.Background()) })
		conns[w] = c
	}
	if _, err := conns[0].Exec(ctx, `CREATE TABLE bare_writes (id BIGSERIAL PRIMARY KEY, client INTEGER NOT NULL, n BIGINT NOT NULL, text TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}

	text := func(w int, i int64) string { return fmt.Sprintf("# Client %d\n\nEdit %d.\n", w, i) }
	foundry := func(w int, i int64) error {
		t := text(w, i)
		res, err := svc.EditNoteTab(ctx, service.Agent(p), service.EditTabArgs{NoteID: ids[w], TabID: note.TypeMarkdown,
			ExpectedVersion: versions[w], IdempotencyKey: fmt.Sprintf("bench-%d-%d", w, versions[w]),
			Operation: "replace_text", Text: &t})
		if err != nil {
			return err
		}
		if res.Version != versions[w]+1 {
			return fmt.Errorf("client %d: version %d after %d", w, res.Version, versions[w])
		}
		versions[w] = res.Version
		return nil
	}
	bare := func(w int, i int64) error {
		tx, err := conns[w].Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO bare_writes (client, n, text) VALUES ($1, $2, $3)`, w, i, text(w, i)); err != nil {
			tx.Rollback(ctx)
			return err
		}
		return tx.Commit(ctx)
	}

	b.Run("writes", func(b *testing.B) {
		var tf, tp time.Duration
		for range b.N {
			tf += benchtest.Spread(b, clients, n, foundry)
			tp += benchtest.Spread(b, clients, n, bare)
		}
		rate := func(d time.Duration) float64 { return float64(n*b.N) / d.Seconds() }
		b.ReportMetric(rate(tf), "foundry-writes/s")
		b.ReportMetric(rate(tp), "bare-pgx-writes/s")
		b.ReportMetric(rate(tf)/rate(tp), "foundry/bare_pgx")
	})
}
