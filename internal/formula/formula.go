// Package formula is Foundry's spreadsheet formula engine: it parses
// Excel-style formulas (=SUM(B2:B9)*2), lists the cells they read, evaluates
// them against a Context, and moves their references for the fill handle.
// It does no I/O.
//
// Syntax: numbers (1.5, 1E+3), "text" ("" is a quote), TRUE/FALSE, error
// literals (#N/A), references A1, $A$1, A1:B3, A:C, 2:5, Sheet2!A1,
// 'Sheet 2'!A1 (a quote in the name doubled), array constants {1,2;3,4}, the operators
// by precedence: range intersection (a space), unary -, %, ^, * /, + -, &,
// comparisons; function calls (Functions lists them; an unknown one
// evaluates to #NAME?, and so does an unknown name).
//
// Semantics follow Excel, checked against LibreOffice by the reference
// corpus in testdata/corpus.json (where they part, Excel's rule is kept
// and the corpus says why). Operators applied to ranges work element-wise,
// as in SUMPRODUCT((A1:A9>2)*B1:B9); elsewhere a range given where one value
// belongs is read by implicit intersection with the formula's row or
// column, and a formula's result is the first value of a range.
package formula

import (
	"math"
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

// Significant is n to 15 significant digits, the precision spreadsheets
// keep a result to: 300.5*1.2 is 360.6, not the 360.59999999999997 of
// binary floating point, in what people see, agents read and files get.
//
// Where 10^k is exact (|k| ≤ 22) it rounds by scaling n to 15 digits
// before the point: the scaled value x is below 10^15, so scaling errs by
// at most half a unit of x's last place, 1/16; when x's fraction is
// further than that from a half, math.Round rounds as the decimal would,
// and an integer divided (or multiplied) by an exact power of ten rounds
// correctly, as parsing the decimal does. That is a tenth of the cost of
// formatting and parsing, which does the rest.
func Significant(n float64) float64 {
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return n
	}
	k := 14 - int(math.Floor(math.Log10(math.Abs(n))))
	if k > -len(pow10) && k < len(pow10) {
		var x float64
		if k >= 0 {
			x = n * pow10[k]
		} else {
			x = n / pow10[-k]
		}
		if a := math.Abs(x); a >= 1e14 && a < 1e15 {
			if f := a - math.Floor(a); math.Abs(f-0.5) > 0.07 {
				if k >= 0 {
					return math.Round(x) / pow10[k]
				}
				return math.Round(x) * pow10[-k]
			}
		}
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(n, 'g', 15, 64), 64)
	if err != nil {
		return n
	}
	return r
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

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
