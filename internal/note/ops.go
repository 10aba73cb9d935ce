package note

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"foundry/internal/problem"
	"foundry/internal/urlnorm"
)

// The operations below change d in place and only when they succeed: a
// refused call leaves d exactly as it was, so the caller can return the
// error without rolling anything back.

// Error codes of this package (besides problem.Invalid and problem.Limit).
const (
	CodeUnknownTab   = "unknown_tab"
	CodeWrongTabType = "wrong_tab_type"
)

// More limits; the §7 ones are in note.go.
const (
	MaxSlidesPerTab   = 200 // a whole deck, however it was written
	MaxSheetsPerTab   = 20  // sheets in one sheet tab
	MaxSourceTitle    = 500 // runes
	MaxSheetNameRunes = MaxLabelRunes
)

// TabRef is one entry of list_note_tabs and of an unknown_tab error.
type TabRef struct {
	TabID    string `json:"tab_id"`
	Type     string `json:"type"`
	Label    string `json:"label"`
	Position int    `json:"position"`
}

// SlideInput is what a caller may write to a slide.
type SlideInput struct {
	Title string `json:"title"`
	Body  string `json:"body,omitempty"`
	Notes string `json:"notes,omitempty"`
}

// SheetInput is one sheet of replace_tab_data on a sheet tab.
type SheetInput struct {
	SheetID string  `json:"sheet_id,omitempty"`
	Name    string  `json:"name"`
	Cells   [][]any `json:"cells"`
}

// New returns an empty Note with its three fixed tabs.
func New(title string) Doc {
	return Doc{
		Title: strings.TrimSpace(title),
		Tabs: []Tab{
			{ID: TypeMarkdown, Type: TypeMarkdown, Label: "Note"},
			{ID: TypeFiles, Type: TypeFiles, Label: "Files"},
			{ID: TypeSources, Type: TypeSources, Label: "Sources"},
		},
		NextTabN: 1,
		Sources:  []Source{},
		Files:    []File{},
		NextItem: 1,
	}
}

// Refs lists the tab strip, left to right.
func Refs(d *Doc) []TabRef {
	refs := make([]TabRef, len(d.Tabs))
	for i, t := range d.Tabs {
		refs[i] = TabRef{TabID: t.ID, Type: t.Type, Label: t.Label, Position: i}
	}
	return refs
}

// FindTab returns the tab with exactly this ID. It never falls back to a type
// or a label: guessing is how a write lands in the wrong deck.
func FindTab(d *Doc, id string) (*Tab, error) {
	if i := tabIndex(d, id); i >= 0 {
		return &d.Tabs[i], nil
	}
	refs := Refs(d)
	list := make([]string, len(refs))
	for i, r := range refs {
		list[i] = fmt.Sprintf("%s (%s, %q)", r.TabID, r.Type, r.Label)
	}
	return nil, problem.New(CodeUnknownTab, "tab_id",
		"no tab has the ID %q. Tabs are addressed by exact tab ID only — type names such as \"slides\" and labels are not accepted. "+
			"Current tabs: %s. Pick an ID from that list or call list_note_tabs.",
		id, strings.Join(list, ", ")).With("tabs", refs)
}

func tabIndex(d *Doc, id string) int {
	for i := range d.Tabs {
		if d.Tabs[i].ID == id {
			return i
		}
	}
	return -1
}

// NewTabID returns a fresh "<type>-<n>-<suffix>" and advances d.NextTabN.
// The counter alone makes IDs unique; the clash check guards Docs whose
// counter was restored from an older version.
func NewTabID(d *Doc, typ string, now time.Time) string {
	suffix := strconv.FormatInt(now.UnixMilli(), 36)
	for {
		if d.NextTabN < 1 {
			d.NextTabN = 1
		}
		id := fmt.Sprintf("%s-%d-%s", typ, d.NextTabN, suffix)
		d.NextTabN++
		if tabIndex(d, id) < 0 {
			return id
		}
	}
}

