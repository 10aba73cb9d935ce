package service

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"foundry/internal/formula"
)

// xlsxSheet is what xlsxFormulas reads of one worksheet, by cell name
// ("C3"): each formula as the file spells it, without the leading "=",
// and each cell's type (its t attribute) where it is not a number.
type xlsxSheet struct {
	formulas map[string]string
	types    map[string]string
}

// cellType is the cell's type as excelize names it.
func (x xlsxSheet) cellType(ref string) excelize.CellType {
	switch x.types[ref] {
	case "b":
		return excelize.CellTypeBool
	case "s":
		return excelize.CellTypeSharedString
	case "inlineStr":
		return excelize.CellTypeInlineString
	case "str":
		return excelize.CellTypeFormula
	case "e":
		return excelize.CellTypeError
	case "d":
		return excelize.CellTypeDate
	}
	return excelize.CellTypeUnset
}

// xlsxFormulas reads every formula of a workbook as its file spells it,
// and the cells' types, by sheet name (see xlsxSheet). Asking excelize
// for each cell's type costs a lookup a cell, a sixth of a large import.
//
// excelize's GetCellFormula renders a shared formula (the way Excel stores
// a formula filled down: the text on the first cell, only an index on the
// others) through the efp tokenizer, which drops the quotes around a sheet
// name ('Rates 2026'!B1 comes back as Rates 2026!B1) and does not move a
// reference that names its sheet. Here the first cell's text is kept as
// written and each other cell's is formula.Shift of it, which moves every
// relative reference, sheet-qualified or not, as Excel does.
//
// The second answer is false when the workbook's parts can't be followed
// (an unusual package layout); a sheet missing from the answer is one
// whose part was not found. The caller asks excelize for those. Reading is
// bounded by limit bytes in all.
func xlsxFormulas(data []byte, limit int64) (map[string]xlsxSheet, bool) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, false
	}
	parts := map[string]*zip.File{}
	for _, f := range zr.File {
		parts[strings.TrimPrefix(f.Name, "/")] = f
	}
	budget := limit
	read := func(name string) []byte {
		f := parts[strings.TrimPrefix(name, "/")]
		if f == nil || budget <= 0 {
			return nil
		}
		rc, err := f.Open()
		if err != nil {
			return nil
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, budget+1))
		if err != nil || int64(len(b)) > budget {
			budget = 0
			return nil
		}
		budget -= int64(len(b))
		return b
	}
	type rel struct {
		ID     string `xml:"Id,attr"`
		Type   string `xml:"Type,attr"`
		Target string `xml:"Target,attr"`
	}
	var rels struct {
		Rel []rel `xml:"Relationship"`
	}
	// The workbook part, from the package's relationships.
	book := "xl/workbook.xml"
	if b := read("_rels/.rels"); b != nil && xml.Unmarshal(b, &rels) == nil {
		for _, r := range rels.Rel {
			if strings.HasSuffix(r.Type, "/officeDocument") {
				book = strings.TrimPrefix(path.Clean("/"+r.Target), "/")
			}
		}
	}
	var wb struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	b := read(book)
	if b == nil || xml.Unmarshal(b, &wb) != nil {
		return nil, false
	}
	rels.Rel = nil
	dir := path.Dir(book)
	b = read(path.Join(dir, "_rels", path.Base(book)+".rels"))
	if b == nil || xml.Unmarshal(b, &rels) != nil {
		return nil, false
	}
	targets := map[string]string{}
	for _, r := range rels.Rel {
		t := r.Target
		if strings.HasPrefix(t, "/") {
			t = path.Clean(t)[1:]
		} else {
			t = path.Join(dir, t)
		}
		targets[r.ID] = t
	}
	out := map[string]xlsxSheet{}
	for _, s := range wb.Sheets {
		b := read(targets[s.RID])
		if b == nil {
			if budget <= 0 {
				return nil, false
			}
			continue // a chart sheet, or a sheet without a part: no formulas
		}
		cells, ok := sheetFormulas(b)
		if !ok {
			return nil, false
		}
		out[s.Name] = cells
	}
	return out, true
}

// sheetFormulas reads the <f> elements of a worksheet part, and its
// cells' types.
func sheetFormulas(part []byte) (xlsxSheet, bool) {
	type master struct {
		r, c int
		src  string
	}
	out := map[string]string{}
	types := map[string]string{}
	shared := map[string]master{}
	d := xml.NewDecoder(bytes.NewReader(part))
	row, col := -1, -1 // 0-based; the cell being read
	attr := func(e xml.StartElement, name string) (string, bool) {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value, true
			}
		}
		return "", false
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return xlsxSheet{out, types}, true
		}
		if err != nil {
			return xlsxSheet{}, false
		}
		e, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch e.Name.Local {
		case "row":
			if v, ok := attr(e, "r"); ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return xlsxSheet{}, false
				}
				row = n - 1
			} else {
				row++
			}
			col = -1
		case "c":
			if v, ok := attr(e, "r"); ok {
				r, c, ok := formula.ParseCell(v)
				if !ok {
					return xlsxSheet{}, false
				}
				row, col = r, c
			} else {
				col++
			}
			if t, _ := attr(e, "t"); t != "" && t != "n" {
				types[formula.CellName(row, col)] = t
			}
		case "f":
			var text string
			if err := d.DecodeElement(&text, &e); err != nil {
				return xlsxSheet{}, false
			}
			t, _ := attr(e, "t")
			si, hasSI := attr(e, "si")
			cell := formula.CellName(row, col)
			switch {
			case t == "shared" && hasSI && strings.TrimSpace(text) != "":
				shared[si] = master{row, col, text}
				out[cell] = text
			case t == "shared" && hasSI:
				m, ok := shared[si]
				if !ok {
					return xlsxSheet{}, false // an index before its formula
				}
				out[cell] = strings.TrimPrefix(formula.Shift("="+m.src, row-m.r, col-m.c), "=")
			case text != "":
				out[cell] = text
			}
		}
	}
}
