package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
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

// as is the person acting: the workspace's owner, signed in.
func (p *Person) as() service.Caller {
	return service.Person(p.Owner.Workspace.ID, p.Owner.User.ID, service.RoleOwner)
}

// EditMarkdown applies edit to the markdown of version expected and saves
// it as the web editor does: the whole text, based on that version.
func (p *Person) EditMarkdown(ctx context.Context, noteID string, expected int64, edit func(text string) string) (int64, error) {
	d, err := p.Svc.NoteAt(ctx, noteID, expected)
	if err != nil {
		return 0, err
	}
	text := edit(d.Markdown)
	res, err := p.Svc.EditNoteTab(ctx, p.as(), service.EditTabArgs{NoteID: noteID, TabID: note.TypeMarkdown, ExpectedVersion: expected, Operation: "replace_text", Text: &text})
	return res.Version, err
}

// EditSheetCell writes one cell of the tab's first sheet, guarded.
func (p *Person) EditSheetCell(ctx context.Context, noteID, tabID string, expected int64, row, col int, v any) (int64, error) {
	res, err := p.Svc.EditNoteTab(ctx, p.as(), service.EditTabArgs{NoteID: noteID, TabID: tabID, ExpectedVersion: expected, Operation: "sheet_set_range",
		StartRow: &row, StartCol: &col, Values: [][]any{{v}}})
	return res.Version, err
}

// MoveTab drags a tab to position to, on whatever the strip is now (the
// tab strip acts have no editor state to go stale).
func (p *Person) MoveTab(ctx context.Context, noteID, tabID string, to int) error {
	return p.current(ctx, noteID, func(v int64) error {
		_, err := p.Svc.UpdateTab(ctx, p.as(), service.UpdateTabArgs{NoteID: noteID, TabID: tabID, Position: &to, Guard: service.Guard{ExpectedVersion: v}})
		return err
	})
}

// RenameTab sets a tab's label.
func (p *Person) RenameTab(ctx context.Context, noteID, tabID, label string) error {
	return p.current(ctx, noteID, func(v int64) error {
		_, err := p.Svc.UpdateTab(ctx, p.as(), service.UpdateTabArgs{NoteID: noteID, TabID: tabID, Label: &label, Guard: service.Guard{ExpectedVersion: v}})
		return err
	})
}

// AddSlidesTab adds an empty slides tab at the end of the strip.
func (p *Person) AddSlidesTab(ctx context.Context, noteID, label string) (string, error) {
	var id string
	err := p.current(ctx, noteID, func(v int64) error {
		res, err := p.Svc.CreateNoteTab(ctx, p.as(), service.CreateTabArgs{NoteID: noteID, ExpectedVersion: v, TabType: note.TypeSlides, Label: label})
		id = res.TabID
		return err
	})
	return id, err
}

// current runs a write against the version it just read, reading again if
// someone else wrote in between.
func (p *Person) current(ctx context.Context, noteID string, write func(version int64) error) error {
	for attempt := 0; ; attempt++ {
		tabs, err := p.Svc.ListNoteTabs(ctx, p.as(), noteID)
		if err != nil {
			return err
		}
		err = write(tabs.Version)
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
	res, err := p.Svc.CreateNoteFrom(ctx, p.as(), service.CreateNoteArgs{Title: title, Approved: true}, build)
	return res.NoteID, err
}

// History is the Note's whole version history, oldest first: each version
// and when it was committed (read a page at a time, as people's history
// view reads it).
func (p *Person) History(ctx context.Context, noteID string) ([]service.VersionEntry, error) {
	var all []service.VersionEntry
	cursor := ""
	for {
		h, err := p.Svc.NoteHistory(ctx, p.as(), service.HistoryArgs{NoteID: noteID, Page: service.Page{Cursor: cursor, Limit: service.MaxPage}})
		if err != nil {
			return nil, err
		}
		all = append(all, h.Versions...)
		if cursor = h.NextCursor; cursor == "" {
			slices.Reverse(all)
			return all, nil
		}
	}
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
		History(ctx context.Context, noteID string) ([]service.VersionEntry, error)
	}
)
