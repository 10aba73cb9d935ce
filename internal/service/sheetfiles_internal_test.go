package service

import (
	"fmt"
	"testing"
)

// Excel writes its newer functions with a prefix (_xlfn.XLOOKUP): an
// import takes it away and an export puts it back, outside strings only.
func TestXlfnPrefixes(t *testing.T) {
	for _, c := range []struct{ file, foundry string }{
		{`_xlfn.XLOOKUP(A1,B:B,C:C)+SUM(D1:D3)`, `XLOOKUP(A1,B:B,C:C)+SUM(D1:D3)`},
		{`_xlfn.IFS(A1>1,"_xlfn.IFS(",TRUE,_xlfn.CONCAT("a",B1))`, `IFS(A1>1,"_xlfn.IFS(",TRUE,CONCAT("a",B1))`},
		{`_xlfn.STDEV.S(A1:A9)/'Data 2'!B1`, `STDEV.S(A1:A9)/'Data 2'!B1`},
		{`VLOOKUP(A1,Sheet2!A:B,2,FALSE)`, `VLOOKUP(A1,Sheet2!A:B,2,FALSE)`},
	} {
		if got := xlfn(c.file, false); got != c.foundry {
			t.Errorf("read %q: %q, want %q", c.file, got, c.foundry)
		}
		if got := xlfn(c.foundry, true); got != c.file {
			t.Errorf("write %q: %q, want %q", c.foundry, got, c.file)
		}
	}
	if got := xlfn(`_xlws.SORT(A1:A3)`, false); got != `SORT(A1:A3)` {
		t.Errorf("_xlws.: %q", got)
	}
}

// sheetFormulas reads the formulas of a worksheet part: a shared formula's
// other cells moved from its first, sheet names kept quoted, cells and rows
// without r, and parts it can't follow refused rather than guessed.
func TestSheetFormulas(t *testing.T) {
	const ns = `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`
	sheet, ok := sheetFormulas([]byte(ns + `<row r="2"><c r="A2" t="s"><v>0</v></c><c r="B2"><f t="shared" ref="B2:C3" si="3">A2+'My data'!A2+Other!$A$1+Other!A$1</f></c><c t="e"><f t="shared" si="3"/><v>#VALUE!</v></c></row>` +
		`<row><c r="A3" t="b"><v>1</v></c><c r="B3" t="n"><f t="shared" si="3"/></c><c r="D3"><f>SUM(B2:C3)</f></c><c r="E3" t="str"><f t="array" ref="E3:E4">B2:B3*2</f></c></row></sheetData></worksheet>`))
	got := sheet.formulas
	if types := fmt.Sprint(sheet.types); types != "map[A2:s A3:b C2:e E3:str]" {
		t.Errorf("types %s", types)
	}
	want := map[string]string{
		"B2": `A2+'My data'!A2+Other!$A$1+Other!A$1`,
		"C2": `B2+'My data'!B2+Other!$A$1+Other!B$1`,
		"B3": `A3+'My data'!A3+Other!$A$1+Other!A$1`,
		"D3": `SUM(B2:C3)`,
		"E3": `B2:B3*2`,
	}
	if !ok || len(got) != len(want) {
		t.Fatalf("formulas %v, %v; want %v", got, ok, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	for name, part := range map[string]string{
		"an index before its formula": ns + `<row r="1"><c r="A1"><f t="shared" si="0"/></c></row></sheetData></worksheet>`,
		"a bad cell name":             ns + `<row r="1"><c r="1A"><f>1</f></c></row></sheetData></worksheet>`,
		"a bad row":                   ns + `<row r="-4"><c><f>1</f></c></row></sheetData></worksheet>`,
		"broken XML":                  ns + `<row r="1"><c r="A1"><f>1</c>`,
	} {
		if got, ok := sheetFormulas([]byte(part)); ok {
			t.Errorf("%s: read as %v", name, got)
		}
	}
	// Not a zip, or a zip without a workbook: the caller asks excelize.
	if _, ok := xlsxFormulas([]byte("not a zip"), 1<<20); ok {
		t.Errorf("a file that is no zip was followed")
	}
}
