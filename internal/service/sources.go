package service

import (
	"context"

	"foundry/internal/note"
	"foundry/internal/store"
	"foundry/internal/urlnorm"
)

// A Note's sources: a citation added (a page already attached, in any
// spelling that normalizes the same, answers its existing source) or
// removed (a person's act).

// AddSourceArgs are add_note_source's arguments.
type AddSourceArgs struct {
	NoteID          string `json:"note_id"`
	ExpectedVersion int64  `json:"expected_version"`
	IdempotencyKey  string `json:"idempotency_key"`
	Title           string `json:"title"`
	URL             string `json:"url"`
	// DependsOn, when sent (not nil), names the tabs the citation was based
	// on: only a change of one of them, or of the Sources tab, since
	// ExpectedVersion refuses it (depends.go).
	DependsOn []string `json:"depends_on,omitempty"`
}

// SourceAdded is add_note_source's answer.
type SourceAdded struct {
	NoteWritten
	SourceID        string `json:"source_id"`
	URL             string `json:"url"`
	NormalizedURL   string `json:"normalized_url"`
	Title           string `json:"title"`
	AlreadyAttached bool   `json:"already_attached"` // the page was there: its existing source
}

// AddNoteSource attaches a citation; a page already attached (in any
// spelling that normalizes the same) answers the existing source, with
// AlreadyAttached and no new version.
func (s *Service) AddNoteSource(ctx context.Context, c Caller, a AddSourceArgs) (SourceAdded, error) {
	// The fingerprint is the normalized URL alone, so re-adding a page with a
	// better title under the same key returns the first source.
	norm, normErr := urlnorm.Normalize(a.URL)
	return noteWrite(ctx, s, c, a.NoteID, Guard{a.ExpectedVersion, a.IdempotencyKey}, noteOp{
		kind: "source_added", sizeField: "url", meaning: "add_note_source:" + norm, deps: newDepends(a.DependsOn, note.TypeSources),
		pre: func() error {
			if normErr != nil {
				return normErr // already a problem naming url
			}
			_, err := note.CheckSourceTitle(a.Title)
			return err
		},
	}, func(_ *store.Resource, d *note.Doc, _ *store.Change) (SourceAdded, []string, error) {
		src, dup, err := note.AddSource(d, a.Title, a.URL, s.Now())
		if err != nil {
			return SourceAdded{}, nil, err
		}
		return SourceAdded{SourceID: src.ID, URL: src.URL, NormalizedURL: src.NormURL, Title: src.Title, AlreadyAttached: dup}, []string{note.TypeSources}, nil
	})
}

// SourceArgs name one source of one Note, with the guard of a write on it.
type SourceArgs struct {
	NoteID   string `json:"note_id"`
	SourceID string `json:"source_id"`
	Guard
}

// DeleteSource removes a citation (a person's act, as deleting a tab is).
func (s *Service) DeleteSource(ctx context.Context, c Caller, a SourceArgs) (NoteWritten, error) {
	if err := c.personOnly("deleting a source"); err != nil {
		return NoteWritten{}, err
	}
	if err := CheckID("source_id", a.SourceID); err != nil {
		return NoteWritten{}, err
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "source_deleted", sizeField: "source_id", meaning: struct{ Op, Source string }{"delete_source", a.SourceID}},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (NoteWritten, []string, error) {
			if err := note.DeleteSource(d, a.SourceID); err != nil {
				return NoteWritten{}, nil, err
			}
			return NoteWritten{}, []string{note.TypeSources}, nil
		})
}
