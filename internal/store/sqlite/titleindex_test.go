package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"foundry/internal/store"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// TestTitleIndexMigrationRunsAgain: the title-index migration run a second
// time over a data folder (as after a partial restore of its schema table)
// rebuilds the index from resources: every title is found once, by its
// current text, and writes keep it in step afterwards.
func TestTitleIndexMigrationRunsAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws := storetest.Seed(t, s)
	a := storetest.CreateTitled(t, s, ws, store.TypeNote, "Quarterly Ärger", true)
	b := storetest.CreateTitled(t, s, ws, store.TypeNote, "Old name", true)
	storetest.Retitle(t, s, ws, store.TypeNote, b, "Quarterly plan")
	s.Close()

	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "foundry.db"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := raw.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DELETE FROM schema_migrations WHERE version = ?`, n); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	s, err = sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatalf("the migration did not run again: %v", err)
	}
	defer s.Close()
	list := func(q string) []string {
		t.Helper()
		rows, err := s.List(ctx, store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		return ids
	}
	both := []string{a, b}
	slices.Sort(both)
	if got := list("quarterly"); !slices.Equal(got, both) {
		t.Errorf("quarterly: %v, want %v", got, both)
	}
	if got := list("old name"); len(got) != 0 {
		t.Errorf("the old title is found: %v", got)
	}
	if got := list("ÄRGER"); !slices.Equal(got, []string{a}) {
		t.Errorf("ÄRGER: %v, want %v", got, []string{a})
	}
	storetest.Retitle(t, s, ws, store.TypeNote, a, "Annual report")
	if got := list("quarterly"); !slices.Equal(got, []string{b}) {
		t.Errorf("after a retitle, quarterly: %v, want %v", got, []string{b})
	}
}
