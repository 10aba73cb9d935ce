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
func TestPeopleNoteAtVersion(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		c := service.PersonCaller(f.ws, f.owner)
		tab, err := f.svc.PeopleCreateTab(ctx, c, f.noteID, "slides", "Deck", service.PeopleWrite{Expected: f.version(t)})
		if err != nil {
			t.Fatal(err)
		}
		slide, err := f.svc.PeopleAddSlide(ctx, c, f.noteID, tab.TabID, note.SlideInput{Title: "Before"}, service.SlideLook{}, nil, service.PeopleWrite{Expected: tab.Version})
		if err != nil {
			t.Fatal(err)
		}
		at := slide.Version
		after, err := f.svc.PeopleUpdateSlide(ctx, c, f.noteID, tab.TabID, slide.SlideID, service.SlidePatch{Title: ptr("After")}, service.PeopleWrite{Expected: at})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.PeopleUpdateTab(ctx, c, f.noteID, tab.TabID, ptr("Renamed"), nil, service.PeopleWrite{Expected: after.Version}); err != nil {
			t.Fatal(err)
		}

		cur, d, err := f.svc.PeopleNoteAt(ctx, c, f.noteID, at)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Version != at+2 {
			t.Errorf("the Note now is at %d; want %d", cur.Version, at+2)
		}
		found := false
		for _, r := range note.Refs(&d) {
			found = found || (r.TabID == tab.TabID && r.Label == "Deck")
		}
		if !found {
			t.Errorf("the strip at version %d = %v; want %s labelled Deck", at, note.Refs(&d), tab.TabID)
		}
		old, err := f.svc.PeopleReadTabAt(ctx, c, f.noteID, at, tab.TabID)
		if err != nil {
			t.Fatal(err)
		}
		if old.Version != at || old.Label != "Deck" || len(old.Slides) != 1 || old.Slides[0].Title != "Before" {
			t.Fatalf("the slides tab at version %d = %+v", at, old)
		}
		now, err := f.svc.PeopleReadTabAt(ctx, c, f.noteID, cur.Version, tab.TabID)
		if err != nil || now.Label != "Renamed" || now.Slides[0].Title != "After" {
			t.Fatalf("the slides tab at the current version = %+v, %v", now, err)
		}

		// The tab did not exist at version 1; versions out of range name version.
		_, err = f.svc.PeopleReadTabAt(ctx, c, f.noteID, 1, tab.TabID)
		wantProblem(t, err, note.CodeUnknownTab, "tab_id", "version 1")
		for _, v := range []int64{0, -1, cur.Version + 1} {
			_, _, err := f.svc.PeopleNoteAt(ctx, c, f.noteID, v)
			wantProblem(t, err, problem.Invalid, "version")
		}
		_, err = f.svc.PeopleReadTabAt(ctx, c, f.noteID, 1, "bad\x00id")
		wantProblem(t, err, problem.Invalid, "tab_id")

		// A token reaches a version only while it reaches the Note.
		tok := service.TokenCaller(auth.Principal{Workspace: f.ws, User: f.owner, TokenID: "tok_other", Scopes: []string{auth.ScopeRead}, Notes: []string{"note_other"}})
		_, _, err = f.svc.PeopleNoteAt(ctx, tok, f.noteID, 1)
		wantProblem(t, err, problem.NotFound, "id")
		_, _, err = f.svc.PeopleNoteAt(ctx, service.PersonCaller("ws_other", f.owner), f.noteID, 1)
		wantProblem(t, err, problem.NotFound, "id")
	})
}
