package service_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"testing"

	"foundry/internal/service"
)

// excelBook is a workbook as Excel writes it, part for part: shared
// strings, a style table whose numFmtId 14 is a date, a formula filled
// down (a shared formula: the first cell holds the text, the others only
// its index), an _xlfn. function, an error cell, a boolean, a calcChain
// and a second sheet read by the first. (Excel's own parts, reduced to
// what matters; the element and attribute names are Excel's.)
func excelBook(t *testing.T) []byte {
	t.Helper()
	parts := [][2]string{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/><Override PartName="/xl/calcChain.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.calcChain+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{"xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x15 xr xr6 xr10 xr2" xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main" xmlns:xr="http://schemas.microsoft.com/office/spreadsheetml/2014/revision" xmlns:xr6="http://schemas.microsoft.com/office/spreadsheetml/2016/revision6" xmlns:xr10="http://schemas.microsoft.com/office/spreadsheetml/2016/revision10" xmlns:xr2="http://schemas.microsoft.com/office/spreadsheetml/2015/revision2"><fileVersion appName="xl" lastEdited="7" lowestEdited="7" rupBuild="27328"/><workbookPr defaultThemeVersion="202300"/><bookViews><workbookView xWindow="-120" yWindow="-120" windowWidth="29040" windowHeight="15720"/></bookViews><sheets><sheet name="Budget" sheetId="1" r:id="rId1"/><sheet name="Rates 2026" sheetId="2" r:id="rId2"/></sheets><calcPr calcId="191029"/></workbook>`},
		{"xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet2.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId4" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rId5" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/calcChain" Target="calcChain.xml"/></Relationships>`},
		{"xl/sharedStrings.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="9" uniqueCount="9"><si><t>Item</t></si><si><t>Cost</t></si><si><t>With tax</t></si><si><t>Rent</t></si><si><t>Food</t></si><si><t>Travel</t></si><si><t>Total</t></si><si><t>Paid on</t></si><si><t xml:space="preserve">Tax </t></si></sst>`},
		{"xl/styles.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><fonts count="1"><font><sz val="11"/><color theme="1"/><name val="Aptos Narrow"/><family val="2"/><scheme val="minor"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="9" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`},
		{"xl/worksheets/sheet1.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x14ac xr xr2 xr3" xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac" xmlns:xr="http://schemas.microsoft.com/office/spreadsheetml/2014/revision" xmlns:xr2="http://schemas.microsoft.com/office/spreadsheetml/2015/revision2" xmlns:xr3="http://schemas.microsoft.com/office/spreadsheetml/2016/revision3" xr:uid="{00000000-0001-0000-0000-000000000000}"><dimension ref="A1:D7"/><sheetViews><sheetView tabSelected="1" workbookViewId="0"/></sheetViews><sheetFormatPr defaultRowHeight="15" x14ac:dyDescent="0.25"/><sheetData>` +
			`<row r="1" spans="1:4" x14ac:dyDescent="0.25"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>7</v></c></row>` +
			`<row r="2" spans="1:4" x14ac:dyDescent="0.25"><c r="A2" t="s"><v>3</v></c><c r="B2"><v>1200</v></c><c r="C2"><f t="shared" ref="C2:C4" si="0">B2*(1+'Rates 2026'!$B$1)</f><v>1440</v></c><c r="D2" s="1"><v>46023</v></c></row>` +
			`<row r="3" spans="1:4" x14ac:dyDescent="0.25"><c r="A3" t="s"><v>4</v></c><c r="B3"><v>300.5</v></c><c r="C3"><f t="shared" si="0"/><v>360.6</v></c><c r="D3" s="1"><v>46054</v></c></row>` +
			`<row r="4" spans="1:4" x14ac:dyDescent="0.25"><c r="A4" t="s"><v>5</v></c><c r="B4"><v>99.5</v></c><c r="C4"><f t="shared" si="0"/><v>119.4</v></c><c r="D4" t="b"><v>1</v></c></row>` +
			`<row r="5" spans="1:4" x14ac:dyDescent="0.25"><c r="A5" t="s"><v>6</v></c><c r="B5"><f>SUM(B2:B4)</f><v>1600</v></c><c r="C5"><f>SUM(C2:C4)</f><v>1920</v></c></row>` +
			`<row r="6" spans="1:4" x14ac:dyDescent="0.25"><c r="B6"><f>_xlfn.XLOOKUP("Food",A2:A4,B2:B4)</f><v>300.5</v></c><c r="C6" t="e"><f>B6/0</f><v>#DIV/0!</v></c></row>` +
			`</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>`},
		{"xl/worksheets/sheet2.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:B1"/><sheetData><row r="1" spans="1:2"><c r="A1" t="s"><v>8</v></c><c r="B1" s="2"><v>0.2</v></c></row></sheetData></worksheet>`},
		{"xl/calcChain.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<calcChain xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><c r="C2" i="1"/><c r="C3"/><c r="C4"/><c r="B5"/><c r="C5"/><c r="B6"/><c r="C6"/></calcChain>`},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, err := zw.Create(p[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestImportExcelWorkbook: a workbook as Excel writes it imports with its
// sheets, its filled-down (shared) formulas each with its own references,
// the cross-sheet rate, XLOOKUP without its _xlfn. prefix, the error, the
// boolean and the date format; Foundry's values equal Excel's cached ones.
func TestImportExcelWorkbook(t *testing.T) {
	t.Parallel()
	data := excelBook(t)
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		res, err := f.svc.ImportSheet(ctx, f.person, service.ImportSheetArgs{NoteID: f.noteID, Name: "Budget 2026.xlsx", Data: data, Guard: service.Guard{ExpectedVersion: f.version(t)}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Formulas != 7 || res.AsValuesCount != 0 {
			t.Fatalf("import = %+v; want 7 formulas, none kept as values", res)
		}
		tab, err := f.svc.ReadNoteTab(ctx, f.person, service.TabArgs{NoteID: f.noteID, TabID: res.TabID})
		if err != nil {
			t.Fatal(err)
		}
		if len(tab.Sheets) != 2 || tab.Sheets[0].Name != "Budget" || tab.Sheets[1].Name != "Rates 2026" {
			t.Fatalf("sheets %+v", tab.Sheets)
		}
		got, err := f.svc.ReadSheetRange(ctx, f.person, service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: f.noteID, TabID: res.TabID}, Rows: 6, Cols: 4})
		if err != nil {
			t.Fatal(err)
		}
		want := "[[Item Cost With tax Paid on] [Rent 1200 1440 46023] [Food 300.5 360.6 46054] [Travel 99.5 119.4 true] [Total 1600 1920 <nil>] [<nil> 300.5 #DIV/0! <nil>]]"
		if fmt.Sprint(got.Values) != want {
			t.Fatalf("values\n%v\nwant Excel's\n%s", got.Values, want)
		}
		formulas := map[string]string{}
		for _, fc := range got.Formulas {
			formulas[fc.Cell] = fc.Formula
		}
		for cell, src := range map[string]string{
			"C2": "=B2*(1+'Rates 2026'!$B$1)", "C3": "=B3*(1+'Rates 2026'!$B$1)", "C4": "=B4*(1+'Rates 2026'!$B$1)",
			"B5": "=SUM(B2:B4)", "B6": `=XLOOKUP("Food",A2:A4,B2:B4)`, "C6": "=B6/0",
		} {
			if formulas[cell] != src {
				t.Errorf("%s holds %q, want %q", cell, formulas[cell], src)
			}
		}
		if fm := fmt.Sprint(tab.Sheets[0].Formats); fm != "[{D2:D3 date}]" {
			t.Errorf("formats of Budget: %s, want the dates", fm)
		}
	})
}
