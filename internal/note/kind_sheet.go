package note

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"foundry/internal/formula"
	"foundry/internal/problem"
)

// A sheet tab is stored in blocks of BlockRows × BlockCols cells
// ("c/<tab>/<sheet>/<r>.<c>"); the head keeps each sheet's ID, name and row
// count. A block holds, for each of its rows, the row's cells in the
// block's columns (rows may be ragged, and a row's length is where its last
// block's cells end); an empty block is not stored. sheet_set_range and
// read_sheet_range touch only the blocks their range covers.
var sheetKind = kind{
	label: "Sheet",
	ops:   []string{"sheet_set_range", "replace_tab_data", "read_sheet_range"},
	fits:  "sheet_set_range or replace_tab_data",
	create: func(d *Doc, t *Tab, _ []SlideInput) {
		t.Sheets = []Sheet{{ID: nextItemID(d, "sheet"), Name: "Sheet1", Cells: [][]any{}}}
	},
	checkData: func(data json.RawMessage) (TabData, error) {
		var in struct {
			Sheets *[]SheetInput `json:"sheets"`
		}
		if err := decodeStrict(data, &in); err != nil {
			return TabData{}, err
		}
		if in.Sheets == nil {
			return TabData{}, problem.New(problem.Invalid, "sheets", `data of a sheet tab is {"sheets": [{"sheet_id": ..., "name": ..., "cells": [[...], ...]}, ...]}; sheets is missing`)
		}
		sheets, err := buildSheets(*in.Sheets)
		if err != nil {
			return TabData{}, err
		}
		return TabData{sheets: sheets}, nil
	},
	replaceData: func(d *Doc, t *Tab, td TabData) {
		existing := map[string]*Sheet{}
		for i := range t.Sheets {
			existing[t.Sheets[i].ID] = &t.Sheets[i]
		}
		// IDs are drawn only after everything passed, so a refusal leaves NextItem alone.
		for i := range td.sheets {
			if old := existing[td.sheets[i].ID]; old != nil {
				// The data is replaced; how people laid the sheet out stays.
				td.sheets[i].Widths, td.sheets[i].Formats = old.Widths, old.Formats
			} else {
				td.sheets[i].ID = nextItemID(d, "sheet")
			}
		}
		t.Sheets = td.sheets
	},
	read: func(d *Doc, t *Tab, c *Content) { c.Sheets = nonNilList(t.Sheets) },
	diff: func(w *writer, base, next *Doc, bt, t *Tab, ht *headTab) error {
		had := map[string]*Sheet{}
		if bt != nil {
			for i := range bt.Sheets {
				had[bt.Sheets[i].ID] = &bt.Sheets[i]
			}
		}
		now := map[string]bool{}
		for i := range t.Sheets {
			sh := &t.Sheets[i]
			if now[sh.ID] {
				return fmt.Errorf("tab %s: sheet ID %s appears twice", t.ID, sh.ID)
			}
			now[sh.ID] = true
			ht.Sheets = append(ht.Sheets, headSheet{ID: sh.ID, Name: sh.Name, Rows: len(sh.Cells), Widths: sh.Widths, Formats: sh.Formats})
			if err := diffSheet(w, t.ID, had[sh.ID], sh); err != nil {
				return err
			}
		}
		for id := range had {
			if !now[id] {
				w.gone(blockPrefix(t.ID, id))
			}
		}
		return nil
	},
	assemble: func(a *assembler, d *Doc, t *Tab, ht headTab) error {
		var had map[string]*Sheet
		if bt := a.baseTab(t.ID, TypeSheet); bt != nil {
			had = map[string]*Sheet{}
			for i := range bt.Sheets {
				had[bt.Sheets[i].ID] = &bt.Sheets[i]
			}
		}
		for _, hs := range ht.Sheets {
			sh, err := assembleSheet(a, t.ID, hs, had[hs.ID])
			if err != nil {
				return err
			}
			t.Sheets = append(t.Sheets, sh)
		}
		return nil
	},
	prefix: func(tabID string) string { return "c/" + tabID + "/" },
}

func blockPrefix(tab, sheet string) string { return "c/" + tab + "/" + sheet + "/" }

func blockKey(tab, sheet string, br, bc int) string {
	return blockPrefix(tab, sheet) + strconv.Itoa(br) + "." + strconv.Itoa(bc)
}