// nextItemID returns "<prefix>-<n>" from the Note's item counter.
func nextItemID(d *Doc, prefix string) string {
	if d.NextItem < 1 {
		d.NextItem = 1
	}
	id := prefix + "-" + strconv.Itoa(d.NextItem)
	d.NextItem++
	return id
}

// CreateTab appends a slides or sheet tab. An optional outline fills a slides
// tab; an empty outline gives an empty deck.
func CreateTab(d *Doc, typ, label string, outline []SlideInput, now time.Time) (Tab, error) {
	var defaultLabel string
	switch typ {
	case TypeSlides:
		defaultLabel = "Slides"
	case TypeSheet:
		defaultLabel = "Sheet"
		if len(outline) > 0 {
			return Tab{}, problem.New(problem.Invalid, "slides", "an outline of slides only fits a slides tab; leave slides out when tab_type is \"sheet\"")
		}
	default:
		return Tab{}, problem.New(problem.Invalid, "tab_type",
			"tab_type %q can't be created; use \"slides\" or \"sheet\" (markdown, files and sources are fixed tabs every Note already has)", typ)
	}
	label, err := checkLabel(label, defaultLabel)
	if err != nil {
		return Tab{}, err
	}
	if len(outline) > MaxOutlineSlides {
		return Tab{}, outlineLimit(len(outline))
	}
	if err := checkSlides(outline, "slides"); err != nil {
		return Tab{}, err
	}

	t := Tab{ID: NewTabID(d, typ, now), Type: typ, Label: label}
	if typ == TypeSlides {
		t.Slides = newSlides(d, outline)
	} else {
		t.Sheets = []Sheet{{ID: nextItemID(d, "sheet"), Name: "Sheet1", Cells: [][]any{}}}
	}
	d.Tabs = append(d.Tabs, t)
	return t, nil
}

// ReplaceText sets the text of the markdown tab.
func ReplaceText(d *Doc, tabID, text string) error {
	if _, err := tabFor(d, tabID, "replace_text", TypeMarkdown); err != nil {
		return err
	}
	if len(text) > MaxMarkdownBytes {
		return problem.New(problem.Limit, "text",
			"text is %d bytes; the markdown tab holds at most %d bytes (1 MiB markdown limit)", len(text), MaxMarkdownBytes)
	}
	d.Markdown = text
	return nil
}

// SlideAdd appends one slide to a slides tab.
func SlideAdd(d *Doc, tabID string, s SlideInput) (Slide, error) {
	t, err := tabFor(d, tabID, "slide_add", TypeSlides)
	if err != nil {
		return Slide{}, err
	}
	if err := checkSlide(s, ""); err != nil {
		return Slide{}, err
	}
	if len(t.Slides)+1 > MaxSlidesPerTab {
		return Slide{}, deckLimit(len(t.Slides) + 1)
	}
	added := newSlides(d, []SlideInput{s})
	t.Slides = append(t.Slides, added...)
	return added[0], nil
}

// SlidesAddOutline appends 1..20 slides in order.
func SlidesAddOutline(d *Doc, tabID string, ss []SlideInput) ([]Slide, error) {
	t, err := tabFor(d, tabID, "slides_add_outline", TypeSlides)
	if err != nil {
		return nil, err
	}
	switch {
	case len(ss) == 0:
		return nil, problem.New(problem.Invalid, "slides", "slides is empty; give 1 to %d slides", MaxOutlineSlides)
	case len(ss) > MaxOutlineSlides:
		return nil, outlineLimit(len(ss))
	}
	if err := checkSlides(ss, "slides"); err != nil {
		return nil, err
	}
	if n := len(t.Slides) + len(ss); n > MaxSlidesPerTab {
		return nil, deckLimit(n)
	}
	added := newSlides(d, ss)
	t.Slides = append(t.Slides, added...)
	return added, nil
}

