package service_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// A Note stored whole, as Foundry stored Notes before they were stored by
// parts, is moved on start without a new version: it reads the same, every
// old version reads as it was, and the next write stores only its change.
func TestNotesStoredWholeUpgrade(t *testing.T) {
	t.Parallel()
	type opened struct {
		reopen func() store.Store
		raw    *sql.DB
		q      func(string) string
	}
	open := map[string]func(t *testing.T) opened{
		"sqlite": func(t *testing.T) opened {
			dir := t.TempDir()
			raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "foundry.db")+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { raw.Close() })
			return opened{func() store.Store {
				st, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}, raw, func(s string) string { return s }}
		},
		"postgres": func(t *testing.T) opened {
			u, _ := pgtest.Schema(t)
			raw, err := sql.Open("pgx", u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { raw.Close() })
			return opened{func() store.Store {
				st, err := postgres.Open(context.Background(), u)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}, raw, func(s string) string {
				for i := 1; strings.Contains(s, "?"); i++ {
					s = strings.Replace(s, "?", fmt.Sprintf("$%d", i), 1)
				}
				return s
			}}
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			o := open[name](t)
			st := o.reopen()
			f := newFixture(t, st)
			tab, err := f.svc.CreateNoteTab(ctx, service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: 1, IdempotencyKey: "legacy-tab-1", TabType: note.TypeSheet})
			if err != nil {
				t.Fatal(err)
			}
			// Versions 1 and 2 as a release before parts stored them: the
			// whole Note as the document, now and in history, no parts.
			whole := map[int64]string{}
			for v := int64(1); v <= 2; v++ {
				d, err := f.svc.NoteAt(ctx, f.noteID, v)
				if err != nil {
					t.Fatal(err)
				}
				if v == 2 {
					d.Markdown = "Stored whole ☃"
					d.Tabs[3].Sheets[0].Cells = [][]any{{1.0, "a"}, {}, {nil, true}}
				}
				b, _ := json.Marshal(d)
				whole[v] = string(b)
				if _, err := o.raw.ExecContext(ctx, o.q(`UPDATE resource_versions SET doc = ? WHERE type = 'note' AND id = ? AND version = ?`), string(b), f.noteID, v); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range []string{`UPDATE resources SET doc = ? WHERE type = 'note' AND id = ?`, `DELETE FROM resource_parts WHERE id = ?`, `DELETE FROM part_versions WHERE id = ?`} {
				args := []any{f.noteID}
				if strings.HasPrefix(s, "UPDATE") {
					args = []any{whole[2], f.noteID}
				}
				if _, err := o.raw.ExecContext(ctx, o.q(s), args...); err != nil {
					t.Fatal(err)
				}
			}
			st.Close()

			st = o.reopen()
			n, err := service.UpgradeNotes(ctx, st)
			if err != nil || n != 1 {
				t.Fatalf("UpgradeNotes moved %d Notes, %v; want 1", n, err)
			}
			if n, err := service.UpgradeNotes(ctx, st); err != nil || n != 0 {
				t.Fatalf("a second UpgradeNotes moved %d, %v; want 0", n, err)
			}
			svc := service.New(st)
			r, d, err := svc.LoadNote(ctx, f.noteID)
			if err != nil || r.Version != 2 || noteJSON(t, *d) != whole[2] || !note.IsHead(r.Doc) {
				t.Fatalf("after the upgrade: version %d, head %v, %v\n got %s\nwant %s", r.Version, note.IsHead(r.Doc), err, noteJSON(t, *d), whole[2])
			}
			for v, want := range whole {
				d, err := svc.NoteAt(ctx, f.noteID, v)
				if err != nil || noteJSON(t, d) != want {
					t.Fatalf("version %d after the upgrade: %v\n got %s\nwant %s", v, err, noteJSON(t, d), want)
				}
			}
			if _, err := svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: 2, IdempotencyKey: "after-upgrade-1",
				Operation: "sheet_set_range", StartRow: ptr(0), StartCol: ptr(0), Values: [][]any{{2.0}}}); err != nil {
				t.Fatal(err)
			}
			if since := partsByKey(t, st, f.noteID, 2); len(since) != 1 {
				t.Fatalf("the first write after the upgrade stored %v; want one block", since)
			}
			d3, err := service.New(st).NoteAt(ctx, f.noteID, 3)
			if err != nil || d3.Tabs[3].Sheets[0].Cells[0][0] != 2.0 || d3.Markdown != "Stored whole ☃" {
				t.Fatalf("version 3: %v %v", d3, err)
			}

			// What each version changed reads the same across the upgrade:
			// between versions stored whole, across the line, and after it.
			cellsOf := func(since, v int64) string {
				t.Helper()
				res, err := svc.DiffVersion(ctx, f.person, service.DiffArgs{NoteID: f.noteID, Version: v, Since: since})
				if err != nil {
					t.Fatalf("diff %d…%d: %v", since, v, err)
				}
				var out []string
				for _, td := range res.Tabs {
					for _, l := range td.Lines {
						out = append(out, l.Op+" "+l.Text)
					}
					for _, c := range td.Cells {
						out = append(out, fmt.Sprintf("%s %v→%v", c.Address, c.Before, c.After))
					}
				}
				return strings.Join(out, ", ")
			}
			if got := cellsOf(1, 2); got != "added Stored whole ☃, A1 <nil>→1, B1 <nil>→a, B3 <nil>→true" {
				t.Errorf("version 2 (stored whole) changed %q", got)
			}
			if got := cellsOf(2, 3); got != "A1 1→2" {
				t.Errorf("version 3 (by parts) changed %q", got)
			}
			if got := cellsOf(1, 3); got != "added Stored whole ☃, A1 <nil>→2, B1 <nil>→a, B3 <nil>→true" {
				t.Errorf("versions 2 and 3 together changed %q", got)
			}
			// Restoring a version stored whole gives it back.
			if _, err := svc.RestoreVersion(ctx, f.op, service.RestoreArgs{NoteID: f.noteID, Version: 1}); err != nil {
				t.Fatal(err)
			}
			_, d4, err := service.New(st).LoadNote(ctx, f.noteID)
			if err != nil {
				t.Fatal(err)
			}
			var want note.Doc
			if err := json.Unmarshal([]byte(whole[1]), &want); err != nil {
				t.Fatal(err)
			}
			sameNote(t, "version 1, stored whole, restored", *d4, want)
		})
	}
}