// segment is row's cells in block column bc.
func segment(row []any, bc int) []any {
	lo := bc * BlockCols
	if lo >= len(row) {
		return nil
	}
	return row[lo:min(len(row), lo+BlockCols)]
}

func sameRow(a, b []any) bool { return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) }

func cellEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case formula.Error:
		y, ok := b.(formula.Error)
		return ok && x == y
	}
	return false // not a cell value: always rewritten
}

func sameSegment(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !cellEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// encodeBlock is the stored form of block (br, bc) of cells: its rows'
// segments, trailing empty ones left out; nil when the block is empty.
func encodeBlock(cells [][]any, br, bc int) ([]byte, error) {
	segs := blockSegs(cells, br, bc)
	if segs == nil {
		return nil, nil
	}
	return json.Marshal(segs)
}

// encodeValueBlock is encodeBlock for computed values, where an error is
// {"e": "#DIV/0!"}, so a text that reads like one stays a text.
func encodeValueBlock(values [][]any, br, bc int) ([]byte, error) {
	segs := blockSegs(values, br, bc)
	if segs == nil {
		return nil, nil
	}
	for i, seg := range segs {
		if !slices.ContainsFunc(seg, isError) {
			continue
		}
		seg = slices.Clone(seg)
		for j, v := range seg {
			if e, ok := v.(formula.Error); ok {
				seg[j] = map[string]string{"e": string(e)}
			}
		}
		segs[i] = seg
	}
	return json.Marshal(segs)
}

// decodeValueBlock reads what encodeValueBlock wrote.
func decodeValueBlock(data []byte) ([][]any, error) {
	segs, err := decodeBlock(data)
	if err != nil {
		return nil, err
	}
	for _, seg := range segs {
		for j, v := range seg {
			if m, ok := v.(map[string]any); ok {
				code, _ := m["e"].(string)
				e, ok := formula.ParseError(code)
				if !ok {
					return nil, fmt.Errorf("value %v is not an error value", v)
				}
				seg[j] = e
			}
		}
	}
	return segs, nil
}

func isError(v any) bool {
	_, ok := v.(formula.Error)
	return ok
}

// blockSegs is block (br, bc) of grid: its rows' segments, trailing empty
// ones left out; nil when the block is empty.
func blockSegs(cells [][]any, br, bc int) [][]any {
	lo, hi := br*BlockRows, min(len(cells), (br+1)*BlockRows)
	last := -1
	for r := lo; r < hi; r++ {
		if len(segment(cells[r], bc)) > 0 {
			last = r
		}
	}
	if last < 0 {
		return nil
	}
	segs := make([][]any, last-lo+1)
	for r := lo; r <= last; r++ {
		segs[r-lo] = segment(cells[r], bc)
		if segs[r-lo] == nil {
			segs[r-lo] = []any{}
		}
	}
	return segs
}

func diffSheet(w *writer, tab string, old, sh *Sheet) error {
	var oldCells, oldValues [][]any
	if old != nil {
		oldCells, oldValues = old.Cells, old.Values
	}
	if err := diffGrid(w, old != nil, oldCells, sh.Cells, func(br, bc int) string { return blockKey(tab, sh.ID, br, bc) }, encodeBlock); err != nil {
		return err
	}
	return diffGrid(w, old != nil, oldValues, sh.Values, func(br, bc int) string { return valueBlockKey(tab, sh.ID, br, bc) }, encodeValueBlock)
}

// valueBlockKey is where the computed values of block (br, bc)'s formula
// cells are stored, beside its cells: a recalculation that changes only
// values rewrites only these.
func valueBlockKey(tab, sheet string, br, bc int) string { return blockKey(tab, sheet, br, bc) + "v" }

// diffGrid writes the blocks of grid next that differ from old (had: old
// is stored).
func diffGrid(w *writer, had bool, old, next [][]any, keyOf func(br, bc int) string, encode func([][]any, int, int) ([]byte, error)) error {
	rows := max(len(old), len(next))
	for br := 0; br*BlockRows < rows; br++ {
		dirty := map[int]bool{}
		for r := br * BlockRows; r < min(rows, (br+1)*BlockRows); r++ {
			var a, b []any
			inA, inB := r < len(old), r < len(next)
			if inA {
				a = old[r]
			}
			if inB {
				b = next[r]
			}
			if inA && inB && sameRow(a, b) {
				continue
			}
			for bc := 0; bc*BlockCols < max(len(a), len(b)); bc++ {
				if !sameSegment(segment(a, bc), segment(b, bc)) {
					dirty[bc] = true
				}
			}
		}
		for _, bc := range slices.Sorted(maps.Keys(dirty)) {
			data, err := encode(next, br, bc)
			if err != nil {
				return err
			}
			var prev []byte
			if had {
				if prev, err = encode(old, br, bc); err != nil {
					return err
				}
			}
			w.put(keyOf(br, bc), prev, data)
		}
	}
	return nil
}

// assembleSheet builds one sheet: the blocks read now over the rows of
// old, the same sheet at an earlier version (nil: every block is read now).
func assembleSheet(a *assembler, tab string, hs headSheet, old *Sheet) (Sheet, error) {
	if hs.Rows < 0 || hs.Rows > MaxSheetCells {
		return Sheet{}, fmt.Errorf("note head: sheet %s has %d rows", hs.ID, hs.Rows)
	}
	sh := Sheet{ID: hs.ID, Name: hs.Name, Widths: hs.Widths, Formats: hs.Formats}
	var oldCells, oldValues [][]any
	if old != nil {
		oldCells, oldValues = old.Cells, old.Values
	}
	// The blocks read now, by block row, of cells and of values.
	prefix := blockPrefix(tab, hs.ID)
	cells, values := map[int]map[int][][]any{}, map[int]map[int][][]any{}
	for key, p := range a.rows {
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		into, isValues := cells, false
		if r, ok := strings.CutSuffix(rest, "v"); ok {
			rest, into, isValues = r, values, true
		}
		brs, bcs, ok := strings.Cut(rest, ".")
		br, err1 := strconv.Atoi(brs)
		bc, err2 := strconv.Atoi(bcs)
		if !ok || err1 != nil || err2 != nil || br < 0 || bc < 0 {
			return Sheet{}, fmt.Errorf("note part %s: not a block key", key)
		}
		var segs [][]any
		if p.Data != nil {
			var err error
			if isValues {
				segs, err = decodeValueBlock(p.Data)
			} else {
				segs, err = decodeBlock(p.Data)
			}
			if err != nil {
				return Sheet{}, fmt.Errorf("note part %s: %w", key, err)
			}
		}
		if len(segs) > BlockRows || slices.ContainsFunc(segs, func(s []any) bool { return len(s) > BlockCols }) {
			return Sheet{}, fmt.Errorf("note part %s: larger than a block", key)
		}
		if into[br] == nil {
			into[br] = map[int][][]any{}
		}
		into[br][bc] = segs
	}
	sh.Cells = assembleGrid(hs.Rows, oldCells, cells, true)
	sh.Values = assembleGrid(hs.Rows, oldValues, values, false)
	return sh, nil
}

// assembleGrid is a grid of rows rows: the blocks read over the rows of
// old. Without full, a grid with nothing in it is nil.
func assembleGrid(rows int, old [][]any, read map[int]map[int][][]any, full bool) [][]any {
	if !full && len(read) == 0 && len(old) == 0 {
		return nil
	}
	grid := make([][]any, rows)
	for r := range grid {
		if r < len(old) {
			grid[r] = old[r]
		} else {
			grid[r] = []any{}
		}
	}
	for br, blocks := range read {
		maxBC := -1
		for bc := range blocks {
			maxBC = max(maxBC, bc)
		}
		for r := br * BlockRows; r < min(rows, (br+1)*BlockRows); r++ {
			// The row's segment in each block column: read now, or the
			// old row's; its length ends with its last non-empty segment.
			base := grid[r]
			if sameReadSegments(blocks, base, r-br*BlockRows) {
				continue // the blocks read hold what the row has: keep it shared
			}
			segs := make([][]any, max(maxBC+1, (len(base)+BlockCols-1)/BlockCols))
			length := 0
			for bc := range segs {
				segs[bc] = segment(base, bc)
				if read, ok := blocks[bc]; ok {
					segs[bc] = nil
					if i := r - br*BlockRows; i < len(read) {
						segs[bc] = read[i]
					}
				}
				if len(segs[bc]) > 0 {
					length = bc*BlockCols + len(segs[bc])
				}
			}
			row := make([]any, length)
			for bc, seg := range segs {
				copy(row[min(bc*BlockCols, length):], seg)
			}
			grid[r] = row
		}
	}
	return grid
}

// sameReadSegments reports whether row i of each block read (by block
// column) holds what row holds in that block column. Then the row rebuilt
// from them would be row itself: a restore, or a read of another node's
// write, that rewrote one cell of a block row shares the block row's other
// rows, and Diff skips them by identity.
func sameReadSegments(blocks map[int][][]any, row []any, i int) bool {
	for bc, read := range blocks {
		var seg []any
		if i < len(read) {
			seg = read[i]
		}
		if !sameSegment(seg, segment(row, bc)) {
			return false
		}
	}
	return true
}

// CheckSheetName trims name and applies the rules of a sheet's name.
func CheckSheetName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", problem.New(problem.Invalid, "name", "name is empty; give the sheet a name such as \"Sheet2\"")
	}
	if err := checkName("name", "sheet name", name, MaxSheetNameRunes, MaxSheetNameBytes); err != nil {
		return "", err
	}
	return name, nil
}

