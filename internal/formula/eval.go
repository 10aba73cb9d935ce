package formula

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on one evaluation. A range is clipped to its sheet's used extent
// before it is read, so SUM(A:A) reads only the used rows; what is left is
// bounded by maxCells, the cells one Eval may read in all (a formula that
// would read more, e.g. SUMPRODUCT over huge used areas, gives #NUM!), and
// maxArray, the cells a range may have when an operator turns it into an
// array ((A1:A9>2)*B1:B9): an array of whole columns is allowed, one of
// whole rows × columns is not (#NUM!).
const (
	maxCells      = 10_000_000
	maxArray      = 2_100_000
	maxArrayTotal = 4_200_000 // elements of all arrays one Eval makes
)

// recoverPanics is false in the fuzz test, so that a bug shows as a panic
// there instead of a quiet #VALUE!.
var recoverPanics = true

// rangeVal is a reference being evaluated: the full rectangle, unclipped.
type rangeVal struct {
	sheet          string
	r0, c0, r1, c1 int
}

func (r *rangeVal) rows() int { return r.r1 - r.r0 + 1 }
func (r *rangeVal) cols() int { return r.c1 - r.c0 + 1 }

// arrayVal is an array: a constant, or what an operator made of ranges.
type arrayVal struct {
	rows, cols int
	v          []Value
}

type evaluator struct {
	ctx      Context
	row, col int
	cells    int   // cells read so far
	arrays   int   // array elements made so far
	abort    Error // set once a bound is hit
}

// Eval computes the formula placed at (row, col) of its own sheet. The result
// is a scalar: a range gives its top-left value, an empty cell 0. Eval never
// panics: a failure inside gives #VALUE!.
func (f *Formula) Eval(ctx Context, row, col int) (result Value) {
	if recoverPanics {
		defer func() {
			if r := recover(); r != nil {
				result = ErrValue
			}
		}()
	}
	e := &evaluator{ctx: ctx, row: row, col: col}
	v := e.topLeft(e.eval(f.root))
	if e.abort != "" {
		return e.abort
	}
	switch x := v.(type) {
	case nil:
		return 0.0
	case float64:
		return fixNum(x)
	}
	return v
}

func fixNum(x float64) Value {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ErrNum
	}
	if x == 0 {
		return 0.0 // no -0
	}
	return x
}

// topLeft reduces a range or array to its first value.
func (e *evaluator) topLeft(v any) Value {
	switch x := v.(type) {
	case *rangeVal:
		return e.cell(x.sheet, x.r0, x.c0)
	case *arrayVal:
		if len(x.v) == 0 {
			return ErrValue
		}
		return x.v[0]
	}
	return v
}

// cell reads one cell, normalizing what the Context gives.
func (e *evaluator) cell(sheet string, r, c int) Value {
	v, ok := e.ctx.Cell(sheet, r, c)
	if !ok {
		return ErrRef
	}
	return normalize(v)
}

func normalize(v any) Value {
	switch x := v.(type) {
	case nil, string, bool:
		return v
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ErrNum
		}
		return v // as given: no new allocation
	case Error:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case float32:
		return fixNum(float64(x))
	}
	return ErrValue
}

// eval gives a scalar Value, a *rangeVal or an *arrayVal.
func (e *evaluator) eval(n node) any {
	if e.abort != "" {
		return e.abort
	}
	switch n := n.(type) {
	case numNode:
		return n.v
	case strNode:
		return n.v
	case boolNode:
		return n.v
	case errNode:
		return n.v
	case missingNode:
		return nil
	case nameNode:
		return ErrName
	case refNode:
		return &rangeVal{sheet: n.ref.Sheet, r0: n.ref.R0, c0: n.ref.C0, r1: n.ref.R1, c1: n.ref.C1}
	case arrayNode:
		return &arrayVal{rows: n.rows, cols: n.cols, v: n.v}
	case unaryNode:
		x := e.eval(n.x)
		if isMulti(x) && !oneCell(x) {
			return e.mapArray(x, func(v Value) Value { return unary(n.op, v) })
		}
		return unary(n.op, e.scalarOf(x))
	case binNode:
		if n.op == " " {
			return e.intersect(e.eval(n.l), e.eval(n.r))
		}
		l, r := e.eval(n.l), e.eval(n.r)
		if isMulti(l) && !oneCell(l) || isMulti(r) && !oneCell(r) {
			return e.zipArrays(l, r, func(a, b Value) Value { return binary(n.op, a, b) })
		}
		return binary(n.op, e.scalarOf(l), e.scalarOf(r))
	case callNode:
		if n.fn == nil {
			return ErrName
		}
		r := n.fn.call(e, n.args)
		if x, ok := r.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
			return ErrNum
		}
		return r
	}
	return ErrValue
}

