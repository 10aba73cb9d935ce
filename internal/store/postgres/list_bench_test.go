package postgres_test

import (
	"context"
	"testing"

	"foundry/internal/store/storetest"
)

// BenchmarkListNotesQuery: list_notes' read at 10,000 Notes, with and
// without a title query (see storetest.BenchListNotesQuery). The table is
// analyzed after seeding, as autovacuum would.
func BenchmarkListNotesQuery(b *testing.B) {
	u, _ := freshSchema(b)
	s := open(b, u)
	ws := storetest.SeedListNotes(b, s, 10_000)
	if _, err := s.Base.R.ExecContext(context.Background(), `ANALYZE resources`); err != nil {
		b.Fatal(err)
	}
	storetest.BenchListNotesQuery(b, s, ws)
}
