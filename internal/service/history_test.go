package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// A version of a Note reads as it was: its strip and each tab's content,
// whatever was written since; versions it never had, and callers who do
// not reach it now, are refused.
func TestNoteAtVersion(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		c := f.person
		tab, err := f.svc.CreateNoteTab(ctx, c, service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), TabType: "slides", Label: "Deck"})
		if err != nil {
			t.Fatal(err)
		}
		slide, err := f.svc.EditNoteTab(ctx, c, service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: tab.Version, Operation: "slide_add", Title: ptr("Before")})
		if err != nil {
			t.Fatal(err)
		}
		at := slide.Version
		after, err := f.svc.UpdateSlide(ctx, c, service.UpdateSlideArgs{SlideArgs: service.SlideArgs{NoteID: f.noteID, TabID: tab.TabID, SlideID: slide.SlideIDs[0], Guard: service.Guard{ExpectedVersion: at}}, Title: ptr("After")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.UpdateTab(ctx, c, service.UpdateTabArgs{NoteID: f.noteID, TabID: tab.TabID, Label: ptr("Renamed"), Guard: service.Guard{ExpectedVersion: after.Version}}); err != nil {
			t.Fatal(err)
		}

		v, err := f.svc.ReadNoteAt(ctx, c, f.noteID, at)
		if err != nil {
			t.Fatal(err)
		}
		if v.CurrentVersion != at+2 || v.Version != at {
			t.Errorf("version %d of the Note, which is at %d now, reads as %d (current %d)", at, at+2, v.Version, v.CurrentVersion)
		}
		found := false
		for _, r := range v.Tabs {
			found = found || (r.TabID == tab.TabID && r.Label == "Deck")
		}
		if !found {
			t.Errorf("the strip at version %d = %v; want %s labelled Deck", at, v.Tabs, tab.TabID)
		}
		old, err := f.svc.ReadTabAt(ctx, c, f.noteID, at, tab.TabID)
		if err != nil {
			t.Fatal(err)
		}
		if old.Version != at || old.Label != "Deck" || len(old.Slides) != 1 || old.Slides[0].Title != "Before" {
			t.Fatalf("the slides tab at version %d = %+v", at, old)
		}
		now, err := f.svc.ReadTabAt(ctx, c, f.noteID, v.CurrentVersion, tab.TabID)
		if err != nil || now.Label != "Renamed" || now.Slides[0].Title != "After" {
			t.Fatalf("the slides tab at the current version = %+v, %v", now, err)
		}

		// The tab did not exist at version 1; versions out of range name version.
		_, err = f.svc.ReadTabAt(ctx, c, f.noteID, 1, tab.TabID)
		wantProblem(t, err, note.CodeUnknownTab, "tab_id", "version 1")
		for _, bad := range []int64{0, -1, v.CurrentVersion + 1} {
			_, err := f.svc.ReadNoteAt(ctx, c, f.noteID, bad)
			wantProblem(t, err, problem.Invalid, "version")
		}
		_, err = f.svc.ReadTabAt(ctx, c, f.noteID, 1, "bad\x00id")
		wantProblem(t, err, problem.Invalid, "tab_id")

		// A token reaches a version only while it reaches the Note.
		tok := service.Agent(auth.Principal{Workspace: f.ws, User: f.owner, TokenID: "tok_other", Scopes: []string{auth.ScopeRead}, Notes: []string{"note_other"}})
		_, err = f.svc.ReadNoteAt(ctx, tok, f.noteID, 1)
		wantProblem(t, err, problem.NotFound, "note_id")
		_, err = f.svc.ReadNoteAt(ctx, service.Person("ws_other", f.owner, service.RoleOwner), f.noteID, 1)
		wantProblem(t, err, problem.NotFound, "note_id")
	})
}

