package service_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"foundry/internal/service"
)

// TestListNotesFollowsTitles: list_notes' title query finds a Note by the
// title it has now, through every write that changes one: create, rename,
// restore of an older version, delete; on both stores.
func TestListNotesFollowsTitles(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		agent := service.Agent(f.read)
		find := func(c service.Caller, query string) []string {
			t.Helper()
			l, err := f.svc.ListNotes(ctx, c, service.ListNotesArgs{Query: query})
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, n := range l.Notes {
				ids = append(ids, n.NoteID)
			}
			return ids
		}
		want := func(c service.Caller, query string, ids ...string) {
			t.Helper()
			if got := find(c, query); !slices.Equal(got, append([]string{}, ids...)) {
				t.Errorf("query %q: %v, want %v", query, got, ids)
			}
		}
		n, err := f.svc.CreateNote(ctx, f.person, service.CreateNoteArgs{Title: "Quarterly Ärger", Approved: true})
		if err != nil {
			t.Fatal(err)
		}
		want(f.person, "ÄRGER", n.NoteID)
		want(agent, "quarterly ä", n.NoteID)

		title := "Annual review"
		r, err := f.svc.UpdateNote(ctx, f.person, service.UpdateNoteArgs{NoteID: n.NoteID, Title: &title, Guard: service.Guard{ExpectedVersion: n.Version}})
		if err != nil {
			t.Fatal(err)
		}
		want(f.person, "ärger")
		want(f.person, "annual rev", n.NoteID)

		res, err := f.svc.RestoreVersion(ctx, f.person, service.RestoreArgs{NoteID: n.NoteID, Version: 1, Guard: service.Guard{ExpectedVersion: r.Version}})
		if err != nil {
			t.Fatal(err)
		}
		want(f.person, "annual")
		want(f.person, "ärger", n.NoteID)

		if _, err := f.svc.DeleteNote(ctx, f.person, service.NoteArgs{NoteID: n.NoteID, Guard: service.Guard{ExpectedVersion: res.Version}}); err != nil {
			t.Fatal(err)
		}
		want(f.person, "ärger")
		want(agent, "ärger")
	})
}

// TestListNotesPagesPastDeleted: a person's pages leave deleted Notes out
// and are full until the last, with and without a title query; an agent's
// hold the approved Notes only; on both stores.
func TestListNotesPagesPastDeleted(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		var live, approved []string
		for i := range 30 {
			n, err := f.svc.CreateNote(ctx, f.person, service.CreateNoteArgs{Title: fmt.Sprintf("Plan %02d", i), Approved: i%3 != 0})
			if err != nil {
				t.Fatal(err)
			}
			if i%4 == 1 {
				if _, err := f.svc.DeleteNote(ctx, f.person, service.NoteArgs{NoteID: n.NoteID, Guard: service.Guard{ExpectedVersion: n.Version}}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			live = append(live, n.NoteID)
			if i%3 != 0 {
				approved = append(approved, n.NoteID)
			}
		}
		slices.Sort(live)
		slices.Sort(approved)
		for _, c := range []struct {
			name   string
			caller service.Caller
			want   []string
		}{{"person", f.person, live}, {"agent", service.Agent(f.read), approved}} {
			for _, query := range []string{"plan", "pl", ""} {
				want := c.want
				if query == "" {
					want = append(slices.Clone(want), f.noteID) // the fixture's Note, "Research"
					slices.Sort(want)
				}
				var got []string
				cursor := ""
				for range 30 {
					l, err := f.svc.ListNotes(ctx, c.caller, service.ListNotesArgs{Query: query, Page: service.Page{Cursor: cursor, Limit: 4}})
					if err != nil {
						t.Fatal(err)
					}
					if l.NextCursor != "" && len(l.Notes) != 4 {
						t.Errorf("%s, query %q: a page of %d with more to come", c.name, query, len(l.Notes))
					}
					for _, n := range l.Notes {
						got = append(got, n.NoteID)
					}
					if cursor = l.NextCursor; cursor == "" {
						break
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s, query %q: %d Notes %v, want %d %v", c.name, query, len(got), got, len(want), want)
				}
			}
		}
	})
}