// AddSheet appends an empty sheet named name (trimmed) to sheet tab tabID.
func AddSheet(d *Doc, tabID, name string) (Sheet, error) {
	name, err := CheckSheetName(name)
	if err != nil {
		return Sheet{}, err
	}
	t, err := sheetTab(d, tabID)
	if err != nil {
		return Sheet{}, err
	}
	if len(t.Sheets) >= MaxSheetsPerTab {
		return Sheet{}, problem.New(problem.Limit, "name", "tab %s has %d sheets already; at most %d sheets per tab (sheet tab limit); add a sheet tab instead", Quote(tabID), len(t.Sheets), MaxSheetsPerTab)
	}
	sh := Sheet{ID: nextItemID(d, "sheet"), Name: name, Cells: [][]any{}}
	t.Sheets = append(slices.Clip(t.Sheets), sh)
	return sh, nil
}

// RenameSheet renames sheet sheetID of tab tabID (the name trimmed).
func RenameSheet(d *Doc, tabID, sheetID, name string) error {
	name, err := CheckSheetName(name)
	if err != nil {
		return err
	}
	t, err := sheetTab(d, tabID)
	if err != nil {
		return err
	}
	sh, err := findSheet(t, sheetID)
	if err != nil {
		return err
	}
	sh.Name = name
	return nil
}