// oneCell reports whether v is a reference to one cell, which an operator
// reads as that cell's value: the same answer as an array of one, without
// building the array (=$A$1*2 is the most common formula there is).
func oneCell(v any) bool {
	x, ok := v.(*rangeVal)
	return ok && x.r0 == x.r1 && x.c0 == x.c1
}

func isMulti(v any) bool {
	switch v.(type) {
	case *rangeVal, *arrayVal:
		return true
	}
	return false
}

// scalar evaluates n to one value: a range by implicit intersection with the
// formula's row or column (a one-cell range: that cell), an array by its
// first element.
func (e *evaluator) scalar(n node) Value { return e.scalarOf(e.eval(n)) }

func (e *evaluator) scalarOf(v any) Value {
	switch x := v.(type) {
	case *rangeVal:
		if x.r0 == x.r1 && x.c0 == x.c1 {
			return e.cell(x.sheet, x.r0, x.c0)
		}
		if x.c0 == x.c1 && e.row >= x.r0 && e.row <= x.r1 {
			return e.cell(x.sheet, e.row, x.c0)
		}
		if x.r0 == x.r1 && e.col >= x.c0 && e.col <= x.c1 {
			return e.cell(x.sheet, x.r0, e.col)
		}
		return ErrValue
	case *arrayVal:
		return e.topLeft(x)
	}
	return v
}

func (e *evaluator) intersect(a, b any) any {
	x, ok1 := a.(*rangeVal)
	y, ok2 := b.(*rangeVal)
	if !ok1 || !ok2 {
		if err, ok := a.(Error); ok {
			return err
		}
		if err, ok := b.(Error); ok {
			return err
		}
		return ErrValue
	}
	if !strings.EqualFold(x.sheet, y.sheet) {
		return ErrValue
	}
	r := &rangeVal{sheet: x.sheet, r0: max(x.r0, y.r0), c0: max(x.c0, y.c0), r1: min(x.r1, y.r1), c1: min(x.c1, y.c1)}
	if r.r0 > r.r1 || r.c0 > r.c1 {
		return ErrNull
	}
	return r
}

// used is the part of a range inside its sheet's used extent: rows and
// columns counted from the range's top-left. ok false: no such sheet.
func (e *evaluator) used(r *rangeVal) (rows, cols int, ok bool) {
	sr, sc, ok := e.ctx.Size(r.sheet)
	if !ok {
		return 0, 0, false
	}
	rows = min(r.r1, sr-1) - r.r0 + 1
	cols = min(r.c1, sc-1) - r.c0 + 1
	if rows < 0 || cols < 0 {
		rows, cols = 0, 0
	}
	return rows, cols, true
}

// spend counts n cells read; false once the evaluation is over its bound.
func (e *evaluator) spend(n int) bool {
	e.cells += n
	if e.cells > maxCells {
		e.abort = ErrNum
		return false
	}
	return true
}

// grid is a 2-D view of a value for the lookup and criteria functions.
type grid struct {
	rows, cols int // full size
	uRows      int // rows that may hold anything (the rest are empty)
	uCols      int
	at         func(i, j int) Value
}

// gridOf views v as a grid; err is set when it cannot be read.
func (e *evaluator) gridOf(v any) (grid, Error) {
	switch x := v.(type) {
	case *rangeVal:
		ur, uc, ok := e.used(x)
		if !ok {
			return grid{}, ErrRef
		}
		if !e.spend(ur * uc) {
			return grid{}, ErrNum
		}
		return grid{rows: x.rows(), cols: x.cols(), uRows: ur, uCols: uc, at: func(i, j int) Value {
			if i >= ur || j >= uc {
				return nil
			}
			return e.cell(x.sheet, x.r0+i, x.c0+j)
		}}, ""
	case *arrayVal:
		return grid{rows: x.rows, cols: x.cols, uRows: x.rows, uCols: x.cols, at: func(i, j int) Value { return x.v[i*x.cols+j] }}, ""
	case Error:
		return grid{}, x
	}
	return grid{rows: 1, cols: 1, uRows: 1, uCols: 1, at: func(int, int) Value { return v }}, ""
}