// What a version changed, read from the parts history keeps, is what the
// two versions, rebuilt whole, differ in: for every version of a Note
// edited at random, and for runs of versions; a page of history is read
// newest first, and the arguments are checked.
func TestDiffVersionIsWhatTheVersionsDifferIn(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		model := editAtRandom(t, f, 50, 21)
		want := func(since, v int64) note.VersionDiff {
			t.Helper()
			var before note.Side
			if since > 0 {
				d := model[since]
				var err error
				if before, err = note.Stored(&d); err != nil {
					t.Fatal(err)
				}
			}
			d := model[v]
			after, err := note.Stored(&d)
			if err != nil {
				t.Fatal(err)
			}
			out, err := note.DiffVersions(before, after)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		check := func(since, v int64) {
			t.Helper()
			got, err := f.svc.DiffVersion(ctx, f.person, service.DiffArgs{NoteID: f.noteID, Version: v, Since: since})
			if err != nil {
				t.Fatalf("diff %d…%d: %v", since, v, err)
			}
			if w := want(since, v); !reflect.DeepEqual(got.VersionDiff, w) {
				g, _ := json.Marshal(got.VersionDiff)
				ws, _ := json.Marshal(w)
				t.Fatalf("diff %d…%d from history:\n %.800s\nrebuilt whole:\n %.800s", since, v, g, ws)
			}
		}
		last := int64(len(model))
		for v := int64(1); v <= last; v++ {
			since := v - 1
			check(since, v)
		}
		for _, run := range [][2]int64{{1, last}, {3, 20}, {10, 11}, {25, last}} {
			check(run[0], run[1])
		}
		d, err := f.svc.DiffVersion(ctx, f.person, service.DiffArgs{NoteID: f.noteID, Version: 5})
		if err != nil || d.Since != 4 || d.Version != 5 || d.CurrentVersion != last {
			t.Fatalf("diff of version 5 = since %d, version %d, current %d, %v", d.Since, d.Version, d.CurrentVersion, err)
		}

		for _, a := range []service.DiffArgs{{Version: 0}, {Version: last + 1}, {Version: -1}} {
			a.NoteID = f.noteID
			_, err := f.svc.DiffVersion(ctx, f.person, a)
			wantProblem(t, err, problem.Invalid, "version", fmt.Sprint(last))
		}
		for _, since := range []int64{5, 6, -1} {
			_, err := f.svc.DiffVersion(ctx, f.person, service.DiffArgs{NoteID: f.noteID, Version: 5, Since: since})
			wantProblem(t, err, problem.Invalid, "since", "older than 5")
		}
		_, err = f.svc.DiffVersion(ctx, f.person, service.DiffArgs{NoteID: "note_nope", Version: 1})
		wantProblem(t, err, problem.NotFound, "note_id")

		// The history, a page at a time, newest first.
		var seen []int64
		cursor := ""
		for {
			h, err := f.svc.NoteHistory(ctx, f.person, service.HistoryArgs{NoteID: f.noteID, Page: service.Page{Cursor: cursor, Limit: 7}})
			if err != nil {
				t.Fatal(err)
			}
			if h.Version != last {
				t.Fatalf("a page says the Note is at %d, want %d", h.Version, last)
			}
			for _, e := range h.Versions {
				seen = append(seen, e.Version)
			}
			if cursor = h.NextCursor; cursor == "" {
				break
			}
		}
		for i, v := range seen {
			if v != last-int64(i) {
				t.Fatalf("the pages list %v; want %d down to 1", seen, last)
			}
		}
		if len(seen) != int(last) {
			t.Fatalf("the pages list %d versions, want %d", len(seen), last)
		}
		_, err = f.svc.NoteHistory(ctx, f.person, service.HistoryArgs{NoteID: f.noteID, Page: service.Page{Limit: 51}})
		wantProblem(t, err, problem.Invalid, "limit")
		_, err = f.svc.NoteHistory(ctx, f.person, service.HistoryArgs{NoteID: f.noteID, Page: service.Page{Cursor: b64("h:" + fmt.Sprint(last+1))}})
		wantProblem(t, err, problem.Invalid, "cursor")
	})
}
