package sqlite_test

import (
	"context"
	"testing"

	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// BenchmarkListNotesQuery: list_notes' read at 10,000 Notes, with and
// without a title query (see storetest.BenchListNotesQuery).
func BenchmarkListNotesQuery(b *testing.B) {
	s, err := sqlite.Open(context.Background(), b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ws := storetest.SeedListNotes(b, s, 10_000)
	storetest.BenchListNotesQuery(b, s, ws)
}