// each calls fn for every value a range or array may hold (a range's empty
// cells outside the used extent are not visited), stopping when fn returns
// false. It reports the error that stopped it: #REF! for a missing sheet,
// #NUM! past the bound.
func (e *evaluator) each(v any, fn func(Value) bool) Error {
	switch x := v.(type) {
	case *rangeVal:
		ur, uc, ok := e.used(x)
		if !ok {
			return ErrRef
		}
		if !e.spend(ur * uc) {
			return ErrNum
		}
		for i := 0; i < ur; i++ {
			for j := 0; j < uc; j++ {
				if !fn(e.cell(x.sheet, x.r0+i, x.c0+j)) {
					return ""
				}
			}
		}
	case *arrayVal:
		for _, v := range x.v {
			if !fn(v) {
				return ""
			}
		}
	default:
		fn(v)
	}
	return ""
}

// spendArray counts n array elements made; false past the bound.
func (e *evaluator) spendArray(n int) bool {
	e.arrays += n
	if n > maxArray || e.arrays > maxArrayTotal {
		e.abort = ErrNum
		return false
	}
	return true
}

// toArray materializes a range (or wraps a scalar) for element-wise use.
func (e *evaluator) toArray(v any) (*arrayVal, Error) {
	switch x := v.(type) {
	case *arrayVal:
		return x, ""
	case *rangeVal:
		if !e.spendArray(x.rows() * x.cols()) {
			return nil, ErrNum
		}
		g, err := e.gridOf(x)
		if err != "" {
			return nil, err
		}
		a := &arrayVal{rows: g.rows, cols: g.cols, v: make([]Value, g.rows*g.cols)}
		for i := 0; i < g.uRows; i++ {
			for j := 0; j < g.uCols; j++ {
				a.v[i*a.cols+j] = g.at(i, j)
			}
		}
		return a, ""
	}
	return &arrayVal{rows: 1, cols: 1, v: []Value{v}}, ""
}

func (e *evaluator) mapArray(v any, fn func(Value) Value) any {
	a, err := e.toArray(v)
	if err != "" {
		return err
	}
	if !e.spendArray(len(a.v)) {
		return ErrNum
	}
	out := &arrayVal{rows: a.rows, cols: a.cols, v: make([]Value, len(a.v))}
	for i, x := range a.v {
		out.v[i] = fn(x)
	}
	return out
}

// zipArrays applies fn element-wise; a one-row or one-column side is
// repeated, and elements beyond the smaller side are #N/A (as Excel).
func (e *evaluator) zipArrays(l, r any, fn func(a, b Value) Value) any {
	a, err := e.toArray(l)
	if err != "" {
		return err
	}
	b, err := e.toArray(r)
	if err != "" {
		return err
	}
	rows, cols := max(a.rows, b.rows), max(a.cols, b.cols)
	if !e.spendArray(rows * cols) {
		return ErrNum
	}
	at := func(x *arrayVal, i, j int) Value {
		if x.rows == 1 {
			i = 0
		}
		if x.cols == 1 {
			j = 0
		}
		if i >= x.rows || j >= x.cols {
			return ErrNA
		}
		return x.v[i*x.cols+j]
	}
	out := &arrayVal{rows: rows, cols: cols, v: make([]Value, rows*cols)}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			out.v[i*cols+j] = fn(at(a, i, j), at(b, i, j))
		}
	}
	return out
}

// Coercion.

// toNum converts like Excel arithmetic: empty 0, TRUE 1, numeric text its
// number, other text #VALUE!.
func toNum(v Value) (float64, Error) {
	switch x := v.(type) {
	case nil:
		return 0, ""
	case float64:
		return x, ""
	case bool:
		if x {
			return 1, ""
		}
		return 0, ""
	case string:
		if f, ok := parseNumberText(x); ok {
			return f, ""
		}
		return 0, ErrValue
	case Error:
		return 0, x
	}
	return 0, ErrValue
}

// parseNumberText reads text as a number the way a cell entry would be:
// "3", " -1.5e3 ", "1,000", "50%", "2024-01-15", "13:30", "2024-01-15 13:30".
func parseNumberText(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	pct := false
	if strings.HasSuffix(s, "%") {
		pct = true
		s = strings.TrimSpace(s[:len(s)-1])
	}
	if f, ok := plainNumber(s); ok {
		if pct {
			f /= 100
		}
		return f, true
	}
	if pct {
		return 0, false
	}
	return parseDateTimeText(s)
}

