package note

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
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
		list[i] = fmt.Sprintf("%s (%s, %s)", r.TabID, r.Type, Quote(r.Label))
	}
	return nil, problem.New(CodeUnknownTab, "tab_id",
		"no tab has the ID %s. Tabs are addressed by exact tab ID only — type names such as \"slides\" and labels are not accepted. "+
			"Current tabs: %s. Pick an ID from that list.",
		Quote(id), strings.Join(list, ", ")).With("tabs", refs)
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
	label, err := CheckNewTab(typ, label, outline)
	if err != nil {
		return Tab{}, err
	}
	if len(d.Tabs) >= MaxTabsPerNote {
		return Tab{}, problem.New(problem.Limit, "note_id",
			"the Note has %d tabs; a Note holds at most %d tabs (tab limit); put this in another Note, or ask a person to delete a tab", len(d.Tabs), MaxTabsPerNote)
	}

	t := Tab{ID: NewTabID(d, typ, now), Type: typ, Label: label}
	kinds[typ].create(d, &t, outline)
	d.Tabs = append(d.Tabs, t)
	return t, nil
}

// CheckNewTab applies every rule of create_note_tab that does not depend on
// the Note, and returns the label to use.
func CheckNewTab(typ, label string, outline []SlideInput) (string, error) {
	k, ok := kinds[typ]
	if !ok || k.create == nil {
		return "", problem.New(problem.Invalid, "tab_type",
			"tab_type %s can't be created; use \"slides\" or \"sheet\" (markdown, files and sources are fixed tabs every Note already has)", Quote(typ))
	}
	if len(outline) > 0 && typ != TypeSlides {
		return "", problem.New(problem.Invalid, "slides", "an outline of slides only fits a slides tab; leave slides out when tab_type is %s", Quote(typ))
	}
	label, err := checkLabel(label, k.label)
	if err != nil {
		return "", err
	}
	if len(outline) > MaxOutlineSlides {
		return "", outlineLimit(len(outline))
	}
	if err := checkSlides(outline, "slides"); err != nil {
		return "", err
	}
	return label, nil
}

// CheckText applies the rules of replace_text's text.
func CheckText(text string) error {
	if len(text) > MaxMarkdownBytes {
		return problem.New(problem.Limit, "text",
			"text is %d bytes in UTF-8; the markdown tab holds at most %d bytes (1 MiB markdown limit)", len(text), MaxMarkdownBytes)
	}
	return nil
}

