package service

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// Editing a tab's content by operation: the markdown text, slides added,
// cells written, a tab's whole data replaced. One act for every caller:
// agents send it as edit_note_tab, people's editors as their saves.

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
	// A person's slide_add may also give the new slide's layout and theme
	// and its place in the deck; no agent's schema has them.
	Layout   *string `json:"layout,omitempty"`
	Theme    *string `json:"theme,omitempty"`
	Position *int    `json:"position,omitempty"`
	// DependsOn, when sent (not nil), names the tabs the edit was based on:
	// it is then refused only when one of them, or this tab, changed since
	// ExpectedVersion (depends.go).
	DependsOn []string `json:"depends_on,omitempty"`
}

// editFields says which optional fields each operation takes, so a field
// that belongs to another operation is refused instead of silently ignored.
var editFields = map[string][]string{
	"replace_text":       {"text"},
	"slide_add":          {"title", "body", "notes", "layout", "theme", "position"},
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
		"layout": a.Layout != nil, "theme": a.Theme != nil, "position": a.Position != nil,
	}
}

// checkOperationFields is the per-operation rule the schema can't say.
func (a *EditTabArgs) checkOperationFields() error {
	allowed, ok := editFields[a.Operation]
	if !ok {
		return problem.New(problem.Invalid, "operation", "%s is not an operation; use replace_text, slide_add, slides_add_outline, sheet_set_range or replace_tab_data", note.Quote(a.Operation))
	}
	have := a.present()
	for _, f := range []string{"text", "title", "body", "notes", "slides", "sheet_id", "start_row", "start_col", "values", "data", "layout", "theme", "position"} {
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
func (s *Service) EditNoteTab(ctx context.Context, c Caller, a EditTabArgs) (TabEdited, error) {
	if err := a.checkOperationFields(); err != nil {
		return TabEdited{}, err
	}
	fp := a
	// depends_on is part of the guard, as the version is: it says when the
	// edit may apply, not what it changes.
	fp.ExpectedVersion, fp.IdempotencyKey, fp.DependsOn = 0, "", nil
	// The fingerprint is what the edit means, not how it was spelled: data
	// and values in canonical JSON (keys sorted, numbers normalized).
	fp.Data = canonicalJSON(a.Data)
	fp.Values = canonicalCells(a.Values)
	return noteWrite(ctx, s, c, a.NoteID, Guard{a.ExpectedVersion, a.IdempotencyKey}, noteOp{
		kind: "tab_edited", sizeField: editSizeField[a.Operation], meaning: struct {
			Op string
			A  EditTabArgs
		}{"edit_note_tab", fp},
		pre: func() error {
			if err := CheckID("tab_id", a.TabID); err != nil {
				return err
			}
			var latest *note.Doc
			if _, ok := note.TypeOfID(a.TabID); !ok {
				// No tab ever has such an ID ("slides", a label); the
				// current tabs are what the refusal lists.
				_, d, err := s.noteFor(ctx, c, a.NoteID)
				if err != nil {
					return err
				}
				latest = d
			}
			return a.staticRules(latest)
		},
		deps: newDepends(a.DependsOn, a.TabID),
	}, func(_ *store.Resource, d *note.Doc, _ *store.Change) (TabEdited, []string, error) {
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
			if a.Layout != nil || a.Theme != nil || a.Position != nil {
				t, _ := note.FindTab(d, a.TabID)
				placeSlide(t, sl.ID, deref(a.Layout), deref(a.Theme), a.Position)
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
		if err := checkSlidePosition(a.Position); err != nil {
			return err
		}
		if err := note.CheckSlideLook(a.Layout, a.Theme); err != nil {
			return err
		}
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
