package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"foundry/internal/store"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// titleIndexMigration is the number of the migration that makes the title
// index (store/sql.go: the fifth).
const titleIndexMigration = 5

// TestTitleIndexMigrationRunsAgain: the title-index migration run a second
// time over a data folder (as after a partial restore of its schema table)
// rebuilds the index from resources, here from empty: every title is found
// once, by its current text, and writes keep it in step afterwards.
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
	// The migrations from the title index's on run again (each one is
	// idempotent); the index they find is empty.
	for _, q := range []string{`DELETE FROM resource_titles`, `DELETE FROM schema_migrations WHERE version >= ` + strconv.Itoa(titleIndexMigration)} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
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

// TestPruneMergesTheTitleIndex: titles written one at a time leave the
// FTS5 title index in many segments; Prune merges them into one, and every
// title is found as before, and by titles written after.
func TestPruneMergesTheTitleIndex(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws := storetest.Seed(t, s)
	segments := func() int {
		t.Helper()
		var n int
		if err := s.Base.R.QueryRowContext(ctx, `SELECT COUNT(DISTINCT segid) FROM resource_titles_idx`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := map[string][]string{}
	for i := range 300 {
		title := fmt.Sprintf("Plan %03d", i)
		if i%50 == 0 {
			title += " Quokka"
		}
		id := storetest.BulkNotes(t, &s.Base, ws, []storetest.BulkNote{{Title: title, Approved: true}})[0]
		want["plan"] = append(want["plan"], id)
		if i%50 == 0 {
			want["quokka"] = append(want["quokka"], id)
		}
	}
	if n := segments(); n <= 3 {
		t.Fatalf("300 titles written one at a time left %d segments; the test wants more than 3", n)
	}
	rep, err := s.Prune(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n := segments(); n != 1 || rep.TitleMerges == 0 {
		t.Fatalf("after Prune: %d segments in %d merge steps; want 1", n, rep.TitleMerges)
	}
	if rep, err := s.Prune(ctx, time.Now()); err != nil || rep.TitleMerges != 0 {
		t.Errorf("Prune on a whole index: %d merge steps, %v; want none", rep.TitleMerges, err)
	}
	late := storetest.CreateTitled(t, s, ws, store.TypeNote, "Late quokka", true)
	want["quokka"] = append(want["quokka"], late)
	for q, ids := range want {
		slices.Sort(ids)
		var got []string
		for _, r := range mustList(t, s, store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: q, Limit: 1000}) {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, ids) {
			t.Errorf("query %q after the merge: %d Notes, want %d", q, len(got), len(ids))
		}
	}
}

func mustList(t *testing.T, s *sqlite.Store, q store.ListQuery) []store.Resource {
	t.Helper()
	rows, err := s.List(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