// SheetSetRange writes values with their top-left cell at (startRow,
// startCol), growing the grid as needed. It returns the number of cells set.
func SheetSetRange(d *Doc, tabID, sheetID string, startRow, startCol int, values [][]any) (int, error) {
	t, err := tabFor(d, tabID, "sheet_set_range", TypeSheet)
	if err != nil {
		return 0, err
	}
	sh, err := findSheet(t, sheetID)
	if err != nil {
		return 0, err
	}
	if err := checkStart(startRow, startCol); err != nil {
		return 0, err
	}
	switch {
	case len(values) == 0:
		return 0, problem.New(problem.Invalid, "values", "values is empty; give 1 to %d rows", MaxRangeRows)
	case len(values) > MaxRangeRows:
		return 0, problem.New(problem.Limit, "values",
			"values has %d rows; at most %d rows per call (sheet_set_range limit %d × %d cells); split the range into several calls",
			len(values), MaxRangeRows, MaxRangeRows, MaxRangeCols)
	}
	// Validate and convert into a copy first: a refused call changes nothing.
	conv := make([][]any, len(values))
	width := 0
	for i, row := range values {
		if len(row) > MaxRangeCols {
			return 0, problem.New(problem.Limit, fmt.Sprintf("values[%d]", i),
				"row has %d values; at most %d columns per call (sheet_set_range limit %d × %d cells); split the range into several calls",
				len(row), MaxRangeCols, MaxRangeRows, MaxRangeCols)
		}
		conv[i] = make([]any, len(row))
		for j, v := range row {
			if conv[i][j], err = cellValue(v, fmt.Sprintf("values[%d][%d]", i, j)); err != nil {
				return 0, err
			}
		}
		width = max(width, len(row))
	}

	// The grid after the write, measured before it is made.
	rows := max(len(sh.Cells), startRow+len(values))
	cols := gridWidth(sh.Cells)
	if width > 0 {
		cols = max(cols, startCol+width)
	}
	total := gridArea(rows, cols)
	for i := range t.Sheets {
		if &t.Sheets[i] != sh {
			total += gridArea(len(t.Sheets[i].Cells), gridWidth(t.Sheets[i].Cells))
		}
	}
	if total > MaxSheetCells {
		return 0, sheetLimit("values", total)
	}

	for len(sh.Cells) < startRow+len(values) {
		sh.Cells = append(sh.Cells, []any{})
	}
	n := 0
	for i, row := range conv {
		r := sh.Cells[startRow+i]
		for len(r) < startCol+len(row) {
			r = append(r, nil)
		}
		copy(r[startCol:], row)
		sh.Cells[startRow+i] = r
		n += len(row)
	}
	return n, nil
}

// ReadRange returns exactly rows × cols cells; cells outside the grid are nil.
func ReadRange(d *Doc, tabID, sheetID string, startRow, startCol, rows, cols int) ([][]any, error) {
	t, err := tabFor(d, tabID, "read_sheet_range", TypeSheet)
	if err != nil {
		return nil, err
	}
	sh, err := findSheet(t, sheetID)
	if err != nil {
		return nil, err
	}
	if err := checkStart(startRow, startCol); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		field  string
		n, max int
	}{{"rows", rows, MaxRangeRows}, {"cols", cols, MaxRangeCols}} {
		if c.n < 1 {
			return nil, problem.New(problem.Invalid, c.field, "%s is %d; give 1 to %d", c.field, c.n, c.max)
		}
		if c.n > c.max {
			return nil, problem.New(problem.Limit, c.field,
				"%s is %d; at most %d per call (read_sheet_range limit %d × %d cells); read the range in several calls",
				c.field, c.n, c.max, MaxRangeRows, MaxRangeCols)
		}
	}
	out := make([][]any, rows)
	for i := range out {
		out[i] = make([]any, cols)
		r := startRow + i
		if r >= len(sh.Cells) {
			continue
		}
		for j := range out[i] {
			if c := startCol + j; c < len(sh.Cells[r]) {
				out[i][j] = sh.Cells[r][c]
			}
		}
	}
	return out, nil
}