// ReplaceText sets the text of the markdown tab.
func ReplaceText(d *Doc, tabID, text string) error {
	if _, err := tabFor(d, tabID, "replace_text", TypeMarkdown); err != nil {
		return err
	}
	if err := CheckText(text); err != nil {
		return err
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
	if err := CheckSlide(s); err != nil {
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
	if err := CheckOutline(ss); err != nil {
		return nil, err
	}
	if n := len(t.Slides) + len(ss); n > MaxSlidesPerTab {
		return nil, deckLimit(n)
	}
	added := newSlides(d, ss)
	t.Slides = append(t.Slides, added...)
	return added, nil
}

// CheckSlide applies the rules of slide_add's slide.
func CheckSlide(s SlideInput) error { return checkSlide(s, "") }

// CheckOutline applies the rules of slides_add_outline's slides.
func CheckOutline(ss []SlideInput) error {
	switch {
	case len(ss) == 0:
		return problem.New(problem.Invalid, "slides", "slides is empty; give 1 to %d slides", MaxOutlineSlides)
	case len(ss) > MaxOutlineSlides:
		return outlineLimit(len(ss))
	}
	return checkSlides(ss, "slides")
}

// CheckRange applies the rules of sheet_set_range that do not depend on the
// sheet, and returns the values as a sheet stores them.
func CheckRange(startRow, startCol int, values [][]any) ([][]any, error) {
	if err := checkStart(startRow, startCol); err != nil {
		return nil, err
	}
	switch {
	case len(values) == 0:
		return nil, problem.New(problem.Invalid, "values", "values is empty; give 1 to %d rows", MaxRangeRows)
	case len(values) > MaxRangeRows:
		return nil, problem.New(problem.Limit, "values",
			"values has %d rows; at most %d rows per call (sheet_set_range limit %d × %d cells); split the range into several calls",
			len(values), MaxRangeRows, MaxRangeRows, MaxRangeCols)
	}
	conv := make([][]any, len(values))
	for i, row := range values {
		if len(row) > MaxRangeCols {
			return nil, problem.New(problem.Limit, fmt.Sprintf("values[%d]", i),
				"row has %d values; at most %d columns per call (sheet_set_range limit %d × %d cells); split the range into several calls",
				len(row), MaxRangeCols, MaxRangeRows, MaxRangeCols)
		}
		conv[i] = make([]any, len(row))
		for j, v := range row {
			var err error
			if conv[i][j], err = cellValue(v, fmt.Sprintf("values[%d][%d]", i, j)); err != nil {
				return nil, err
			}
		}
	}
	return conv, nil
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
	// Validate and convert into a copy first: a refused call changes nothing.
	conv, err := CheckRange(startRow, startCol, values)
	if err != nil {
		return 0, err
	}
	width := gridWidth(conv)

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
		// A new row, never the old one changed in place: the Doc before
		// this edit may share it (see Clone).
		old := sh.Cells[startRow+i]
		r := make([]any, max(len(old), startCol+len(row)))
		copy(r, old)
		copy(r[startCol:], row)
		sh.Cells[startRow+i] = r
		n += len(row)
	}
	return n, nil
}

// ReadRange returns exactly rows × cols cells, a formula's as its computed
// value; cells outside the grid are nil.
func ReadRange(d *Doc, tabID, sheetID string, startRow, startCol, rows, cols int) ([][]any, error) {
	r, err := ReadCells(d, tabID, sheetID, startRow, startCol, rows, cols)
	return r.Values, err
}

// FormulaCell is one cell of a range that holds a formula.
type FormulaCell struct {
	Row     int    `json:"row"`
	Col     int    `json:"col"`
	Cell    string `json:"cell"`    // e.g. B10
	Formula string `json:"formula"` // as written, e.g. =SUM(B2:B9)
}

// Cells is a rectangle of a sheet: its values, and the formulas of the
// cells that hold one.
type Cells struct {
	Values   [][]any
	Formulas []FormulaCell
}

// ReadCells is ReadRange with the formulas of the range.
func ReadCells(d *Doc, tabID, sheetID string, startRow, startCol, rows, cols int) (Cells, error) {
	t, err := tabFor(d, tabID, "read_sheet_range", TypeSheet)
	if err != nil {
		return Cells{}, err
	}
	sh, err := findSheet(t, sheetID)
	if err != nil {
		return Cells{}, err
	}
	if err := checkStart(startRow, startCol); err != nil {
		return Cells{}, err
	}
	for _, c := range []struct {
		field  string
		n, max int
	}{{"rows", rows, MaxRangeRows}, {"cols", cols, MaxRangeCols}} {
		if c.n < 1 {
			return Cells{}, problem.New(problem.Invalid, c.field, "%s is %d; give 1 to %d", c.field, c.n, c.max)
		}
		if c.n > c.max {
			return Cells{}, problem.New(problem.Limit, c.field,
				"%s is %d; at most %d per call (one read is at most %d × %d cells); read the range in several calls",
				c.field, c.n, c.max, MaxRangeRows, MaxRangeCols)
		}
	}
	out := make([][]any, rows)
	var formulas []FormulaCell
	for i := range out {
		out[i] = make([]any, cols)
		r := startRow + i
		if r >= len(sh.Cells) {
			continue
		}
		for j := range out[i] {
			if c := startCol + j; c < len(sh.Cells[r]) {
				v := sh.Cells[r][c]
				if IsFormula(v) {
					formulas = append(formulas, FormulaCell{Row: r, Col: c, Cell: CellAddress(r, c), Formula: v.(string)})
					v = valueAt(sh, r, c)
				}
				out[i][j] = v
			}
		}
	}
	return Cells{Values: out, Formulas: formulas}, nil
}

// ReplaceTabData replaces the whole data of a slides tab ({"slides": [...]})
// or a sheet tab ({"sheets": [...]}). Unknown fields are refused so that a
// misspelt key is an error, not silently lost content.
func ReplaceTabData(d *Doc, tabID string, data json.RawMessage) error {
	t, err := FindTab(d, tabID)
	if err != nil {
		return err
	}
	if err := CheckOperation(t.ID, t.Type, "replace_tab_data"); err != nil {
		return err
	}
	td, err := CheckTabData(t.Type, data)
	if err != nil {
		return err
	}
	kinds[t.Type].replaceData(d, t, td)
	return nil
}

// TabData is replace_tab_data's data, checked.
type TabData struct {
	slides []SlideInput
	sheets []Sheet // IDs as given; new sheets have none yet
}

// CheckTabData applies every rule of replace_tab_data's data on a tab of
// type typ (slides or sheet) that does not depend on the Note.
func CheckTabData(typ string, data json.RawMessage) (TabData, error) {
	if k, ok := kinds[typ]; ok && k.checkData != nil {
		return k.checkData(data)
	}
	return TabData{}, problem.New(CodeWrongTabType, "tab_id", "replace_tab_data works only on slides and sheet tabs").With("tab_type", typ)
}

// buildSheets validates in and turns it into sheets; the caller gives IDs
// to the new ones.
func buildSheets(in []SheetInput) ([]Sheet, error) {
	switch {
	case len(in) == 0:
		return nil, problem.New(problem.Invalid, "sheets", "sheets is empty; a sheet tab has 1 to %d sheets", MaxSheetsPerTab)
	case len(in) > MaxSheetsPerTab:
		return nil, problem.New(problem.Limit, "sheets", "sheets has %d entries; at most %d sheets per tab (sheet tab limit)", len(in), MaxSheetsPerTab)
	}
	seen := map[string]bool{}
	out := make([]Sheet, len(in))
	total := 0
	for i, s := range in {
		f := fmt.Sprintf("sheets[%d]", i)
		if s.SheetID != "" && seen[s.SheetID] {
			return nil, problem.New(problem.Invalid, f+".sheet_id", "sheet_id %s appears twice; each sheet needs its own ID (leave sheet_id out for a new sheet)", Quote(s.SheetID))
		}
		seen[s.SheetID] = true
		name := strings.TrimSpace(s.Name)
		if name == "" {
			return nil, problem.New(problem.Invalid, f+".name", "name is empty; give each sheet a name such as \"Sheet%d\"", i+1)
		}
		if err := checkName(f+".name", "sheet name", name, MaxSheetNameRunes, MaxSheetNameBytes); err != nil {
			return nil, err
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
	return out, nil
}

// AddSource attaches a citation, or returns the one already attached for the
// same normalized URL (alreadyAttached) without changing anything.
func AddSource(d *Doc, title, rawURL string, now time.Time) (src Source, alreadyAttached bool, err error) {
	if title, err = CheckSourceTitle(title); err != nil {
		return Source{}, false, err
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

// CheckSourceTitle applies the rules of a citation's title and returns it
// trimmed.
func CheckSourceTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	if title == "" {
		return "", problem.New(problem.Invalid, "title", "title is empty; give the cited page's title")
	}
	if err := checkName("title", "source title", title, MaxSourceTitleRunes, MaxSourceTitleBytes); err != nil {
		return "", err
	}
	return title, nil
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
	return problem.New(problem.NotFound, "source_id", "no source has the ID %s; read the Note's sources for their IDs", Quote(sourceID))
}

// --- helpers ---

// tabFor finds the tab and checks that op fits its type.
func tabFor(d *Doc, tabID, op, want string) (*Tab, error) {
	t, err := FindTab(d, tabID)
	if err != nil {
		return nil, err
	}
	if err := CheckOperation(t.ID, t.Type, op); err != nil {
		return nil, err
	}
	return t, nil
}

// TypeOfID returns the type of the tab with this ID, from the ID alone: the
// fixed tabs are named after their type and every other ID is
// "<type>-<n>-<suffix>" (NewTabID). A tab's type never changes, so this
// holds in every version of the Note.
func TypeOfID(id string) (string, bool) {
	switch id {
	case TypeMarkdown, TypeFiles, TypeSources:
		return id, true
	}
	typ, rest, ok := strings.Cut(id, "-")
	if ok && rest != "" && (typ == TypeSlides || typ == TypeSheet) {
		return typ, true
	}
	return "", false
}

// opTypes names, per operation, the tab types it works on (from kinds).
var opTypes = func() map[string][]string {
	m := map[string][]string{}
	for _, typ := range []string{TypeMarkdown, TypeSlides, TypeSheet, TypeSources, TypeFiles} {
		for _, op := range kinds[typ].ops {
			m[op] = append(m[op], typ)
		}
	}
	return m
}()

// CheckOperation refuses op on a tab of type typ when op can never apply to
// that type (wrong_tab_type). It does not depend on the Note's version, so
// it runs before the version check: a stale edit of the sources tab is told
// that the sources tab can't be edited, not to retry.
func CheckOperation(tabID, typ, op string) error {
	types, ok := opTypes[op]
	if !ok || slices.Contains(types, typ) {
		return nil
	}
	t := &Tab{ID: tabID, Type: typ}
	if op == "read_sheet_range" {
		return problem.New(CodeWrongTabType, "tab_id",
			"tab %s is a %s tab; a range of cells is read from sheet tabs only. Read this tab whole", Quote(t.ID), t.Type).With("tab_type", t.Type)
	}
	if op == "replace_tab_data" && (typ == TypeFiles || typ == TypeSources) {
		return problem.New(CodeWrongTabType, "tab_id",
			"tab %s is the %s tab; files and sources can't be edited this way: add a citation as a new source; files are attached by people in the web app",
			Quote(t.ID), t.Type).With("tab_type", t.Type)
	}
	return wrongType(t, op)
}

var opTabType = map[string]string{
	"replace_text":       "the markdown tab",
	"slide_add":          "slides tabs",
	"slides_add_outline": "slides tabs",
	"sheet_set_range":    "sheet tabs",
	"replace_tab_data":   "slides and sheet tabs",
}

func wrongType(t *Tab, op string) *problem.Problem {
	fits := ""
	if k, ok := kinds[t.Type]; ok {
		fits = k.fits
	}
	if fits == "" {
		return problem.New(CodeWrongTabType, "tab_id",
			"tab %s is the %s tab; %s works only on %s, and files and sources can't be edited this way (add a citation as a new source)",
			Quote(t.ID), t.Type, op, opTabType[op]).With("tab_type", t.Type)
	}
	return problem.New(CodeWrongTabType, "operation",
		"tab %s is a %s tab; %s works only on %s. For this tab use %s",
		Quote(t.ID), t.Type, op, opTabType[op], fits).With("tab_type", t.Type)
}

func checkLabel(label, def string) (string, error) {
	label = strings.TrimSpace(label)
	if label == "" {
		if def == "" {
			return "", problem.New(problem.Invalid, "label", "label is empty; give the tab a name")
		}
		label = def
	}
	if err := checkName("label", "label", label, MaxLabelRunes, MaxLabelBytes); err != nil {
		return "", err
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
	for _, f := range []struct {
		name, v  string
		maxRunes int
	}{{"title", s.Title, MaxSlideTitleRunes}, {"body", s.Body, MaxSlideTextRunes}, {"notes", s.Notes, MaxSlideTextRunes}} {
		if !utf8.ValidString(f.v) {
			return problem.New(problem.Invalid, prefix+f.name, "%s is not valid UTF-8", f.name)
		}
		if n := utf8.RuneCountInString(f.v); n > f.maxRunes {
			return problem.New(problem.Limit, prefix+f.name, "%s is %d characters; a slide %s holds at most %d characters (slide text limit)", f.name, n, f.name, f.maxRunes)
		}
		if len(f.v) > MaxSlideTextBytes {
			return problem.New(problem.Limit, prefix+f.name, "%s is %d bytes in UTF-8; at most %d bytes per slide field (slide text limit)", f.name, len(f.v), MaxSlideTextBytes)
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
		"tab %s has no sheet with the ID %s; its sheets are: %s. Leave sheet_id out for the first sheet",
		Quote(t.ID), Quote(id), strings.Join(ids, ", ")).With("sheet_ids", sheetIDs(t))
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
	case string:
		if len(x) > MaxCellBytes {
			return nil, problem.New(problem.Limit, field, "cell text is %d bytes in UTF-8; a cell holds at most %d bytes (32 KiB cell limit)", len(x), MaxCellBytes)
		}
		if !utf8.ValidString(x) {
			return nil, problem.New(problem.Invalid, field, "cell text is not valid UTF-8")
		}
		if IsFormula(x) {
			if err := CheckFormula(x, field); err != nil {
				return nil, err
			}
		}
		return x, nil
	case nil, bool:
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
			return nil, problem.New(problem.Invalid, field, "%s is not a number a cell can hold (a finite 64-bit floating-point number)", Quote(x.String()))
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
		return problem.New(problem.Invalid, "data", "data is not valid for this tab: %s", decodeReason(err))
	}
	return nil
}

// decodeReason says what is wrong with data in words of the tool, never
// in the decoder's own text (which names Go types and can quote the input).
func decodeReason(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("it is not valid JSON (at byte %d)", se.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "it is empty or cut short; give a JSON object"
	case errors.As(err, &te):
		where := te.Field
		if where == "" {
			return "it must be a JSON object"
		}
		return fmt.Sprintf("%s has the wrong type (a JSON %s); titles, names and texts are strings, cells are scalars", Quote(where), te.Value)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if n, qerr := strconv.Unquote(name); qerr == nil {
			name = n
		}
		return "unknown field " + Quote(name) + ` (a slides tab takes {"slides": [...]}, a sheet tab {"sheets": [...]})`
	}
	if err.Error() == "unexpected data after the object" {
		return "unexpected data after the object"
	}
	return "it is not a JSON object of the shape this tab takes"
}

func stamp(now time.Time) string { return now.UTC().Format(time.RFC3339) }

// FillSheetTab replaces the sheets of sheet tab tabID with in, under the
// rules of replace_tab_data's sheets (an import fills a new tab this way).
func FillSheetTab(d *Doc, tabID string, in []SheetInput) error {
	t, err := sheetTab(d, tabID)
	if err != nil {
		return err
	}
	sheets, err := buildSheets(in)
	if err != nil {
		return err
	}
	kinds[TypeSheet].replaceData(d, t, TabData{sheets: sheets})
	return nil
}