func plainNumber(s string) (float64, bool) {
	t := s
	if t != "" && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	if strings.Contains(t, ",") {
		// Thousands separators: 1,000 or 12,345.6 (groups of three).
		intPart, frac, _ := strings.Cut(t, ".")
		groups := strings.Split(intPart, ",")
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			return 0, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return 0, false
			}
		}
		t = strings.Join(groups, "")
		if frac != "" || strings.Contains(s, ".") {
			t += "." + frac
		}
		s = s[:len(s)-len(strings.TrimLeft(s, "+-"))] + t
	}
	if !numberLiteral.MatchString(t) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// toText converts like Excel's &: numbers in general format, TRUE/FALSE.
func toText(v Value) (string, Error) {
	switch x := v.(type) {
	case nil:
		return "", ""
	case string:
		return x, ""
	case float64:
		return formatGeneral(x), ""
	case bool:
		if x {
			return "TRUE", ""
		}
		return "FALSE", ""
	case Error:
		return "", x
	}
	return "", ErrValue
}

// formatGeneral writes a number as the General format shows it in a text
// context: up to 15 significant digits, no trailing zeros, exponent form for
// very large or small magnitudes.
func formatGeneral(x float64) string {
	if x == 0 {
		return "0"
	}
	s := strconv.FormatFloat(x, 'g', 15, 64)
	f, _ := strconv.ParseFloat(s, 64)
	a := math.Abs(f)
	if a >= 1e-5 && a < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s = strconv.FormatFloat(f, 'E', -1, 64)
	mant, exp, _ := strings.Cut(s, "E")
	sign := exp[0]
	exp = strings.TrimLeft(exp[1:], "0")
	if len(exp) < 2 {
		exp = strings.Repeat("0", 2-len(exp)) + exp
	}
	return mant + "E" + string(sign) + exp
}

// toBool converts like Excel's logical functions.
func toBool(v Value) (bool, Error) {
	switch x := v.(type) {
	case nil:
		return false, ""
	case bool:
		return x, ""
	case float64:
		return x != 0, ""
	case string:
		switch strings.ToUpper(x) {
		case "TRUE":
			return true, ""
		case "FALSE":
			return false, ""
		}
		return false, ErrValue
	case Error:
		return false, x
	}
	return false, ErrValue
}

func unary(op string, v Value) Value {
	x, err := toNum(v)
	if err != "" {
		return err
	}
	if op == "%" {
		return fixNum(x / 100)
	}
	return fixNum(-x)
}

func binary(op string, a, b Value) Value {
	switch op {
	case "&":
		x, err := toText(a)
		if err != "" {
			return err
		}
		y, err := toText(b)
		if err != "" {
			return err
		}
		if len(x)+len(y) > maxText && utf8.RuneCountInString(x)+utf8.RuneCountInString(y) > maxText {
			return ErrValue // longer than a cell may hold, as Excel
		}
		return x + y
	case "=", "<>", "<", "<=", ">", ">=":
		if err, ok := a.(Error); ok {
			return err
		}
		if err, ok := b.(Error); ok {
			return err
		}
		c := compare(a, b)
		switch op {
		case "=":
			return c == 0
		case "<>":
			return c != 0
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		}
		return c >= 0
	}
	x, err := toNum(a)
	if err != "" {
		return err
	}
	y, err := toNum(b)
	if err != "" {
		return err
	}
	switch op {
	case "+":
		return fixNum(x + y)
	case "-":
		return fixNum(x - y)
	case "*":
		return fixNum(x * y)
	case "/":
		if y == 0 {
			return ErrDiv0
		}
		return fixNum(x / y)
	case "^":
		if x == 0 && y == 0 {
			return 1.0 // LibreOffice and most languages; Excel says #NUM!
		}
		if x == 0 && y < 0 {
			return ErrDiv0
		}
		return fixNum(math.Pow(x, y))
	}
	return ErrValue
}

// typeRank orders values of different types as Excel does: numbers < text <
// logicals.
func typeRank(v Value) int {
	switch v.(type) {
	case float64:
		return 0
	case string:
		return 1
	case bool:
		return 2
	}
	return 3
}

// compare orders two non-error values: an empty side takes the other's
// type's zero (0, "" or FALSE); text compares case-insensitively.
func compare(a, b Value) int {
	if a == nil && b == nil {
		return 0
	}
	if a == nil {
		a = zeroOf(b)
	}
	if b == nil {
		b = zeroOf(a)
	}
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		return cmpInt(ra, rb)
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(foldText(x), foldText(b.(string)))
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	}
	return 0
}

func foldText(s string) string { return strings.ToLower(s) }

func zeroOf(v Value) Value {
	switch v.(type) {
	case string:
		return ""
	case bool:
		return false
	}
	return 0.0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
