package service_test

import (
	"context"
	"errors"
	"testing"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// A replayed write answers the IDs of its first result, even after later
// writes made more of the same kind.
func TestReplayKeepsItsIDs(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		c := f.person
		v := f.version(t)
		newTab := service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: "people-tab-0001", TabType: "slides", Label: "Deck"}
		tab, err := f.svc.CreateNoteTab(ctx, c, newTab)
		if err != nil {
			t.Fatal(err)
		}
		add := func(key, title string, expected int64) service.TabEdited {
			t.Helper()
			res, err := f.svc.EditNoteTab(ctx, c, service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: expected, IdempotencyKey: key, Operation: "slide_add", Title: &title})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		first := add("people-slide-001", "One", tab.Version)
		second := add("people-slide-002", "Two", first.Version)
		again := add("people-slide-001", "One", first.Version)
		if !again.Replayed || again.SlideIDs[0] != first.SlideIDs[0] || second.SlideIDs[0] == first.SlideIDs[0] {
			t.Fatalf("first %+v, second %+v, replay %+v; want the replay to name the first slide", first, second, again)
		}
		tabAgain, err := f.svc.CreateNoteTab(ctx, c, newTab)
		if err != nil || !tabAgain.Replayed || tabAgain.TabID != tab.TabID {
			t.Fatalf("replayed tab create = %+v, %v; want %s", tabAgain, err, tab.TabID)
		}
		src, err := f.svc.AddNoteSource(ctx, c, service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: second.Version, Title: "Example", URL: "https://example.com/x"})
		if err != nil {
			t.Fatal(err)
		}
		dup, err := f.svc.AddNoteSource(ctx, c, service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: src.Version, Title: "Again", URL: "HTTPS://EXAMPLE.COM/x/"})
		if err != nil || !dup.AlreadyAttached || dup.SourceID != src.SourceID || dup.Version != src.Version || len(dup.ChangedTabIDs) != 0 {
			t.Fatalf("the same page again: %+v, %v; want already_attached naming %s, no new version", dup, err, src.SourceID)
		}
		// A read-only token writes nothing.
		var pr *problem.Problem
		tc := service.Agent(f.read)
		if _, err := f.svc.DeleteSlide(ctx, tc, service.SlideArgs{NoteID: f.noteID, TabID: tab.TabID, SlideID: first.SlideIDs[0], Guard: service.Guard{ExpectedVersion: src.Version}}); !errors.As(err, &pr) || pr.Code != problem.Scope {
			t.Fatalf("a read token deleting a slide: %v; want %s", err, problem.Scope)
		}
	})
}
