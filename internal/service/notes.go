package service

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
	"foundry/internal/urlnorm"
)

// NoteSummary is one entry of list_notes.
type NoteSummary struct {
	NoteID    string `json:"note_id"`
	Title     string `json:"title"`
	Version   int64  `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

// NoteList is a page of list_notes.
type NoteList struct {
	Notes      []NoteSummary `json:"notes"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// ListNotesArgs are list_notes' arguments: a title filter and a page.
type ListNotesArgs struct {
	Query string `json:"query"`
	Page
}

// ListNotes: approved Notes the grant can see, by ID, paged.
func (s *Service) ListNotes(ctx context.Context, p auth.Principal, a ListNotesArgs) (NoteList, error) {
	query, cursor := a.Query, a.Cursor
	limit, err := pageLimit(a.Limit)
	if err != nil {
		return NoteList{}, err
	}
	after, err := decodeCursor(cursor, "n")
	if err != nil {
		return NoteList{}, err
	}
	rows, err := s.Store.List(ctx, store.ListQuery{Workspace: p.Workspace, Type: store.TypeNote, ApprovedOnly: true,
		IDs: p.Notes, Query: strings.TrimSpace(query), AfterID: after, Limit: limit + 1})
	if err != nil {
		return NoteList{}, err
	}
	out := []NoteSummary{}
	for i, r := range rows {
		if i == limit {
			break
		}
		out = append(out, NoteSummary{NoteID: r.ID, Title: r.Title, Version: r.Version, UpdatedAt: r.UpdatedAt.Format("2006-01-02T15:04:05Z")})
	}
	res := NoteList{Notes: out}
	if len(rows) > limit {
		res.NextCursor = encodeCursor("n", out[len(out)-1].NoteID)
	}
	return res, nil
}

// agentNote loads a Note the principal may reach: same workspace, approved,
// in the grant. Anything else is not found, never forbidden.
func (s *Service) agentNote(ctx context.Context, p auth.Principal, id string) (store.Resource, note.Doc, error) {
	r, err := s.noteAccess(ctx, p, id)
	if err != nil {
		return store.Resource{}, note.Doc{}, err
	}
	if d, ok := s.docs.get(id, r.Version); ok {
		return r, *d, nil
	}
	full, d, err := s.LoadNote(ctx, id)
	if err != nil {
		return store.Resource{}, note.Doc{}, err
	}
	if full.Workspace != p.Workspace || !full.Approved {
		return store.Resource{}, note.Doc{}, notFound(store.TypeNote, id) // changed between the two reads
	}
	return full, *d, nil
}

// noteAccess checks that the principal may reach the Note: same workspace,
// approved, in the grant; anything else is not found, never forbidden. It
// reads no document.
func (s *Service) noteAccess(ctx context.Context, p auth.Principal, id string) (store.Resource, error) {
	r, err := s.Store.Head(ctx, store.TypeNote, id)
	if err != nil || r.Workspace != p.Workspace || !r.Approved || !p.CanNote(id) {
		if err != nil && err != store.ErrNotFound {
			return store.Resource{}, err
		}
		return store.Resource{}, notFound(store.TypeNote, id)
	}
	return r, nil
}

// NoteTabs is list_note_tabs' answer: every tab and the Note version.
type NoteTabs struct {
	NoteID  string        `json:"note_id"`
	Title   string        `json:"title"`
	Version int64         `json:"version"`
	Tabs    []note.TabRef `json:"tabs"`
}

// ListNoteTabs: every tab instance and the Note version.
func (s *Service) ListNoteTabs(ctx context.Context, p auth.Principal, noteID string) (NoteTabs, error) {
	r, d, err := s.agentNote(ctx, p, noteID)
	if err != nil {
		return NoteTabs{}, err
	}
	return NoteTabs{NoteID: r.ID, Title: r.Title, Version: r.Version, Tabs: note.Refs(&d)}, nil
}

// TabContent is read_note_tab's answer: one tab and the Note version to
// edit against. Exactly one of the content fields is set, by tab type.
type TabContent struct {
	NoteID  string        `json:"note_id"`
	Version int64         `json:"version"`
	TabID   string        `json:"tab_id"`
	Type    string        `json:"type"`
	Label   string        `json:"label"`
	Text    *string       `json:"text,omitempty"`   // markdown
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

// ReadNoteTab: one tab's data and the Note version. Files are metadata only.
func (s *Service) ReadNoteTab(ctx context.Context, p auth.Principal, a TabArgs) (TabContent, error) {
	noteID, tabID := a.NoteID, a.TabID
	r, d, err := s.agentNote(ctx, p, noteID)
	if err != nil {
		return TabContent{}, err
	}
	t, err := note.FindTab(&d, tabID)
	if err != nil {
		return TabContent{}, err
	}
	c := note.Read(&d, t)
	return TabContent{NoteID: r.ID, Version: r.Version, TabID: t.ID, Type: t.Type, Label: t.Label,
		Text: c.Text, Slides: c.Slides, Sheets: c.Sheets, Sources: c.Sources, Files: c.Files}, nil
}

// items is a page of attachments of either kind, as a list.
func items[T any](page []T) []any {
	out := make([]any, len(page))
	for i, x := range page {
		out[i] = x
	}
	return out
}

// SheetRange is read_sheet_range's answer.
type SheetRange struct {
	NoteID   string  `json:"note_id"`
	Version  int64   `json:"version"`
	TabID    string  `json:"tab_id"`
	StartRow int     `json:"start_row"`
	StartCol int     `json:"start_col"`
	Values   [][]any `json:"values"`
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

// ReadSheetRange: a rectangle of at most 100 × 100 cells.
func (s *Service) ReadSheetRange(ctx context.Context, p auth.Principal, a SheetRangeArgs) (SheetRange, error) {
	noteID, tabID, sheetID, row, col, rows, cols := a.NoteID, a.TabID, a.SheetID, a.StartRow, a.StartCol, a.Rows, a.Cols
	r, d, err := s.agentNote(ctx, p, noteID)
	if err != nil {
		return SheetRange{}, err
	}
	vals, err := note.ReadRange(&d, tabID, sheetID, row, col, rows, cols)
	if err != nil {
		return SheetRange{}, err
	}
	return SheetRange{NoteID: r.ID, Version: r.Version, TabID: tabID, StartRow: row, StartCol: col, Values: vals}, nil
}

// Attachments is a page of list_note_attachments: sources or files
// metadata (Items holds []note.Source or []note.File, by kind).
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

// ListNoteAttachments: sources or files metadata, paged; never content or links.
func (s *Service) ListNoteAttachments(ctx context.Context, p auth.Principal, a AttachmentsArgs) (Attachments, error) {
	noteID, kind, cursor := a.NoteID, a.Kind, a.Cursor
	limit, err := pageLimit(a.Limit)
	if err != nil {
		return Attachments{}, err
	}
	if kind != "sources" && kind != "files" {
		return Attachments{}, problem.New(problem.Invalid, "kind", "must be \"sources\" or \"files\" (got %s)", note.Quote(kind))
	}
	r, d, err := s.agentNote(ctx, p, noteID)
	if err != nil {
		return Attachments{}, err
	}
	// off is at most MaxCursorOffset, so off+limit can't overflow; a
	// position past the end (the list shrank) is an empty last page.
	off, err := offsetCursor(cursor, kind)
	if err != nil {
		return Attachments{}, err
	}
	res := Attachments{NoteID: r.ID, Version: r.Version, Kind: kind}
	switch kind {
	case "sources":
		res.Total = len(d.Sources)
		res.Items = items(d.Sources[min(off, res.Total):min(off+limit, res.Total)])
	case "files":
		res.Total = len(d.Files)
		res.Items = items(d.Files[min(off, res.Total):min(off+limit, res.Total)])
	}
	if off+limit < res.Total {
		res.NextCursor = encodeCursor(kind, strconv.Itoa(off+limit))
	}
	return res, nil
}

// CreateTabArgs are create_note_tab's arguments.
type CreateTabArgs struct {
	NoteID          string            `json:"note_id"`
	ExpectedVersion int64             `json:"expected_version"`
	IdempotencyKey  string            `json:"idempotency_key"`
	TabType         string            `json:"tab_type"`
	Label           string            `json:"label,omitempty"`
	Slides          []note.SlideInput `json:"slides,omitempty"`
}

// NoteWritten is what every write of a Note answers: the Note, its version
// after the write, and Written.
type NoteWritten struct {
	NoteID  string `json:"note_id"`
	Version int64  `json:"version"`
	Written
}

func (n *NoteWritten) noteWritten() *NoteWritten { return n }

// TabCreated is create_note_tab's answer: the exact ID for later edits.
type TabCreated struct {
	NoteWritten
	TabID  string `json:"tab_id"`
	Type   string `json:"type"`
	Label  string `json:"label"`
	Slides int    `json:"slides"` // how many slides the outline made
}

// CreateNoteTab adds a slides or sheet tab and answers its exact ID.
func (s *Service) CreateNoteTab(ctx context.Context, p auth.Principal, a CreateTabArgs) (TabCreated, error) {
	fp := a
	fp.ExpectedVersion, fp.IdempotencyKey = 0, ""
	// Every rule of the request itself runs before the write contract.
	pre := func(*note.Doc) error {
		_, err := note.CheckNewTab(a.TabType, a.Label, a.Slides)
		return err
	}
	return noteWrite(ctx, s, p, a.NoteID, a.ExpectedVersion, a.IdempotencyKey, fingerprint(struct {
		Op string
		A  CreateTabArgs
	}{"create_note_tab", fp}), "tab_created", pre, "slides", func(d *note.Doc) (TabCreated, []string, error) {
		t, err := note.CreateTab(d, a.TabType, a.Label, a.Slides, s.Now())
		if err != nil {
			return TabCreated{}, nil, err
		}
		return TabCreated{TabID: t.ID, Type: t.Type, Label: t.Label, Slides: len(t.Slides)}, []string{t.ID}, nil
	})
}

// EditTabArgs are edit_note_tab's arguments; which fields apply depends on
// the operation.
type EditTabArgs struct {
	NoteID          string            `json:"note_id"`
	TabID           string            `json:"tab_id"`
	ExpectedVersion int64             `json:"expected_version"`
	IdempotencyKey  string            `json:"idempotency_key"`
	Operation       string            `json:"operation"`
	Text            *string           `json:"text,omitempty"`
	Title           *string           `json:"title,omitempty"`
	Body            *string           `json:"body,omitempty"`
	Notes           *string           `json:"notes,omitempty"`
	Slides          []note.SlideInput `json:"slides,omitempty"`
	SheetID         *string           `json:"sheet_id,omitempty"`
	StartRow        *int              `json:"start_row,omitempty"`
	StartCol        *int              `json:"start_col,omitempty"`
	Values          [][]any           `json:"values,omitempty"`
	Data            json.RawMessage   `json:"data,omitempty"`
}

// editFields says which optional fields each operation takes, so a field
// that belongs to another operation is refused instead of silently ignored.
var editFields = map[string][]string{
	"replace_text":       {"text"},
	"slide_add":          {"title", "body", "notes"},
	"slides_add_outline": {"slides"},
	"sheet_set_range":    {"sheet_id", "start_row", "start_col", "values"},
	"replace_tab_data":   {"data"},
}

var editRequired = map[string][]string{
	"replace_text":       {"text"},
	"slide_add":          {"title"},
	"slides_add_outline": {"slides"},
	"sheet_set_range":    {"start_row", "start_col", "values"},
	"replace_tab_data":   {"data"},
}

func (a *EditTabArgs) present() map[string]bool {
	return map[string]bool{
		"text": a.Text != nil, "title": a.Title != nil, "body": a.Body != nil, "notes": a.Notes != nil,
		"slides": a.Slides != nil, "sheet_id": a.SheetID != nil, "start_row": a.StartRow != nil,
		"start_col": a.StartCol != nil, "values": a.Values != nil, "data": a.Data != nil,
	}
}

// checkOperationFields is the per-operation rule the schema can't say.
func (a *EditTabArgs) checkOperationFields() error {
	allowed, ok := editFields[a.Operation]
	if !ok {
		return problem.New(problem.Invalid, "operation", "%s is not an operation; use replace_text, slide_add, slides_add_outline, sheet_set_range or replace_tab_data", note.Quote(a.Operation))
	}
	have := a.present()
	for _, f := range []string{"text", "title", "body", "notes", "slides", "sheet_id", "start_row", "start_col", "values", "data"} {
		if have[f] && !contains(allowed, f) {
			return problem.New(problem.Invalid, f, "is not used by operation %s, which takes: %s", a.Operation, strings.Join(allowed, ", "))
		}
	}
	for _, f := range editRequired[a.Operation] {
		if !have[f] {
			return problem.New(problem.Invalid, f, "is required for operation %s", a.Operation)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TabEdited is edit_note_tab's answer; which of the last fields is set
// depends on the operation.
type TabEdited struct {
	NoteWritten
	TabID        string   `json:"tab_id"`
	Operation    string   `json:"operation"`
	Bytes        *int     `json:"bytes,omitempty"`         // replace_text: the text's size
	SlideIDs     []string `json:"slide_ids,omitzero"`      // slide_add, slides_add_outline
	CellsWritten *int     `json:"cells_written,omitempty"` // sheet_set_range
}

// EditNoteTab applies one edit operation to one tab, by exact tab ID.
func (s *Service) EditNoteTab(ctx context.Context, p auth.Principal, a EditTabArgs) (TabEdited, error) {
	if err := a.checkOperationFields(); err != nil {
		return TabEdited{}, err
	}
	fp := a
	fp.ExpectedVersion, fp.IdempotencyKey = 0, ""
	// The fingerprint is what the edit means, not how it was spelled: data
	// and values in canonical JSON (keys sorted, numbers normalized).
	fp.Data = canonicalJSON(a.Data)
	fp.Values = canonicalCells(a.Values)
	return noteWrite(ctx, s, p, a.NoteID, a.ExpectedVersion, a.IdempotencyKey, fingerprint(struct {
		Op string
		A  EditTabArgs
	}{"edit_note_tab", fp}), "tab_edited", func(latest *note.Doc) error {
		if _, ok := note.TypeOfID(a.TabID); !ok && latest == nil {
			// No tab ever has such an ID ("slides", a label); the current
			// tabs are what the refusal lists.
			_, d, err := s.agentNote(ctx, p, a.NoteID)
			if err != nil {
				return err
			}
			latest = &d
		}
		return a.staticRules(latest)
	}, editSizeField[a.Operation], func(d *note.Doc) (TabEdited, []string, error) {
		res := TabEdited{TabID: a.TabID, Operation: a.Operation}
		switch a.Operation {
		case "replace_text":
			if err := note.ReplaceText(d, a.TabID, *a.Text); err != nil {
				return res, nil, err
			}
			n := len(*a.Text)
			res.Bytes = &n
		case "slide_add":
			sl, err := note.SlideAdd(d, a.TabID, note.SlideInput{Title: deref(a.Title), Body: deref(a.Body), Notes: deref(a.Notes)})
			if err != nil {
				return res, nil, err
			}
			res.SlideIDs = []string{sl.ID}
		case "slides_add_outline":
			ss, err := note.SlidesAddOutline(d, a.TabID, a.Slides)
			if err != nil {
				return res, nil, err
			}
			res.SlideIDs = make([]string, len(ss))
			for i, sl := range ss {
				res.SlideIDs[i] = sl.ID
			}
		case "sheet_set_range":
			n, err := note.SheetSetRange(d, a.TabID, deref(a.SheetID), *a.StartRow, *a.StartCol, a.Values)
			if err != nil {
				return res, nil, err
			}
			res.CellsWritten = &n
		case "replace_tab_data":
			if err := note.ReplaceTabData(d, a.TabID, a.Data); err != nil {
				return res, nil, err
			}
		}
		return res, []string{a.TabID}, nil
	})
}

// editSizeField names the argument that makes a Note grow, per operation.
var editSizeField = map[string]string{
	"replace_text":       "text",
	"slide_add":          "body",
	"slides_add_outline": "slides",
	"sheet_set_range":    "values",
	"replace_tab_data":   "data",
}

// staticRules are the rules of an edit that hold in every version of the
// Note, checked against the current one before the write contract: whether
// the operation can ever apply to the tab (a tab's type never changes for
// its ID), and every rule of the payload itself. A stale edit that could
// never succeed is refused for what is wrong with it, not answered
// version_conflict. The tab's type comes from the current document when it
// is at hand (d may be nil), else from the tab ID, which says the type of
// every tab (note.TypeOfID). Whether a tab of a well-formed ID still exists
// depends on the version, so that is left to the write; an ID no tab can
// ever have (a type name such as "slides", a label) is unknown_tab now.
func (a *EditTabArgs) staticRules(d *note.Doc) error {
	typ, known := note.TypeOfID(a.TabID)
	if d != nil {
		t, err := note.FindTab(d, a.TabID)
		switch {
		case err == nil:
			typ, known = t.Type, true
		case !known:
			return err
		}
	}
	if known {
		if err := note.CheckOperation(a.TabID, typ, a.Operation); err != nil {
			return err
		}
	}
	switch a.Operation {
	case "replace_text":
		return note.CheckText(*a.Text)
	case "slide_add":
		return note.CheckSlide(note.SlideInput{Title: deref(a.Title), Body: deref(a.Body), Notes: deref(a.Notes)})
	case "slides_add_outline":
		return note.CheckOutline(a.Slides)
	case "sheet_set_range":
		_, err := note.CheckRange(*a.StartRow, *a.StartCol, a.Values)
		return err
	case "replace_tab_data":
		if known {
			_, err := note.CheckTabData(typ, a.Data)
			return err
		}
	}
	return nil
}

// canonicalJSON is raw with object keys sorted, insignificant space removed,
// string escapes and numbers in one spelling (1, 1.0 and 1e0 are the same
// number). Input that is not JSON is returned as it is; its write fails.
func canonicalJSON(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return raw
	}
	b, err := json.Marshal(canonicalValue(v))
	if err != nil {
		return raw
	}
	return b
}

func canonicalValue(v any) any {
	switch x := v.(type) {
	case map[string]any: // a copy: the caller's value is left as it is
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = canonicalValue(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = canonicalValue(e)
		}
		return l
	case json.Number:
		return canonicalNumber(x)
	case float64:
		return canonicalNumber(json.Number(strconv.FormatFloat(x, 'g', -1, 64)))
	case int:
		return json.Number(strconv.Itoa(x))
	}
	return v
}

// canonicalNumber spells a number as the float64 a cell stores it as.
func canonicalNumber(n json.Number) json.Number {
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return n
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

func canonicalCells(rows [][]any) [][]any {
	if rows == nil {
		return nil
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = make([]any, len(r))
		for j, v := range r {
			out[i][j] = canonicalValue(v)
		}
	}
	return out
}

// AddSourceArgs are add_note_source's arguments.
type AddSourceArgs struct {
	NoteID          string `json:"note_id"`
	ExpectedVersion int64  `json:"expected_version"`
	IdempotencyKey  string `json:"idempotency_key"`
	Title           string `json:"title"`
	URL             string `json:"url"`
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
// spelling that normalizes the same) answers the existing source.
func (s *Service) AddNoteSource(ctx context.Context, p auth.Principal, a AddSourceArgs) (SourceAdded, error) {
	norm, err := urlnorm.Normalize(a.URL)
	if err != nil {
		return SourceAdded{}, err // already a problem naming url
	}
	pre := func(*note.Doc) error {
		_, err := note.CheckSourceTitle(a.Title)
		return err
	}
	// The fingerprint is the normalized URL alone, so re-adding a page with a
	// better title under the same key returns the first source.
	return noteWrite(ctx, s, p, a.NoteID, a.ExpectedVersion, a.IdempotencyKey, fingerprint("add_note_source:"+norm), "source_added", pre, "url",
		func(d *note.Doc) (SourceAdded, []string, error) {
			src, dup, err := note.AddSource(d, a.Title, a.URL, s.Now())
			if err != nil {
				return SourceAdded{}, nil, err
			}
			var changed []string
			if !dup {
				changed = []string{note.TypeSources}
			}
			return SourceAdded{SourceID: src.ID, URL: src.URL, NormalizedURL: src.NormURL, Title: src.Title, AlreadyAttached: dup}, changed, nil
		})
}

// noteEdit is a pure edit of a Note's document: the answer, and the tab IDs
// it changed. An edit that changed no tab (a source already attached)
// changes nothing: no new version, only the key is recorded.
type noteEdit[T any] func(d *note.Doc) (res T, changed []string, err error)

// noteResult is a typed answer of a Note write (it embeds NoteWritten).
type noteResult[T any] interface {
	writeResult[T]
	noteWritten() *NoteWritten
}

// noteWrite is the one way agents write a Note: access check, the rules
// that hold in every version (pre, given the current document when it is
// cached, else nil; it must not change it), then the
// guarded write with the Note as key scope and a pure edit of its document.
// sizeField names the argument a Note-size refusal points at.
func noteWrite[T any, PT noteResult[T]](ctx context.Context, s *Service, p auth.Principal, noteID string, expected int64, key, fp, kind string, pre func(latest *note.Doc) error, sizeField string, edit noteEdit[T]) (T, error) {
	var zero T
	if !p.Has(auth.ScopeWrite) {
		return zero, problem.New("insufficient_scope", "", "this connection is read-only: it lacks the %s scope", auth.ScopeWrite)
	}
	if err := checkKey(key); err != nil {
		return zero, err
	}
	if expected < 1 {
		return zero, problem.New(problem.Invalid, "expected_version", "must be the version of the Note the change is based on (≥ 1)")
	}
	if pre != nil {
		// No document yet: access is checked in the write, on the row it
		// locks, so the rules fall back on what the tab ID says (see
		// staticRules), and a rule that needs the Note reads it with its
		// own access check.
		if err := pre(nil); err != nil {
			return zero, err
		}
	}
	var written *note.Doc
	res, version, err := guardedOut[T, PT](ctx, s, store.Mutation{
		Workspace: p.Workspace, Type: store.TypeNote, ID: noteID, Key: key, Fingerprint: fp,
		ExpectedVersion: expected, Actor: "token:" + p.TokenID,
		// A Note the caller can't reach answers not found before its key
		// is looked at, so no key can be probed on it.
		Access: func(cur *store.Resource) error {
			if cur.Workspace != p.Workspace || !cur.Approved || !p.CanNote(noteID) {
				return notFound(store.TypeNote, noteID)
			}
			return nil
		},
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			written = nil
			var res T
			var changed []string
			d, w, err := s.editInTx(cur, tx, sizeField, func(d *note.Doc) (err error) {
				res, changed, err = edit(d)
				return err
			})
			if err != nil {
				return nil, err
			}
			unchanged := len(changed) == 0
			version := cur.Version + 1
			if unchanged {
				version = cur.Version
			}
			nw := PT(&res).noteWritten()
			nw.NoteID, nw.Version = noteID, version
			if !unchanged {
				written = d
			}
			return &store.Change{Doc: w.Head, Parts: w.Parts, Result: mustJSON(res), Kind: kind, Changed: changed, Unchanged: unchanged}, nil
		},
	})
	if err == nil && written != nil && !PT(&res).written().Replayed {
		s.docs.put(noteID, version, written)
	}
	return res, err
}