// DeleteSheet deletes sheet sheetID of tab tabID, and its cells; a tab's
// last sheet stays (delete the tab instead).
func DeleteSheet(d *Doc, tabID, sheetID string) error {
	t, err := sheetTab(d, tabID)
	if err != nil {
		return err
	}
	sh, err := findSheet(t, sheetID)
	if err != nil {
		return err
	}
	if len(t.Sheets) == 1 {
		return problem.New(problem.Invalid, "sheet_id", "sheet %s is the last sheet of tab %s; a sheet tab keeps at least one sheet, so delete the tab instead", Quote(sh.ID), Quote(tabID))
	}
	next := make([]Sheet, 0, len(t.Sheets)-1)
	for i := range t.Sheets {
		if &t.Sheets[i] != sh {
			next = append(next, t.Sheets[i])
		}
	}
	t.Sheets = next
	return nil
}

// NotSheetTab is the answer to adding, renaming or deleting a sheet of a
// tab of another type.
func NotSheetTab(tabID, typ string) *problem.Problem {
	return problem.New(CodeWrongTabType, "tab_id", "tab %s is a %s tab; only a sheet tab has sheets: give the tab_id of a sheet tab", Quote(tabID), typ).With("tab_type", typ)
}

func sheetTab(d *Doc, tabID string) (*Tab, error) {
	t, err := FindTab(d, tabID)
	if err != nil {
		return nil, err
	}
	if t.Type != TypeSheet {
		return nil, NotSheetTab(t.ID, t.Type)
	}
	return t, nil
}

// Layout limits: a column's width in pixels, and the number formats one
// sheet keeps.
const (
	MinColWidth     = 24
	MaxColWidth     = 2000
	MaxSheetFormats = 500
	MaxWidthsPerSet = 100 // columns one layout change may resize
)

// NumberFormats are the formats a range can have; "general" takes a
// format away.
var NumberFormats = []string{"number", "percent", "currency", "date", "general"}

