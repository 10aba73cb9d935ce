// Package formula is Foundry's spreadsheet formula engine: it parses
// Excel-style formulas (=SUM(B2:B9)*2), lists the cells they read, evaluates
// them against a Context, and moves their references for the fill handle.
// It does no I/O. Semantics follow Excel and LibreOffice; the LibreOffice
// reference corpus in testdata/corpus.json pins them.
package formula

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// A Value is nil (empty cell), float64, string, bool or Error.
type Value = any

// Error is a spreadsheet error value such as #DIV/0!.
type Error string

// The error values formulas produce.
const (
	ErrDiv0  Error = "#DIV/0!"
	ErrRef   Error = "#REF!"
	ErrName  Error = "#NAME?"
	ErrValue Error = "#VALUE!"
	ErrNA    Error = "#N/A"
	ErrNum   Error = "#NUM!"
	ErrNull  Error = "#NULL!"
	ErrCycle Error = "#CYCLE!" // set by the caller for cells in a circular reference; propagated like other errors
)

var allErrors = []Error{ErrDiv0, ErrRef, ErrName, ErrValue, ErrNA, ErrNum, ErrNull, ErrCycle}

func (e Error) Error() string { return string(e) }

// ParseError reports whether s is one of the error literals above (for
// reading stored values back). Case is ignored: "#n/a" is ErrNA.
func ParseError(s string) (Error, bool) {
	u := strings.ToUpper(s)
	for _, e := range allErrors {
		if u == string(e) {
			return e, true
		}
	}
	return "", false
}

// MaxRow and MaxCol are the largest 0-based row and column a reference may
// name (Excel's grid: 1,048,576 rows, 16,384 columns).
const MaxRow, MaxCol = 1_048_575, 16_383

// Ref is a rectangle of cells, 0-based and inclusive. Sheet is the sheet name
// as written in the formula ("" = the formula's own sheet). A whole column
// A:A is R0=0, R1=MaxRow; a whole row 3:3 is C0=0, C1=MaxCol.
type Ref struct {
	Sheet          string
	R0, C0, R1, C1 int
}

// Context is what evaluation reads. Sheet "" is the formula's own sheet.
// Names are matched case-insensitively by the Context.
type Context interface {
	// Cell is the value of one cell (for a formula cell: its computed
	// value). ok is false when the sheet does not exist (→ #REF!).
	Cell(sheet string, row, col int) (v Value, ok bool)
	// Size is the used extent of a sheet: rows and columns that may hold
	// anything. Ranges are clipped to it when iterated. ok false: no such
	// sheet.
	Size(sheet string) (rows, cols int, ok bool)
	// Now is the time TODAY() and NOW() see.
	Now() time.Time
}

// colName is the letters of a 0-based column: 0 → A, 27 → AB.
func colName(col int) string {
	var b [8]byte
	i := len(b)
	for col >= 0 {
		i--
		b[i] = byte('A' + col%26)
		col = col/26 - 1
	}
	return string(b[i:])
}

// CellName is the A1-style name of a 0-based (row, col): CellName(0, 27) ==
// "AB1". Outside the grid it is "#REF!".
func CellName(row, col int) string {
	if row < 0 || row > MaxRow || col < 0 || col > MaxCol {
		return string(ErrRef)
	}
	return colName(col) + strconv.Itoa(row+1)
}

// ParseCell is the inverse of CellName: "B10" → 9, 1, true. It accepts lower
// case and $ ("$b$10").
func ParseCell(s string) (row, col int, ok bool) {
	p, ok := parseEndpoint(s)
	if !ok || p.kind != epCell {
		return 0, 0, false
	}
	return p.row, p.col, true
}

// Endpoint kinds of a reference part: A1, A (column), 1 (row).
const (
	epCell = iota
	epCol
	epRow
)

type endpoint struct {
	kind           int
	row, col       int
	absRow, absCol bool
}

// parseEndpoint parses one side of a reference: A1, $A$1, A, $A, 1, $1.
func parseEndpoint(s string) (endpoint, bool) {
	var p endpoint
	i := 0
	if i < len(s) && s[i] == '$' {
		p.absCol = true
		i++
	}
	j := i
	col := 0
	for j < len(s) && j-i < 4 && isLetter(s[j]) {
		col = col*26 + int(upper(s[j])-'A'+1)
		j++
	}
	letters := j - i
	if letters > 3 {
		return p, false
	}
	k := j
	if k < len(s) && s[k] == '$' {
		p.absRow = true
		k++
	}
	d := k
	row := 0
	for d < len(s) && s[d] >= '0' && s[d] <= '9' {
		if d-k >= 8 {
			return p, false
		}
		row = row*10 + int(s[d]-'0')
		d++
	}
	digits := d - k
	if d != len(s) {
		return p, false
	}
	if letters == 0 {
		// "$5" is an absolute row: the first $ was read as the column's.
		if p.absCol && p.absRow {
			return p, false
		}
		p.absRow, p.absCol = p.absCol || p.absRow, false
	}
	switch {
	case letters > 0 && digits > 0:
		p.kind = epCell
	case letters > 0 && !p.absRow:
		p.kind = epCol
	case letters == 0 && digits > 0:
		p.kind = epRow
	default:
		return p, false
	}
	p.col = col - 1
	p.row = row - 1
	if p.kind != epRow && (p.col < 0 || p.col > MaxCol) {
		return p, false
	}
	if p.kind != epCol && (p.row < 0 || p.row > MaxRow) {
		return p, false
	}
	return p, true
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// Functions is the sorted list of the function names formulas may call.
func Functions() []string {
	names := make([]string, 0, len(funcs))
	for n := range funcs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
