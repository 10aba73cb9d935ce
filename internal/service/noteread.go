package service

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// Reading Notes: the list, one Note's tab strip, a tab, a range of cells,
// the attachments. Every read checks the caller's reach first; a Note it
// cannot reach, or a deleted one, is not found, never forbidden.

// noteHead is Note id as c may see it, without its document: from the
// change-notified head cache when it holds a fresh head, else from the
// store (see headCache).
func (s *Service) noteHead(ctx context.Context, c Caller, id string) (store.Resource, error) {
	if err := CheckID("note_id", id); err != nil {
		return store.Resource{}, err
	}
	// An agent reaches approved Notes only, and a deleted Note is never
	// approved; a person reaches every Note, so a deletion is looked for.
	r, gone, err := s.headOf(ctx, id, !c.IsAgent())
	if err == nil && gone && c.reachesNote(&r) {
		return store.Resource{}, s.trashedAnswer(ctx, id) // a person is told where it is
	}
	if err == nil && (gone || !c.reachesNote(&r)) {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		return store.Resource{}, notFound(store.TypeNote, id)
	}
	return r, err
}

// headOf is Note id's head and, when withDeleted, whether it is deleted
// (false otherwise): the cached head if it is fresh, else the store's, which
// is then cached. A Note not found is not cached.
func (s *Service) headOf(ctx context.Context, id string, withDeleted bool) (store.Resource, bool, error) {
	s.heads.watch(s.Store)
	if h, ok := s.heads.get(id); ok && (h.deletedKnown || !withDeleted) {
		return h.r, h.deleted, nil
	}
	gen, at := s.heads.begin(id)
	r, err := s.Store.Head(ctx, store.TypeNote, id)
	if err != nil {
		return store.Resource{}, false, err
	}
	h := cachedHead{r: r, at: at}
	if withDeleted {
		if h.deleted, err = s.noteDeleted(ctx, id); err != nil {
			return store.Resource{}, false, err
		}
		h.deletedKnown = true
	}
	s.heads.put(id, gen, h)
	return r, h.deleted, nil
}

// noteFor is Note id as c may see it, with its current document (shared:
// read it, never change it).
func (s *Service) noteFor(ctx context.Context, c Caller, id string) (store.Resource, *note.Doc, error) {
	r, err := s.noteHead(ctx, c, id)
	if err != nil {
		return store.Resource{}, nil, err
	}
	if d, ok := s.docs.get(id, r.Version); ok {
		return r, d, nil
	}
	full, d, err := s.LoadNote(ctx, id)
	if err != nil {
		return store.Resource{}, nil, err
	}
	if !c.reachesNote(&full) {
		return store.Resource{}, nil, notFound(store.TypeNote, id) // changed between the two reads
	}
	return full, d, nil
}

