package note

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"foundry/internal/formula"
	"foundry/internal/problem"
)

// calcNote is a Note with one sheet tab, written as the service writes:
// each edit on a copy, recomputed, diffed and stored by parts.
type calcNote struct {
	t   *testing.T
	d   Doc
	tab string
	ps  *partStore
	now time.Time
}

func newCalcNote(t *testing.T) *calcNote {
	t.Helper()
	d := New("Budget")
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	tab, err := CreateTab(&d, TypeSheet, "", nil, now)
	if err != nil {
		t.Fatal(err)
	}
	n := &calcNote{t: t, tab: tab.ID, now: now, ps: &partStore{live: map[string][]byte{}, hist: map[string][]histEntry{}, heads: map[int][]byte{}}}
	if err := Recalc(&Doc{}, &d, now); err != nil {
		t.Fatal(err)
	}
	w, err := Diff(&Doc{}, &d)
	if err != nil {
		t.Fatal(err)
	}
	n.ps.apply(t, w)
	n.d = d
	return n
}

// edit applies fn to the next version and stores it; the error is fn's or
// Recalc's.
func (n *calcNote) edit(fn func(d *Doc) error) error {
	n.t.Helper()
	next := Clone(&n.d)
	if err := fn(&next); err != nil {
		return err
	}
	if err := Recalc(&n.d, &next, n.now); err != nil {
		return err
	}
	w, err := Diff(&n.d, &next)
	if err != nil {
		n.t.Fatal(err)
	}
	n.ps.apply(n.t, w)
	n.d = next
	return nil
}

func (n *calcNote) set(sheet string, r, c int, vals ...[]any) {
	n.t.Helper()
	if err := n.edit(func(d *Doc) error {
		_, err := SheetSetRange(d, n.tab, sheet, r, c, vals)
		return err
	}); err != nil {
		n.t.Fatal(err)
	}
}

// value is what a read of cell name shows, from the version in memory and
// from the one read back from the stored parts, which must agree.
func (n *calcNote) value(sheet, name string) any {
	n.t.Helper()
	r, c, ok := formula.ParseCell(name)
	if !ok {
		n.t.Fatalf("bad cell %s", name)
	}
	got, err := ReadRange(&n.d, n.tab, sheet, r, c, 1, 1)
	if err != nil {
		n.t.Fatal(err)
	}
	back := n.ps.at(n.t, n.ps.version)
	stored, err := ReadRange(&back, n.tab, sheet, r, c, 1, 1)
	if err != nil {
		n.t.Fatal(err)
	}
	if !reflect.DeepEqual(got, stored) {
		n.t.Fatalf("%s: %#v in memory, %#v read back from the parts", name, got[0][0], stored[0][0])
	}
	return got[0][0]
}

func (n *calcNote) want(sheet, name string, want any) {
	n.t.Helper()
	if got := n.value(sheet, name); !reflect.DeepEqual(got, want) {
		n.t.Fatalf("%s = %#v, want %#v", name, got, want)
	}
}

