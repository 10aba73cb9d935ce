package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// ListNotes: approved Notes the grant can see, by ID, paged.
func (s *Service) ListNotes(ctx context.Context, p auth.Principal, query, cursor string, limit int) (map[string]any, error) {
	limit, err := pageLimit(limit)
	if err != nil {
		return nil, err
	}
	after, err := decodeCursor(cursor, "n")
	if err != nil {
		return nil, err
	}
	rows, err := s.Store.List(ctx, store.ListQuery{Workspace: p.Workspace, Type: store.TypeNote, ApprovedOnly: true,
		IDs: p.Notes, Query: strings.TrimSpace(query), AfterID: after, Limit: limit + 1})
	if err != nil {
		return nil, err
	}
	out := []NoteSummary{}
	for i, r := range rows {
		if i == limit {
			break
		}
		out = append(out, NoteSummary{NoteID: r.ID, Title: r.Title, Version: r.Version, UpdatedAt: r.UpdatedAt.Format("2006-01-02T15:04:05Z")})
	}
	res := map[string]any{"notes": out}
	if len(rows) > limit {
		res["next_cursor"] = encodeCursor("n", out[len(out)-1].NoteID)
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
		return r, d, nil
	}
	full, err := s.Store.Get(ctx, store.TypeNote, id)
	if err != nil {
		return store.Resource{}, note.Doc{}, err
	}
	var d note.Doc
	if err := json.Unmarshal(full.Doc, &d); err != nil {
		return store.Resource{}, note.Doc{}, fmt.Errorf("note %s: %w", id, err)
	}
	s.docs.put(id, full.Version, d)
	return full, d, nil
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

// ListNoteTabs: every tab instance and the Note version.
func (s *Service) ListNoteTabs(ctx context.Context, p auth.Principal, noteID string) (map[string]any, error) {
	r, d, err := s.agentNote(ctx, p, noteID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"note_id": r.ID, "title": r.Title, "version": r.Version, "tabs": note.Refs(&d)}, nil
}

// ReadNoteTab: one tab's data and the Note version. Files are metadata only.
func (s *Service) ReadNoteTab(ctx context.Context, p auth.Principal, noteID, tabID string) (map[string]any, error) {
	r, d, err := s.agentNote(ctx, p, noteID)
	if err != nil {
		return nil, err
	}
	t, err := note.FindTab(&d, tabID)
	if err != nil {
		return nil, err
	}
	res := map[string]any{"note_id": r.ID, "version": r.Version, "tab_id": t.ID, "type": t.Type, "label": t.Label}
	switch t.Type {
	case note.TypeMarkdown:
		res["text"] = d.Markdown
	case note.TypeSlides:
		res["slides"] = nonNilSlides(t.Slides)
	case note.TypeSheet:
		res["sheets"] = t.Sheets
	case note.TypeSources:
		res["sources"] = d.Sources
	case note.TypeFiles:
		res["files"] = d.Files
	}
	return res, nil
}

func nonNilSlides(s []note.Slide) []note.Slide {
	if s == nil {
		return []note.Slide{}
	}
	return s
}

// ReadSheetRange: a rectangle of at most 100 × 100 cells.
func (s *Service) ReadSheetRange(ctx context.Context, p auth.Principal, noteID, tabID, sheetID string, row, col, rows, cols int) (map[string]any, error) {
	r, d, err := s.agentNote(ctx, p, noteID)
	if err != nil {
		return nil, err
	}
	vals, err := note.ReadRange(&d, tabID, sheetID, row, col, rows, cols)
	if err != nil {
		return nil, err
	}
	return map[string]any{"note_id": r.ID, "version": r.Version, "tab_id": tabID, "start_row": row, "start_col": col, "values": vals}, nil
}

// ListNoteAttachments: sources or files metadata, paged; never content or links.
func (s *Service) ListNoteAttachments(ctx context.Context, p auth.Principal, noteID, kind, cursor string, limit int) (map[string]any, error) {
	limit, err := pageLimit(limit)
	if err != nil {
		return nil, err
	}
	if kind != "sources" && kind != "files" {
		return nil, problem.New(problem.Invalid, "kind", "must be \"sources\" or \"files\" (got %s)", note.Quote(kind))
	}
	r, d, err := s.agentNote(ctx, p, noteID)
	if err != nil {
		return nil, err
	}
	// off is at most MaxCursorOffset, so off+limit can't overflow; a
	// position past the end (the list shrank) is an empty last page.
	off, err := offsetCursor(cursor, kind)
	if err != nil {
		return nil, err
	}
	var items any
	var total int
	switch kind {
	case "sources":
		total = len(d.Sources)
		items = d.Sources[min(off, total):min(off+limit, total)]
	case "files":
		total = len(d.Files)
		items = d.Files[min(off, total):min(off+limit, total)]
	}
	res := map[string]any{"note_id": r.ID, "version": r.Version, "kind": kind, "items": items, "total": total}
	if off+limit < total {
		res["next_cursor"] = encodeCursor(kind, strconv.Itoa(off+limit))
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

// CreateNoteTab adds a slides or sheet tab and answers its exact ID.
func (s *Service) CreateNoteTab(ctx context.Context, p auth.Principal, a CreateTabArgs) (Written, error) {
	fp := a
	fp.ExpectedVersion, fp.IdempotencyKey = 0, ""
	// Every rule of the request itself runs before the write contract.
	pre := func(*note.Doc) error {
		_, err := note.CheckNewTab(a.TabType, a.Label, a.Slides)
		return err
	}
	return s.noteWrite(ctx, p, a.NoteID, a.ExpectedVersion, a.IdempotencyKey, fingerprint(struct {
		Op string
		A  CreateTabArgs
	}{"create_note_tab", fp}), "tab_created", pre, "slides", func(d *note.Doc, version int64) (map[string]any, []string, error) {
		t, err := note.CreateTab(d, a.TabType, a.Label, a.Slides, s.Now())
		if err != nil {
			return nil, nil, err
		}
		return map[string]any{"tab_id": t.ID, "type": t.Type, "label": t.Label, "slides": len(t.Slides)}, []string{t.ID}, nil
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

// EditNoteTab applies one edit operation to one tab, by exact tab ID.
func (s *Service) EditNoteTab(ctx context.Context, p auth.Principal, a EditTabArgs) (Written, error) {
	if err := a.checkOperationFields(); err != nil {
		return nil, err
	}
	fp := a
	fp.ExpectedVersion, fp.IdempotencyKey = 0, ""
	// The fingerprint is what the edit means, not how it was spelled: data
	// and values in canonical JSON (keys sorted, numbers normalized).
	fp.Data = canonicalJSON(a.Data)
	fp.Values = canonicalCells(a.Values)
	return s.noteWrite(ctx, p, a.NoteID, a.ExpectedVersion, a.IdempotencyKey, fingerprint(struct {
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
	}, editSizeField[a.Operation], func(d *note.Doc, version int64) (map[string]any, []string, error) {
		res := map[string]any{"tab_id": a.TabID, "operation": a.Operation}
		switch a.Operation {
		case "replace_text":
			if err := note.ReplaceText(d, a.TabID, *a.Text); err != nil {
				return nil, nil, err
			}
			res["bytes"] = len(*a.Text)
		case "slide_add":
			sl, err := note.SlideAdd(d, a.TabID, note.SlideInput{Title: deref(a.Title), Body: deref(a.Body), Notes: deref(a.Notes)})
			if err != nil {
				return nil, nil, err
			}
			res["slide_ids"] = []string{sl.ID}
		case "slides_add_outline":
			ss, err := note.SlidesAddOutline(d, a.TabID, a.Slides)
			if err != nil {
				return nil, nil, err
			}
			ids := make([]string, len(ss))
			for i, sl := range ss {
				ids[i] = sl.ID
			}
			res["slide_ids"] = ids
		case "sheet_set_range":
			n, err := note.SheetSetRange(d, a.TabID, deref(a.SheetID), *a.StartRow, *a.StartCol, a.Values)
			if err != nil {
				return nil, nil, err
			}
			res["cells_written"] = n
		case "replace_tab_data":
			if err := note.ReplaceTabData(d, a.TabID, a.Data); err != nil {
				return nil, nil, err
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

// AddNoteSource attaches a citation; a page already attached (in any
// spelling that normalizes the same) answers the existing source.
func (s *Service) AddNoteSource(ctx context.Context, p auth.Principal, a AddSourceArgs) (Written, error) {
	norm, err := urlnorm.Normalize(a.URL)
	if err != nil {
		return nil, err // already a problem naming url
	}
	pre := func(*note.Doc) error {
		_, err := note.CheckSourceTitle(a.Title)
		return err
	}
	// The fingerprint is the normalized URL alone, so re-adding a page with a
	// better title under the same key returns the first source.
	return s.noteWrite(ctx, p, a.NoteID, a.ExpectedVersion, a.IdempotencyKey, fingerprint("add_note_source:"+norm), "source_added", pre, "url",
		func(d *note.Doc, version int64) (map[string]any, []string, error) {
			src, dup, err := note.AddSource(d, a.Title, a.URL, s.Now())
			if err != nil {
				return nil, nil, err
			}
			var changed []string
			if !dup {
				changed = []string{note.TypeSources}
			}
			return map[string]any{"source_id": src.ID, "url": src.URL, "normalized_url": src.NormURL, "title": src.Title, "already_attached": dup}, changed, nil
		})
}

// noteEdit is a pure edit of a Note's document: the answer, and the tab IDs
// it changed. An edit that changed no tab (a source already attached)
// changes nothing: no new version, only the key is recorded.
type noteEdit func(d *note.Doc, version int64) (res map[string]any, changed []string, err error)

// noteWrite is the one way agents write a Note: access check, the rules
// that hold in every version (pre, given the current document when it is
// cached, else nil; it must not change it), then the
// guarded write with the Note as key scope and a pure edit of its document.
// sizeField names the argument a Note-size refusal points at.
func (s *Service) noteWrite(ctx context.Context, p auth.Principal, noteID string, expected int64, key, fp, kind string, pre func(latest *note.Doc) error, sizeField string, edit noteEdit) (Written, error) {
	if !p.Has(auth.ScopeWrite) {
		return nil, problem.New("insufficient_scope", "", "this connection is read-only: it lacks the %s scope", auth.ScopeWrite)
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if expected < 1 {
		return nil, problem.New(problem.Invalid, "expected_version", "must be the version of the Note the change is based on (≥ 1)")
	}
	// Access is checked outside the transaction too, so a Note the caller
	// can't see answers not found before any key is looked up.
	head, err := s.noteAccess(ctx, p, noteID)
	if err != nil {
		return nil, err
	}
	if pre != nil {
		// The current document when it is cached; the rules that need
		// one fall back on what the tab ID says (see staticRules).
		var latest *note.Doc
		if d, ok := s.docs.get(noteID, head.Version); ok {
			latest = &d
		}
		if err := pre(latest); err != nil {
			return nil, err
		}
	}
	return s.guarded(ctx, store.Mutation{
		Workspace: p.Workspace, Type: store.TypeNote, ID: noteID, Key: key, Fingerprint: fp,
		ExpectedVersion: expected, Actor: "token:" + p.TokenID,
		Apply: func(cur *store.Resource) (*store.Change, error) {
			if !cur.Approved {
				return nil, notFound(store.TypeNote, noteID) // connected access switched off meanwhile
			}
			var d note.Doc
			if err := json.Unmarshal(cur.Doc, &d); err != nil {
				return nil, err
			}
			res, changed, err := edit(&d, cur.Version)
			if err != nil {
				return nil, err
			}
			unchanged := len(changed) == 0
			version := cur.Version + 1
			if unchanged {
				version = cur.Version
			}
			doc := mustJSON(d)
			if err := note.CheckSize(len(doc), len(cur.Doc), sizeField); err != nil {
				return nil, err
			}
			res["note_id"], res["version"] = noteID, version
			return &store.Change{Doc: doc, Result: mustJSON(res), Kind: kind, Changed: changed, Unchanged: unchanged}, nil
		},
	})
}