// ReplaceTabData replaces the whole data of a slides tab ({"slides": [...]})
// or a sheet tab ({"sheets": [...]}). Unknown fields are refused so that a
// misspelt key is an error, not silently lost content.
func ReplaceTabData(d *Doc, tabID string, data json.RawMessage) error {
	t, err := FindTab(d, tabID)
	if err != nil {
		return err
	}
	switch t.Type {
	case TypeSlides:
		var in struct {
			Slides *[]SlideInput `json:"slides"`
		}
		if err := decodeStrict(data, &in); err != nil {
			return err
		}
		if in.Slides == nil {
			return problem.New(problem.Invalid, "slides", `data of a slides tab is {"slides": [{"title": ..., "body": ..., "notes": ...}, ...]}; slides is missing`)
		}
		if len(*in.Slides) > MaxSlidesPerTab {
			return deckLimit(len(*in.Slides))
		}
		if err := checkSlides(*in.Slides, "slides"); err != nil {
			return err
		}
		t.Slides = newSlides(d, *in.Slides)
		return nil
	case TypeSheet:
		var in struct {
			Sheets *[]SheetInput `json:"sheets"`
		}
		if err := decodeStrict(data, &in); err != nil {
			return err
		}
		if in.Sheets == nil {
			return problem.New(problem.Invalid, "sheets", `data of a sheet tab is {"sheets": [{"sheet_id": ..., "name": ..., "cells": [[...], ...]}, ...]}; sheets is missing`)
		}
		sheets, err := buildSheets(d, t, *in.Sheets)
		if err != nil {
			return err
		}
		t.Sheets = sheets
		return nil
	case TypeMarkdown:
		return wrongType(t, "replace_tab_data")
	default:
		return problem.New(CodeWrongTabType, "tab_id",
			"tab %q is the %s tab; files and sources can't be edited this way: add a citation with add_note_source; files are attached by people in the web app",
			t.ID, t.Type).With("tab_type", t.Type)
	}
}

// buildSheets validates in and turns it into sheets, keeping the IDs of
// sheets the tab already has.
func buildSheets(d *Doc, t *Tab, in []SheetInput) ([]Sheet, error) {
	switch {
	case len(in) == 0:
		return nil, problem.New(problem.Invalid, "sheets", "sheets is empty; a sheet tab has 1 to %d sheets", MaxSheetsPerTab)
	case len(in) > MaxSheetsPerTab:
		return nil, problem.New(problem.Limit, "sheets", "sheets has %d entries; at most %d sheets per tab (sheet tab limit)", len(in), MaxSheetsPerTab)
	}
	existing := map[string]bool{}
	for _, s := range t.Sheets {
		existing[s.ID] = true
	}
	seen := map[string]bool{}
	out := make([]Sheet, len(in))
	total := 0
	for i, s := range in {
		f := fmt.Sprintf("sheets[%d]", i)
		if s.SheetID != "" && seen[s.SheetID] {
			return nil, problem.New(problem.Invalid, f+".sheet_id", "sheet_id %q appears twice; each sheet needs its own ID (leave sheet_id out for a new sheet)", s.SheetID)
		}
		seen[s.SheetID] = true
		name := strings.TrimSpace(s.Name)
		if name == "" {
			return nil, problem.New(problem.Invalid, f+".name", "name is empty; give each sheet a name such as \"Sheet%d\"", i+1)
		}
		if n := utf8.RuneCountInString(name); n > MaxSheetNameRunes {
			return nil, problem.New(problem.Limit, f+".name", "name is %d characters; at most %d (sheet name limit)", n, MaxSheetNameRunes)
		}
		cells := make([][]any, len(s.Cells))
		for r, row := range s.Cells {
			cells[r] = make([]any, len(row))
			for c, v := range row {
				var err error
				if cells[r][c], err = cellValue(v, fmt.Sprintf("%s.cells[%d][%d]", f, r, c)); err != nil {
					return nil, err
				}
			}
		}
		if total += gridArea(len(cells), gridWidth(cells)); total > MaxSheetCells {
			return nil, sheetLimit("sheets", total)
		}
		out[i] = Sheet{ID: s.SheetID, Name: name, Cells: cells}
	}
	// IDs are drawn only after everything passed, so a refusal leaves NextItem alone.
	for i := range out {
		if !existing[out[i].ID] {
			out[i].ID = nextItemID(d, "sheet")
		}
	}
	return out, nil
}

