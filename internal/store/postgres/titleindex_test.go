package postgres_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"foundry/internal/logtest"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/storetest"
)

// TestTitleQueriesWithoutTrigramIndex: a database that refused pg_trgm has
// no trigram index; title queries answer exactly as with it.
func TestTitleQueriesWithoutTrigramIndex(t *testing.T) {
	u, _ := freshSchema(t)
	s := open(t, u)
	if _, err := s.Base.R.ExecContext(context.Background(), `DROP INDEX resources_title_trgm`); err != nil {
		t.Fatalf("the store made no trigram index: %v", err)
	}
	storetest.TitleQueries(t, s)
}

// TestTitleIndexIsMadeOnOpen: opening a database that has none makes the
// trigram index (pg_trgm is there: the test server allows it), and opening
// it again keeps it.
func TestTitleIndexIsMadeOnOpen(t *testing.T) {
	u, schema := freshSchema(t)
	open(t, u).Close()
	s := open(t, u)
	var n int
	if err := s.Base.R.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = 'resources_title_trgm'`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d trigram indexes on resources; want 1", n)
	}
}

// TestTitleIndexRefusedStillOpens: in a database without pg_trgm, a role
// that may not install it (no CREATE on the database) opens the store all
// the same: the log says there is no trigram index and why, and title
// queries answer as with it.
func TestTitleIndexRefusedStillOpens(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := "foundry_notrgm_" + strings.ToLower(rand.Text()[:10])
	for _, q := range []string{`CREATE ROLE ` + name + ` LOGIN`, `CREATE DATABASE ` + name, `REVOKE CREATE ON DATABASE ` + name + ` FROM PUBLIC`} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		admin, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("admin connection: %v", err)
			return
		}
		defer admin.Close(ctx)
		for _, q := range []string{`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`, `DROP ROLE IF EXISTS ` + name} {
			if _, err := admin.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	owner := *u
	db, err := pgx.Connect(ctx, owner.String())
	if err != nil {
		t.Fatal(err)
	}
	// The role's own schema, where it may make its tables; public it may
	// not write.
	for _, q := range []string{`REVOKE CREATE ON SCHEMA public FROM PUBLIC`, `CREATE SCHEMA foundry AUTHORIZATION ` + name} {
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close(ctx)
	u.User = url.User(name)
	q := u.Query()
	q.Set("search_path", "foundry")
	u.RawQuery = q.Encode()

	var logs logtest.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	s, err := postgres.Open(ctx, u.String())
	slog.SetDefault(old)
	if err != nil {
		t.Fatalf("a role that may not install pg_trgm cannot open the store: %v", err)
	}
	defer s.Close()
	if l := logs.String(); !strings.Contains(l, "no trigram index for title queries") || !strings.Contains(l, "create extension pg_trgm") {
		t.Errorf("the log does not say why there is no trigram index:\n%s", l)
	}
	storetest.TitleQueries(t, s)
}
