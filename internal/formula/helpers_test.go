package formula

import (
	"math"
	"strings"
	"testing"
	"time"
)

// mapCtx is a Context over maps of A1-named cells, one map per sheet; the
// sheet "" is "Sheet1".
type mapCtx struct {
	sheets map[string]map[string]Value
	now    time.Time
}

func (c *mapCtx) sheet(name string) (map[string]Value, bool) {
	if name == "" {
		name = "Sheet1"
	}
	for n, s := range c.sheets {
		if strings.EqualFold(n, name) {
			return s, true
		}
	}
	return nil, false
}

func (c *mapCtx) Cell(sheet string, row, col int) (Value, bool) {
	s, ok := c.sheet(sheet)
	if !ok {
		return nil, false
	}
	return s[CellName(row, col)], true
}

func (c *mapCtx) Size(sheet string) (int, int, bool) {
	s, ok := c.sheet(sheet)
	if !ok {
		return 0, 0, false
	}
	rows, cols := 0, 0
	for name := range s {
		r, cl, ok := ParseCell(name)
		if ok {
			rows, cols = max(rows, r+1), max(cols, cl+1)
		}
	}
	return rows, cols, true
}

func (c *mapCtx) Now() time.Time { return c.now }

func newCtx() *mapCtx {
	return &mapCtx{
		now: time.Date(2024, 3, 15, 13, 30, 0, 0, time.UTC),
		sheets: map[string]map[string]Value{
			"Sheet1": {
				"A1": 1.0, "A2": 2.0, "A3": 3.0, "A4": 4.0, "A5": 5.0,
				"B1": "apple", "B2": "Banana", "B3": "cherry", "B4": "3", "B5": true,
				"C1": 10.0, "C2": 20.0, "C3": 30.0, "C4": 40.0, "C5": 50.0,
				"D1": ErrDiv0, "D2": "", "E1": 45306.0,
			},
			"Data 2": {"A1": 100.0, "A2": 200.0, "B1": "x", "B2": "y"},
		},
	}
}

// evalStr parses and evaluates src at B10 of Sheet1.
func evalStr(t *testing.T, ctx Context, src string) Value {
	t.Helper()
	f, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return f.Eval(ctx, 9, 1)
}

func sameValue(a, b Value) bool {
	x, ok1 := a.(float64)
	y, ok2 := b.(float64)
	if ok1 && ok2 {
		if x == y {
			return true
		}
		return math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y))
	}
	return a == b
}

type evalCase struct {
	src  string
	want Value
}

func checkEval(t *testing.T, cases []evalCase) {
	t.Helper()
	ctx := newCtx()
	for _, c := range cases {
		got := evalStr(t, ctx, c.src)
		if !sameValue(got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.src, got, c.want)
		}
	}
}