// AddSource attaches a citation, or returns the one already attached for the
// same normalized URL (alreadyAttached) without changing anything.
func AddSource(d *Doc, title, rawURL string, now time.Time) (src Source, alreadyAttached bool, err error) {
	title = strings.TrimSpace(title)
	if title == "" {
		return Source{}, false, problem.New(problem.Invalid, "title", "title is empty; give the cited page's title")
	}
	if n := utf8.RuneCountInString(title); n > MaxSourceTitle {
		return Source{}, false, problem.New(problem.Limit, "title", "title is %d characters; at most %d (source title limit)", n, MaxSourceTitle)
	}
	norm, err := urlnorm.Normalize(rawURL)
	if err != nil {
		return Source{}, false, err
	}
	canon, err := urlnorm.Canonical(rawURL)
	if err != nil {
		return Source{}, false, err
	}
	for _, s := range d.Sources {
		if s.NormURL == norm {
			return s, true, nil
		}
	}
	src = Source{ID: nextItemID(d, "src"), Title: title, URL: canon, NormURL: norm, AddedAt: stamp(now)}
	d.Sources = append(d.Sources, src)
	return src, false, nil
}

// AddFile records attachment metadata; the content is the store's business.
func AddFile(d *Doc, name, contentType string, size int64, sha256hex string, now time.Time) File {
	f := File{ID: nextItemID(d, "file"), Name: name, ContentType: contentType, SizeBytes: size, SHA256: sha256hex, AddedAt: stamp(now)}
	d.Files = append(d.Files, f)
	return f
}

// MoveTab moves a tab to toIndex in the strip, clamped to the strip.
func MoveTab(d *Doc, tabID string, toIndex int) error {
	if _, err := FindTab(d, tabID); err != nil {
		return err
	}
	from := tabIndex(d, tabID)
	toIndex = min(max(toIndex, 0), len(d.Tabs)-1)
	t := d.Tabs[from]
	d.Tabs = append(d.Tabs[:from], d.Tabs[from+1:]...)
	d.Tabs = append(d.Tabs[:toIndex], append([]Tab{t}, d.Tabs[toIndex:]...)...)
	return nil
}

// RenameTab sets a tab's label. Duplicate labels are allowed: tabs are told
// apart by ID.
func RenameTab(d *Doc, tabID, label string) error {
	t, err := FindTab(d, tabID)
	if err != nil {
		return err
	}
	label, err = checkLabel(label, "")
	if err != nil {
		return err
	}
	t.Label = label
	return nil
}

// DeleteTab removes a slides or sheet tab. Its ID is never given again
// because NextTabN only goes up.
func DeleteTab(d *Doc, tabID string) error {
	t, err := FindTab(d, tabID)
	if err != nil {
		return err
	}
	if isFixed(t.Type) {
		return problem.New(problem.Invalid, "tab_id", "tab %q is a fixed tab every Note has; only slides and sheet tabs can be deleted", t.ID)
	}
	i := tabIndex(d, tabID)
	d.Tabs = append(d.Tabs[:i], d.Tabs[i+1:]...)
	return nil
}