// SheetLayout is a change of a sheet's layout: column widths by column
// index (0: back to the default width), and a number format over a range.
type SheetLayout struct {
	Widths map[string]int
	Format *CellFormat
}

// SetSheetLayout changes the layout of sheet sheetID of tab tabID.
func SetSheetLayout(d *Doc, tabID, sheetID string, l SheetLayout) error {
	if len(l.Widths) == 0 && l.Format == nil {
		return problem.New(problem.Invalid, "widths", "give widths (column index to pixels) or a format ({range, format}) to change")
	}
	if len(l.Widths) > MaxWidthsPerSet {
		return problem.New(problem.Limit, "widths", "widths names %d columns; at most %d per change", len(l.Widths), MaxWidthsPerSet)
	}
	for k, w := range l.Widths {
		c, err := strconv.Atoi(k)
		if err != nil || c < 0 || c > formula.MaxCol || strconv.Itoa(c) != k {
			return problem.New(problem.Invalid, "widths", "%s is not a column index; give 0 for column A up to %d", Quote(k), formula.MaxCol)
		}
		if w != 0 && (w < MinColWidth || w > MaxColWidth) {
			return problem.New(problem.Invalid, "widths."+k, "width %d is out of range; give %d to %d pixels, or 0 for the default width", w, MinColWidth, MaxColWidth)
		}
	}
	var clean CellFormat
	var area rect
	if l.Format != nil {
		if !slices.Contains(NumberFormats, l.Format.Format) {
			return problem.New(problem.Invalid, "format.format", "format %s is not one of %s", Quote(l.Format.Format), strings.Join(NumberFormats, ", "))
		}
		var ok bool
		if area, clean.Range, ok = parseArea(l.Format.Range); !ok {
			return problem.New(problem.Invalid, "format.range", "range %s is not a range of cells; give one such as B2:C9 or B2", Quote(l.Format.Range))
		}
		clean.Format = l.Format.Format
	}
	t, err := sheetTab(d, tabID)
	if err != nil {
		return err
	}
	sh, err := findSheet(t, sheetID)
	if err != nil {
		return err
	}
	if len(l.Widths) > 0 {
		widths := maps.Clone(sh.Widths)
		if widths == nil {
			widths = map[string]int{}
		}
		for k, w := range l.Widths {
			if w == 0 {
				delete(widths, k)
			} else {
				widths[k] = w
			}
		}
		if len(widths) == 0 {
			widths = nil
		}
		sh.Widths = widths
	}
	if l.Format != nil {
		// Formats the new one covers whole are gone; the new one is last,
		// so it wins where it overlaps the others.
		var kept []CellFormat
		overlaps := false
		for _, f := range sh.Formats {
			q, _, _ := parseArea(f.Range)
			if within(q, area) {
				continue
			}
			overlaps = overlaps || q.r0 <= area.r1 && area.r0 <= q.r1 && q.c0 <= area.c1 && area.c0 <= q.c1
			kept = append(kept, f)
		}
		if clean.Format != "general" || overlaps {
			kept = append(kept, clean)
		}
		if len(kept) > MaxSheetFormats {
			return problem.New(problem.Limit, "format", "sheet %s has %d number formats; at most %d per sheet: format larger ranges at once", Quote(sh.ID), len(kept), MaxSheetFormats)
		}
		sh.Formats = kept
	}
	return nil
}

// parseArea reads "B2" or "B2:C9" (either corner first) and names it
// canonically.
func parseArea(s string) (rect, string, bool) {
	a, b, two := strings.Cut(strings.TrimSpace(s), ":")
	r0, c0, ok := formula.ParseCell(a)
	if !ok {
		return rect{}, "", false
	}
	r1, c1 := r0, c0
	if two {
		if r1, c1, ok = formula.ParseCell(b); !ok {
			return rect{}, "", false
		}
	}
	r0, r1 = min(r0, r1), max(r0, r1)
	c0, c1 = min(c0, c1), max(c0, c1)
	name := CellAddress(r0, c0)
	if r0 != r1 || c0 != c1 {
		name += ":" + CellAddress(r1, c1)
	}
	return rect{0, int32(r0), int32(c0), int32(r1), int32(c1)}, name, true
}

func within(q, area rect) bool {
	return area.r0 <= q.r0 && q.r1 <= area.r1 && area.c0 <= q.c0 && q.c1 <= area.c1
}
