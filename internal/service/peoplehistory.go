package service

import (
	"context"
	"errors"
	"fmt"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// People's view of a Note's past: the Note as it was at one version, and
// one tab of it, rebuilt from history as a restore rebuilds it.

// PeopleNoteAt is Note id as it was at version, for a caller who may see
// the Note now; r is the Note as it is now. A version the Note never had
// (or one its history no longer holds) is a problem naming version.
func (s *Service) PeopleNoteAt(ctx context.Context, c Caller, id string, version int64) (store.Resource, note.Doc, error) {
	r, _, err := s.PeopleNote(ctx, c, id)
	if err != nil {
		return store.Resource{}, note.Doc{}, err
	}
	if version < 1 || version > r.Version {
		return store.Resource{}, note.Doc{}, problem.New(problem.Invalid, "version", "give a version between 1 and %d (the Note is at version %d); got %d", r.Version, r.Version, version).With("current_version", r.Version)
	}
	d, err := s.NoteAt(ctx, id, version)
	var pr *problem.Problem
	if errors.As(err, &pr) && pr.Code == problem.NotFound {
		return store.Resource{}, note.Doc{}, problem.New(problem.NotFound, "version", "version %d of Note %s is no longer kept: list the versions there are with GET /api/notes/%s/history", version, problem.Excerpt(id), problem.Excerpt(id))
	}
	if err != nil {
		return store.Resource{}, note.Doc{}, err
	}
	return r, d, nil
}

// PeopleReadTabAt is one tab of Note id as it was at version, as
// PeopleReadTab gives a tab now (a files tab: its metadata only). Its
// Version is the version asked for.
func (s *Service) PeopleReadTabAt(ctx context.Context, c Caller, id string, version int64, tabID string) (TabContent, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return TabContent{}, err
	}
	r, d, err := s.PeopleNoteAt(ctx, c, id, version)
	if err != nil {
		return TabContent{}, err
	}
	t, err := note.FindTab(&d, tabID)
	if err != nil {
		var pr *problem.Problem
		if errors.As(err, &pr) {
			pr.Message = fmt.Sprintf("version %d of the Note has no tab %s: list that version's tabs with GET /api/notes/%s/versions/%d", version, note.Quote(tabID), problem.Excerpt(id), version)
		}
		return TabContent{}, err
	}
	x := note.Read(&d, t)
	return TabContent{NoteID: r.ID, Version: version, TabID: t.ID, Type: t.Type, Label: t.Label,
		Text: x.Text, Slides: x.Slides, Sheets: x.Sheets, Sources: x.Sources, Files: x.Files}, nil
}