// DeleteSource removes a citation from the sources tab.
func DeleteSource(d *Doc, sourceID string) error {
	for i, s := range d.Sources {
		if s.ID == sourceID {
			d.Sources = append(d.Sources[:i], d.Sources[i+1:]...)
			return nil
		}
	}
	return problem.New(problem.NotFound, "source_id", "no source has the ID %q; list the sources with list_note_attachments (kind \"sources\")", sourceID)
}

// --- helpers ---

func isFixed(typ string) bool {
	return typ == TypeMarkdown || typ == TypeFiles || typ == TypeSources
}

// tabFor finds the tab and checks that op fits its type.
func tabFor(d *Doc, tabID, op, want string) (*Tab, error) {
	t, err := FindTab(d, tabID)
	if err != nil {
		return nil, err
	}
	if t.Type != want {
		if op == "read_sheet_range" {
			return nil, problem.New(CodeWrongTabType, "tab_id",
				"tab %q is a %s tab; read_sheet_range reads only sheet tabs. Read this tab with read_note_tab", t.ID, t.Type).With("tab_type", t.Type)
		}
		return nil, wrongType(t, op)
	}
	return t, nil
}

// fittingOps names, per tab type, the operations that edit it.
var fittingOps = map[string]string{
	TypeMarkdown: "replace_text",
	TypeSlides:   "slide_add, slides_add_outline or replace_tab_data",
	TypeSheet:    "sheet_set_range or replace_tab_data",
}

var opTabType = map[string]string{
	"replace_text":       "the markdown tab",
	"slide_add":          "slides tabs",
	"slides_add_outline": "slides tabs",
	"sheet_set_range":    "sheet tabs",
	"replace_tab_data":   "slides and sheet tabs",
}

func wrongType(t *Tab, op string) *problem.Problem {
	fits, ok := fittingOps[t.Type]
	if !ok {
		return problem.New(CodeWrongTabType, "tab_id",
			"tab %q is the %s tab; %s works only on %s, and files and sources can't be edited this way (add a citation with add_note_source)",
			t.ID, t.Type, op, opTabType[op]).With("tab_type", t.Type)
	}
	return problem.New(CodeWrongTabType, "operation",
		"tab %q is a %s tab; %s works only on %s. For this tab use %s",
		t.ID, t.Type, op, opTabType[op], fits).With("tab_type", t.Type)
}

func checkLabel(label, def string) (string, error) {
	label = strings.TrimSpace(label)
	if label == "" {
		if def == "" {
			return "", problem.New(problem.Invalid, "label", "label is empty; give the tab a name")
		}
		label = def
	}
	if n := utf8.RuneCountInString(label); n > MaxLabelRunes {
		return "", problem.New(problem.Limit, "label", "label is %d characters; at most %d (tab label limit)", n, MaxLabelRunes)
	}
	return label, nil
}

// checkSlides checks every slide, naming fields "<path>[i].title".
func checkSlides(ss []SlideInput, path string) error {
	for i, s := range ss {
		if err := checkSlide(s, fmt.Sprintf("%s[%d].", path, i)); err != nil {
			return err
		}
	}
	return nil
}

func checkSlide(s SlideInput, prefix string) error {
	if strings.TrimSpace(s.Title) == "" {
		return problem.New(problem.Invalid, prefix+"title", "title is empty; every slide needs a title")
	}
	for _, f := range []struct{ name, v string }{{"title", s.Title}, {"body", s.Body}, {"notes", s.Notes}} {
		if len(f.v) > MaxSlideTextBytes {
			return problem.New(problem.Limit, prefix+f.name, "%s is %d bytes; at most %d bytes per field (slide text limit)", f.name, len(f.v), MaxSlideTextBytes)
		}
	}
	return nil
}

func newSlides(d *Doc, ss []SlideInput) []Slide {
	out := make([]Slide, len(ss))
	for i, s := range ss {
		out[i] = Slide{ID: nextItemID(d, "slide"), Title: strings.TrimSpace(s.Title), Body: s.Body, Notes: s.Notes}
	}
	return out
}