func TestFormulasComputeAndReadBack(t *testing.T) {
	n := newCalcNote(t)
	n.set("", 0, 0, []any{"Item", "Cost"}, []any{"Rent", 1200.0}, []any{"Food", 300.5}, []any{"Total", "=SUM(B2:B3)"})
	n.want("", "B4", 1500.5)
	cells, err := ReadCells(&n.d, n.tab, "", 0, 0, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []FormulaCell{{Row: 3, Col: 1, Cell: "B4", Formula: "=SUM(B2:B3)"}}; !reflect.DeepEqual(cells.Formulas, want) {
		t.Fatalf("formulas %+v, want %+v", cells.Formulas, want)
	}
	// A change of an input recomputes the total; so does a chain.
	n.set("", 1, 1, []any{1000.0})
	n.want("", "B4", 1300.5)
	n.set("", 4, 1, []any{"=B4*2"}, []any{"=B5+1"})
	n.want("", "B6", 2602.0)
	n.set("", 2, 1, []any{0.0})
	n.want("", "B5", 2000.0)
	n.want("", "B6", 2001.0)
	// A formula overwritten by a value keeps no value beside it.
	n.set("", 3, 1, []any{7.0})
	n.want("", "B4", 7.0)
	n.want("", "B6", 15.0)
	if v := ValueAt(&n.d.Tabs[3].Sheets[0], 3, 1); v != nil {
		t.Fatalf("B4 holds a value again but keeps computed %#v", v)
	}
}

func TestFormulaErrorsAndCycles(t *testing.T) {
	n := newCalcNote(t)
	n.set("", 0, 0, []any{1.0, 0.0, "=A1/B1", "=C1+1", "=IFERROR(C1, -1)"})
	n.want("", "C1", formula.ErrDiv0)
	n.want("", "D1", formula.ErrDiv0)
	n.want("", "E1", -1.0)
	// A cycle: every cell on it is #CYCLE!, and what reads it too.
	n.set("", 1, 0, []any{"=B2+1", "=A2+1", "=B2*10"})
	n.want("", "A2", formula.ErrCycle)
	n.want("", "B2", formula.ErrCycle)
	n.want("", "C2", formula.ErrCycle)
	n.set("", 2, 0, []any{"=A3"})
	n.want("", "A3", formula.ErrCycle)
	// Breaking it computes them again.
	n.set("", 1, 0, []any{5.0})
	n.want("", "B2", 6.0)
	n.want("", "C2", 60.0)
	// An unknown function is #NAME?; a missing sheet #REF!.
	n.set("", 3, 0, []any{"=NOSUCH(1)", "='No Sheet'!A1"})
	n.want("", "A4", formula.ErrName)
	n.want("", "B4", formula.ErrRef)
	// A formula that does not parse is refused with the cell named.
	err := n.edit(func(d *Doc) error {
		_, err := SheetSetRange(d, n.tab, "", 5, 0, [][]any{{1.0, "=SUM(A1:"}})
		return err
	})
	var p *problem.Problem
	if !errors.As(err, &p) || p.Field != "values[0][1]" {
		t.Fatalf("unparsable formula: %v, want a problem naming values[0][1]", err)
	}
}

func TestFormulasAcrossSheets(t *testing.T) {
	n := newCalcNote(t)
	var second string
	if err := n.edit(func(d *Doc) error {
		sh, err := AddSheet(d, n.tab, "Sheet 2")
		second = sh.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	n.set(second, 0, 0, []any{2.0, 3.0}, []any{4.0, 5.0})
	n.set("", 0, 0, []any{"=SUM('Sheet 2'!A1:B2)", "='sheet 2'!B2*2", "=SUM('Sheet 2'!A:A)"})
	n.want("", "A1", 14.0)
	n.want("", "B1", 10.0)
	n.want("", "C1", 6.0)
	// A change on the other sheet recomputes what reads it.
	n.set(second, 1, 0, []any{40.0})
	n.want("", "A1", 50.0)
	n.want("", "C1", 42.0)
	// Renaming the sheet: the references by its old name no longer find it.
	if err := n.edit(func(d *Doc) error { return RenameSheet(d, n.tab, second, "Costs") }); err != nil {
		t.Fatal(err)
	}
	n.want("", "A1", formula.ErrRef)
}

// The graph a write hands to the next version gives the values a graph
// built from scratch gives, whatever the order of the writes.
func TestRecalcGraphMatchesFromScratch(t *testing.T) {
	n := newCalcNote(t)
	for i := range 60 {
		r, c := i%7, (i*3)%5
		var v any = float64(i)
		switch i % 4 {
		case 1:
			v = fmt.Sprintf("=%s+1", formula.CellName((i+1)%7, (i+2)%5))
		case 2:
			v = fmt.Sprintf("=SUM(A1:%s)", formula.CellName(r, 4))
		case 3:
			v = fmt.Sprintf("=IF(%s>3, %s, 0)", formula.CellName((i+3)%7, 0), formula.CellName((i+5)%7, 1))
		}
		n.set("", r, c, []any{v})
		// From scratch: the stored version, with no graph and no values.
		back := n.ps.at(t, n.ps.version)
		fresh := Clone(&back)
		for j := range fresh.Tabs[3].Sheets {
			fresh.Tabs[3].Sheets[j].Values = nil
		}
		if err := Recalc(&Doc{}, &fresh, n.now); err != nil {
			t.Fatal(err)
		}
		for rr := range 7 {
			for cc := range 5 {
				a, _ := ReadRange(&n.d, n.tab, "", rr, cc, 1, 1)
				b, _ := ReadRange(&fresh, n.tab, "", rr, cc, 1, 1)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("write %d: %s is %#v through the graph, %#v from scratch", i, formula.CellName(rr, cc), a[0][0], b[0][0])
				}
			}
		}
	}
}

func TestRecalcIsBounded(t *testing.T) {
	n := newCalcNote(t)
	defer func(l int) { recalcLimit = l }(recalcLimit)
	recalcLimit = 50
	rows := make([][]any, 60)
	for i := range rows {
		rows[i] = []any{"=$B$1*2"}
	}
	err := n.edit(func(d *Doc) error {
		_, err := SheetSetRange(d, n.tab, "", 0, 0, rows)
		return err
	})
	var p *problem.Problem
	if !errors.As(err, &p) || p.Code != problem.Limit {
		t.Fatalf("60 formulas with a limit of 50: %v, want a limit problem", err)
	}
	n.set("", 0, 0, rows[:40]...)
	n.set("", 0, 1, []any{3.0})
	n.want("", "A40", 6.0)
}
