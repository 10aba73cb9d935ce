package service_test

import (
	"context"
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
