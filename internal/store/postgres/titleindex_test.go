package postgres_test

import (
	"context"
	"testing"

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
