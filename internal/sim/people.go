package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store"
)

// Person is the people's side of an in-process server: what a person does
// in the web app, straight on the service and through the same guarded
// write (a person's edit carries the version their editor was based on).
type Person struct {
	Svc   *service.Service
	Owner service.Owner
}

var _ People = (*Person)(nil)

// NewPerson acts as the workspace owner.
func NewPerson(svc *service.Service, o service.Owner) *Person { return &Person{Svc: svc, Owner: o} }

func (p *Person) ws() string   { return p.Owner.Workspace.ID }
func (p *Person) user() string { return p.Owner.User.ID }

// EditMarkdown applies edit to the markdown if the Note is still at expected.
func (p *Person) EditMarkdown(ctx context.Context, noteID string, expected int64, edit func(text string) string) (int64, error) {
	return p.Svc.PersonEdit(ctx, p.ws(), p.user(), noteID, expected, "markdown_edited", func(d *note.Doc) ([]string, error) {
		d.Markdown = edit(d.Markdown)
		return []string{note.TypeMarkdown}, nil
	})
}

// EditSheetCell writes one cell of the tab's first sheet, guarded.
func (p *Person) EditSheetCell(ctx context.Context, noteID, tabID string, expected int64, row, col int, v any) (int64, error) {
	return p.Svc.PersonEdit(ctx, p.ws(), p.user(), noteID, expected, "sheet_edited", func(d *note.Doc) ([]string, error) {
		if _, err := note.SheetSetRange(d, tabID, "", row, col, [][]any{{v}}); err != nil {
			return nil, err
		}
		return []string{tabID}, nil
	})
}

// MoveTab drags a tab to position to, on whatever the strip is now (the
// tab strip acts have no editor state to go stale).
func (p *Person) MoveTab(ctx context.Context, noteID, tabID string, to int) error {
	return p.current(ctx, noteID, "tab_moved", func(d *note.Doc) ([]string, error) {
		return []string{tabID}, note.MoveTab(d, tabID, to)
	})
}

// RenameTab sets a tab's label.
func (p *Person) RenameTab(ctx context.Context, noteID, tabID, label string) error {
	return p.current(ctx, noteID, "tab_renamed", func(d *note.Doc) ([]string, error) {
		return []string{tabID}, note.RenameTab(d, tabID, label)
	})
}

// AddSlidesTab adds an empty slides tab at the end of the strip.
func (p *Person) AddSlidesTab(ctx context.Context, noteID, label string) (string, error) {
	var id string
	err := p.current(ctx, noteID, "tab_created", func(d *note.Doc) ([]string, error) {
		t, err := note.CreateTab(d, note.TypeSlides, label, nil, p.Svc.Now())
		id = t.ID
		return []string{t.ID}, err
	})
	return id, err
}

// current runs a guarded edit against the version it just read, reading
// again if someone else wrote in between.
func (p *Person) current(ctx context.Context, noteID, kind string, edit func(d *note.Doc) ([]string, error)) error {
	for attempt := 0; ; attempt++ {
		_, v, err := p.Snapshot(ctx, noteID)
		if err != nil {
			return err
		}
		_, err = p.Svc.PersonEdit(ctx, p.ws(), p.user(), noteID, v, kind, edit)
		if !IsConflict(err) || attempt == 20 {
			return err
		}
	}
}

// Snapshot is what the person's editor loads: the document and its version.
func (p *Person) Snapshot(ctx context.Context, noteID string) (note.Doc, int64, error) {
	r, d, err := p.Svc.LoadNote(ctx, noteID)
	if err != nil {
		return note.Doc{}, 0, fmt.Errorf("note %s: %w", noteID, err)
	}
	return note.Clone(d), r.Version, nil
}

// NewNote creates an approved Note, filled by build.
func (p *Person) NewNote(ctx context.Context, title string, build func(d *note.Doc) error) (string, error) {
	return p.Svc.CreateNote(ctx, p.ws(), p.user(), title, true, build)
}

// History is the Note's version history (with commit times).
func (p *Person) History(ctx context.Context, noteID string) ([]store.VersionInfo, error) {
	return p.Svc.Store.History(ctx, store.TypeNote, noteID)
}

// IsConflict reports a version conflict, from the service or as text.
func IsConflict(err error) bool {
	if err == nil {
		return false
	}
	var pr *problem.Problem
	if errors.As(err, &pr) {
		return pr.Code == problem.Conflict
	}
	return strings.Contains(err.Error(), "version_conflict")
}

// The people's side beyond the People interface, which the experiments use
// when the Env offers it (in-process runs).
type (
	noteMaker interface {
		NewNote(ctx context.Context, title string, build func(d *note.Doc) error) (string, error)
	}
	noteReader interface {
		Snapshot(ctx context.Context, noteID string) (note.Doc, int64, error)
	}
	historian interface {
		History(ctx context.Context, noteID string) ([]store.VersionInfo, error)
	}
)