func (s *Service) noteDeleted(ctx context.Context, id string) (bool, error) {
	_, err := s.Store.GetObject(ctx, KindNoteDeleted, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// NoteSummary is one entry of a list of Notes.
type NoteSummary struct {
	NoteID    string `json:"note_id"`
	Title     string `json:"title"`
	Version   int64  `json:"version"`
	UpdatedAt string `json:"updated_at"`
	// Approved is connected access; an agent's list holds approved Notes
	// only, so its answer leaves it out.
	Approved bool `json:"-"`
}

// NoteList is a page of Notes.
type NoteList struct {
	Notes      []NoteSummary `json:"notes"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// ListNotesArgs are list_notes' arguments: a title filter and a page.
type ListNotesArgs struct {
	Query string `json:"query"`
	Page
}

// MaxQueryRunes bounds a title filter.
const MaxQueryRunes = 200

// ListNotes lists the Notes c reaches whose title contains the query
// (case-insensitive), by ID, a page at a time; deleted Notes are left out.
func (s *Service) ListNotes(ctx context.Context, c Caller, a ListNotesArgs) (NoteList, error) {
	limit, err := pageLimit(a.Limit)
	if err != nil {
		return NoteList{}, err
	}
	if n := utf8.RuneCountInString(a.Query); n > MaxQueryRunes {
		return NoteList{}, problem.New(problem.Limit, "query", "is %d characters; a title filter has at most %d, so search with a part of the title", n, MaxQueryRunes)
	}
	if err := CheckID("query", a.Query); err != nil {
		return NoteList{}, err
	}
	after, err := decodeCursor(a.Cursor, "n")
	if err != nil {
		return NoteList{}, err
	}
	q := store.ListQuery{Workspace: c.Workspace, Type: store.TypeNote, Query: strings.TrimSpace(a.Query), AfterID: after, Limit: limit + 1}
	if p, ok := c.Principal(); ok {
		q.ApprovedOnly, q.IDs = true, p.Notes
	}
	if !c.IsAgent() {
		// A person's list leaves deleted Notes out in the same read, so a
		// page is whole; an agent's holds approved Notes only, and a
		// deleted Note is never approved.
		q.Unmarked = KindNoteDeleted
	}
	rows, err := s.Store.List(ctx, q)
	if err != nil {
		return NoteList{}, err
	}
	res := NoteList{Notes: make([]NoteSummary, 0, min(len(rows), limit))}
	for _, r := range rows {
		if len(res.Notes) == limit {
			res.NextCursor = encodeCursor("n", res.Notes[limit-1].NoteID)
			break
		}
		res.Notes = append(res.Notes, NoteSummary{NoteID: r.ID, Title: r.Title, Version: r.Version, Approved: r.Approved,
			UpdatedAt: r.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z")})
	}
	return res, nil
}

// NoteTabs is a Note's tab strip and version (list_note_tabs).
type NoteTabs struct {
	NoteID   string        `json:"note_id"`
	Title    string        `json:"title"`
	Version  int64         `json:"version"`
	Tabs     []note.TabRef `json:"tabs"`
	Approved bool          `json:"-"` // connected access (always, for an agent)
}

// ListNoteTabs is every tab instance of a Note and its version.
func (s *Service) ListNoteTabs(ctx context.Context, c Caller, noteID string) (NoteTabs, error) {
	r, d, err := s.noteFor(ctx, c, noteID)
	if err != nil {
		return NoteTabs{}, err
	}
	return NoteTabs{NoteID: r.ID, Title: r.Title, Version: r.Version, Tabs: note.Refs(d), Approved: r.Approved}, nil
}

// TabContent is one tab and the Note version to edit against. Exactly one
// of the content fields is set, by tab type.
type TabContent struct {
	NoteID  string  `json:"note_id"`
	Version int64   `json:"version"`
	TabID   string  `json:"tab_id"`
	Type    string  `json:"type"`
	Label   string  `json:"label"`
	Text    *string `json:"text,omitempty"` // markdown
	// TextRev is the text's revision (markdown): what a live editor
	// syncs from (collab.go). The people's door shows it; an agent's
	// published answer has no such field.
	TextRev *int64        `json:"-"`
	Slides  []note.Slide  `json:"slides,omitzero"`  // slides
	Sheets  []note.Sheet  `json:"sheets,omitzero"`  // sheet
	Sources []note.Source `json:"sources,omitzero"` // sources
	Files   []note.File   `json:"files,omitzero"`   // files: metadata only
}

// TabArgs name one tab of one Note.
type TabArgs struct {
	NoteID string `json:"note_id"`
	TabID  string `json:"tab_id"`
}

func tabContent(noteID string, version int64, d *note.Doc, tabID string) (TabContent, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return TabContent{}, err
	}
	t, err := note.FindTab(d, tabID)
	if err != nil {
		return TabContent{}, err
	}
	x := note.Read(d, t)
	out := TabContent{NoteID: noteID, Version: version, TabID: t.ID, Type: t.Type, Label: t.Label,
		Text: x.Text, Slides: x.Slides, Sheets: x.Sheets, Sources: x.Sources, Files: x.Files}
	if x.Text != nil {
		rev := d.TextRev
		out.TextRev = &rev
	}
	return out, nil
}

// ReadNoteTab is one tab's data and the Note version. Files are metadata
// only.
func (s *Service) ReadNoteTab(ctx context.Context, c Caller, a TabArgs) (TabContent, error) {
	r, d, err := s.noteFor(ctx, c, a.NoteID)
	if err != nil {
		return TabContent{}, err
	}
	return tabContent(r.ID, r.Version, d, a.TabID)
}

// SheetRange is a rectangle of a sheet's cells.
type SheetRange struct {
	NoteID   string  `json:"note_id"`
	Version  int64   `json:"version"`
	TabID    string  `json:"tab_id"`
	StartRow int     `json:"start_row"`
	StartCol int     `json:"start_col"`
	Values   [][]any `json:"values"` // a formula cell's computed value
	// Formulas are the cells of the range that hold a formula.
	Formulas []note.FormulaCell `json:"formulas,omitempty"`
}

// SheetRangeArgs are read_sheet_range's arguments (0-based; sheet_id
// empty: the first sheet).
type SheetRangeArgs struct {
	TabArgs
	SheetID  string `json:"sheet_id"`
	StartRow int    `json:"start_row"`
	StartCol int    `json:"start_col"`
	Rows     int    `json:"rows"`
	Cols     int    `json:"cols"`
}

// ReadSheetRange is a rectangle of at most 100 × 100 cells.
func (s *Service) ReadSheetRange(ctx context.Context, c Caller, a SheetRangeArgs) (SheetRange, error) {
	for _, f := range [][2]string{{"tab_id", a.TabID}, {"sheet_id", a.SheetID}} {
		if err := CheckID(f[0], f[1]); err != nil {
			return SheetRange{}, err
		}
	}
	r, d, err := s.noteFor(ctx, c, a.NoteID)
	if err != nil {
		return SheetRange{}, err
	}
	cells, err := note.ReadCells(d, a.TabID, a.SheetID, a.StartRow, a.StartCol, a.Rows, a.Cols)
	if err != nil {
		return SheetRange{}, err
	}
	return SheetRange{NoteID: r.ID, Version: r.Version, TabID: a.TabID, StartRow: a.StartRow, StartCol: a.StartCol, Values: cells.Values, Formulas: cells.Formulas}, nil
}

// Attachments is a page of a Note's sources or files metadata (Items
// holds []note.Source or []note.File, by kind).
type Attachments struct {
	NoteID     string `json:"note_id"`
	Version    int64  `json:"version"`
	Kind       string `json:"kind"`
	Items      []any  `json:"items"`
	Total      int    `json:"total"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// AttachmentsArgs are list_note_attachments' arguments.
type AttachmentsArgs struct {
	NoteID string `json:"note_id"`
	Kind   string `json:"kind"` // sources or files
	Page
}

// ListNoteAttachments is a page of sources or files metadata; never
// content or links.
func (s *Service) ListNoteAttachments(ctx context.Context, c Caller, a AttachmentsArgs) (Attachments, error) {
	limit, err := pageLimit(a.Limit)
	if err != nil {
		return Attachments{}, err
	}
	if a.Kind != "sources" && a.Kind != "files" {
		return Attachments{}, problem.New(problem.Invalid, "kind", "must be \"sources\" or \"files\" (got %s)", note.Quote(a.Kind))
	}
	r, d, err := s.noteFor(ctx, c, a.NoteID)
	if err != nil {
		return Attachments{}, err
	}
	// off is at most MaxCursorOffset, so off+limit can't overflow; a
	// position past the end (the list shrank) is an empty last page.
	off, err := offsetCursor(a.Cursor, a.Kind)
	if err != nil {
		return Attachments{}, err
	}
	res := Attachments{NoteID: r.ID, Version: r.Version, Kind: a.Kind}
	switch a.Kind {
	case "sources":
		res.Total = len(d.Sources)
		res.Items = items(d.Sources[min(off, res.Total):min(off+limit, res.Total)])
	case "files":
		res.Total = len(d.Files)
		res.Items = items(d.Files[min(off, res.Total):min(off+limit, res.Total)])
	}
	if off+limit < res.Total {
		res.NextCursor = encodeCursor(a.Kind, strconv.Itoa(off+limit))
	}
	return res, nil
}

// items is a page of attachments of either kind, as a list.
func items[T any](page []T) []any {
	out := make([]any, len(page))
	for i, x := range page {
		out[i] = x
	}
	return out
}
