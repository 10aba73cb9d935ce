package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"foundry/internal/store"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// pragma reads one integer pragma of the database in dir through a
// connection of its own.
func pragma(t *testing.T, dir, name string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "foundry.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow("PRAGMA " + name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// writeAndRead opens the store on dir, makes a Note and a few writes on
// it, reads them back and closes the store.
func writeAndRead(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws := storetest.Seed(t, s)
	id := storetest.Create(t, s, ws)
	for i, line := range []string{"one", "two", "three"} {
		if _, err := s.Guarded(ctx, storetest.AppendLine(ws, id, "page-size-"+line, int64(i+1), line)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := s.History(ctx, store.TypeNote, id)
	if err != nil || len(h) != 4 {
		t.Fatalf("history: %d versions, %v; want 4", len(h), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNewDatabaseHasSmallPages: a data folder made by Foundry holds a
// database of sqlite.PageSize pages (every page a write changes is written
// whole, so smaller pages make a small write write less), in WAL mode.
func TestNewDatabaseHasSmallPages(t *testing.T) {
	dir := t.TempDir()
	writeAndRead(t, dir)
	if got := pragma(t, dir, "page_size"); got != sqlite.PageSize {
		t.Fatalf("page_size of a new database = %d, want %d", got, sqlite.PageSize)
	}
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(dir, "foundry.db"))
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// TestExistingDatabaseKeepsItsPageSize: a database made with SQLite's
// default 4 KiB pages (by an earlier release) opens, works, and keeps its
// pages.
func TestExistingDatabaseKeepsItsPageSize(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "foundry.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE made_before (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for range 2 { // a second start finds the same
		writeAndRead(t, dir)
		if got := pragma(t, dir, "page_size"); got != 4096 {
			t.Fatalf("page_size after opening a 4 KiB database = %d, want 4096", got)
		}
	}
}
