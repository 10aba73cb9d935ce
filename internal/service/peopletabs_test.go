package service_test

import (
	"context"
	"errors"
	"testing"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// A replayed people's write answers the IDs of its first result, even after
// later writes made more of the same kind.
func TestPeopleTabsReplayKeepsTheirIDs(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		c := service.PersonCaller(f.ws, f.owner)
		v := f.version(t)
		tab, err := f.svc.PeopleCreateTab(ctx, c, f.noteID, "slides", "Deck", service.PeopleWrite{Expected: v, Key: "people-tab-0001"})
		if err != nil {
			t.Fatal(err)
		}
		add := func(key, title string, expected int64) service.PeopleSlideResult {
			t.Helper()
			res, err := f.svc.PeopleAddSlide(ctx, c, f.noteID, tab.TabID, note.SlideInput{Title: title}, service.SlideLook{}, nil, service.PeopleWrite{Expected: expected, Key: key})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		first := add("people-slide-001", "One", tab.Version)
		second := add("people-slide-002", "Two", first.Version)
		again := add("people-slide-001", "One", first.Version)
		if !again.Replayed || again.SlideID != first.SlideID || second.SlideID == first.SlideID {
			t.Fatalf("first %+v, second %+v, replay %+v; want the replay to name the first slide", first, second, again)
		}
		tabAgain, err := f.svc.PeopleCreateTab(ctx, c, f.noteID, "slides", "Deck", service.PeopleWrite{Expected: v, Key: "people-tab-0001"})
		if err != nil || !tabAgain.Replayed || tabAgain.TabID != tab.TabID {
			t.Fatalf("replayed tab create = %+v, %v; want %s", tabAgain, err, tab.TabID)
		}
		src, err := f.svc.PeopleAddSource(ctx, c, f.noteID, "Example", "https://example.com/x", service.PeopleWrite{Expected: second.Version})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.PeopleAddSource(ctx, c, f.noteID, "Again", "HTTPS://EXAMPLE.COM/x/", service.PeopleWrite{Expected: src.Version})
		var pr *problem.Problem
		if !errors.As(err, &pr) || pr.Code != service.CodeSourceExists || pr.Message != service.SourceExistsDetail || pr.Details["source_id"] != src.SourceID {
			t.Fatalf("the same page again: %v; want source_exists naming %s", err, src.SourceID)
		}
		// A read-only token writes nothing.
		tc := service.TokenCaller(f.read)
		if _, err := f.svc.PeopleDeleteSlide(ctx, tc, f.noteID, tab.TabID, first.SlideID, service.PeopleWrite{Expected: src.Version}); !errors.As(err, &pr) || pr.Code != problem.Scope {
			t.Fatalf("a read token deleting a slide: %v; want %s", err, problem.Scope)
		}
	})
}