func outlineLimit(n int) *problem.Problem {
	return problem.New(problem.Limit, "slides",
		"%d slides given; at most %d slides per call (outline limit); split the deck into several calls", n, MaxOutlineSlides)
}

func deckLimit(n int) *problem.Problem {
	return problem.New(problem.Limit, "slides",
		"the deck would have %d slides; at most %d slides per tab (deck limit); start another slides tab", n, MaxSlidesPerTab)
}

func sheetLimit(field string, n int) *problem.Problem {
	return problem.New(problem.Limit, field,
		"the sheet tab would span %d cells; at most %d cells per sheet tab (sheet size limit); put the data in another sheet tab", n, MaxSheetCells)
}

func findSheet(t *Tab, id string) (*Sheet, error) {
	if id == "" && len(t.Sheets) > 0 {
		return &t.Sheets[0], nil
	}
	ids := make([]string, len(t.Sheets))
	for i := range t.Sheets {
		if t.Sheets[i].ID == id {
			return &t.Sheets[i], nil
		}
		ids[i] = fmt.Sprintf("%s (%q)", t.Sheets[i].ID, t.Sheets[i].Name)
	}
	return nil, problem.New(problem.Invalid, "sheet_id",
		"tab %q has no sheet with the ID %q; its sheets are: %s. Leave sheet_id out for the first sheet",
		t.ID, id, strings.Join(ids, ", ")).With("sheet_ids", sheetIDs(t))
}

func sheetIDs(t *Tab) []string {
	ids := make([]string, len(t.Sheets))
	for i, s := range t.Sheets {
		ids[i] = s.ID
	}
	return ids
}

func checkStart(row, col int) error {
	// The upper bound keeps index arithmetic far from overflow; the cell
	// limit refuses such ranges anyway.
	for _, c := range []struct {
		field string
		v     int
	}{{"start_row", row}, {"start_col", col}} {
		if c.v < 0 {
			return problem.New(problem.Invalid, c.field, "%s is %d; rows and columns are 0-based, so give 0 or more", c.field, c.v)
		}
		if c.v > MaxSheetCells {
			return problem.New(problem.Limit, c.field, "%s is %d; a sheet tab spans at most %d cells (sheet size limit)", c.field, c.v, MaxSheetCells)
		}
	}
	return nil
}

// gridWidth is the longest row: rows may be ragged.
func gridWidth(cells [][]any) int {
	w := 0
	for _, r := range cells {
		w = max(w, len(r))
	}
	return w
}

// gridArea counts the bounding rectangle, and an empty row as one cell, so
// that a far-away start can't allocate millions of rows for free.
func gridArea(rows, cols int) int {
	return rows * max(cols, 1)
}

// cellValue accepts JSON scalars and stores numbers as float64, the one
// number type readers of a sheet see.
func cellValue(v any, field string) (any, error) {
	switch x := v.(type) {
	case nil, string, bool:
		return x, nil
	case int:
		return float64(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, problem.New(problem.Invalid, field, "%v is not a finite number; a cell holds a string, a number, true/false or null", x)
		}
		return x, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil, problem.New(problem.Invalid, field, "%q is not a number a cell can hold", x.String())
		}
		return f, nil
	default:
		return nil, problem.New(problem.Invalid, field, "a %T can't be a cell; a cell holds a string, a number, true/false or null", v)
	}
}

// decodeStrict decodes one JSON object into v, refusing unknown fields and
// trailing data.
func decodeStrict(data json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	err := dec.Decode(v)
	if err == nil && dec.Decode(new(json.RawMessage)) != io.EOF {
		err = errors.New("unexpected data after the object")
	}
	if err != nil {
		return problem.New(problem.Invalid, "data", "data is not valid for this tab: %v", err)
	}
	return nil
}

func stamp(now time.Time) string { return now.UTC().Format(time.RFC3339) }
