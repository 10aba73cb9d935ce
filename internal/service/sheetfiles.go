package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"foundry/internal/formula"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/slidepdf"
	"foundry/internal/store"
)

// Spreadsheet files in and out of sheet tabs: an .xlsx or .csv becomes a
// new sheet tab (values, formulas, sheets), and a tab goes out as .xlsx,
// .csv or .md. excelize reads and writes .xlsx: it is the maintained Go
// library for the format, and the formula tokenizer the engine uses is
// its own.

// MaxImportBytes is the largest spreadsheet file an import reads.
const MaxImportBytes = MaxFileBytes

// maxImportUnzipped bounds what an .xlsx may unpack to (a zip bomb is
// refused, not unpacked).
const maxImportUnzipped = 512 << 20

// ImportSheetArgs make a spreadsheet file a new sheet tab.
type ImportSheetArgs struct {
	NoteID string
	Name   string // the file's name: its extension says its format, its base the tab's label
	Data   []byte
	Guard
}

// SheetImported is what an import answers.
type SheetImported struct {
	NoteWritten
	TabID    string   `json:"tab_id"`
	Label    string   `json:"label"`
	Sheets   []string `json:"sheets" description:"the sheets made, by name"`
	Cells    int      `json:"cells" description:"cells that hold something"`
	Formulas int      `json:"formulas" description:"formulas kept as formulas"`
	// AsValues lists (at most 20) cells whose formula Foundry can't
	// compute: the value the file had for them was kept instead.
	AsValues      []string `json:"as_values,omitempty"`
	AsValuesCount int      `json:"as_values_count,omitempty"`
}

// ImportSheet reads an .xlsx or .csv file into a new sheet tab.
func (s *Service) ImportSheet(ctx context.Context, c Caller, a ImportSheetArgs) (SheetImported, error) {
	ext := strings.ToLower(path.Ext(a.Name))
	label := strings.TrimSpace(strings.TrimSuffix(path.Base(strings.ReplaceAll(a.Name, `\`, "/")), path.Ext(a.Name)))
	if label == "" || label == "." {
		label = "Imported"
	}
	if utf8.RuneCountInString(label) > note.MaxLabelRunes {
		label = string([]rune(label)[:note.MaxLabelRunes])
	}
	if len(a.Data) > MaxImportBytes {
		return SheetImported{}, problem.New(problem.Limit, "body", "the file is %d bytes; an import reads at most %d bytes (25 MiB)", len(a.Data), MaxImportBytes)
	}
	var im sheetImport
	var err error
	switch ext {
	case ".xlsx":
		err = im.xlsx(a.Data)
	case ".csv":
		err = im.csv(label, a.Data)
	default:
		return SheetImported{}, problem.New(problem.Invalid, "name", "%s is not a spreadsheet Foundry imports; give an .xlsx or .csv file (its name says which)", note.Quote(a.Name))
	}
	if err != nil {
		return SheetImported{}, err
	}
	sum := sha256.Sum256(a.Data)
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "tab_created", sizeField: "body", meaning: struct{ Op, Name, Sum string }{"import_sheet", a.Name, hex.EncodeToString(sum[:])}},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (SheetImported, []string, error) {
			t, err := note.CreateTab(d, note.TypeSheet, label, nil, s.Now())
			if err != nil {
				return SheetImported{}, nil, err
			}
			if err := note.FillSheetTab(d, t.ID, im.sheets); err != nil {
				return SheetImported{}, nil, err
			}
			filled, err := note.FindTab(d, t.ID)
			if err != nil {
				return SheetImported{}, nil, err
			}
			for i, fs := range im.formats {
				for j := range fs {
					if err := note.SetSheetLayout(d, t.ID, filled.Sheets[i].ID, note.SheetLayout{Format: &fs[j]}); err != nil {
						return SheetImported{}, nil, err
					}
				}
			}
			res := SheetImported{TabID: t.ID, Label: t.Label, Cells: im.cells, Formulas: im.formulas, AsValues: im.asValues, AsValuesCount: im.asValuesN}
			for _, sh := range im.sheets {
				res.Sheets = append(res.Sheets, sh.Name)
			}
			return res, []string{t.ID}, nil
		})
}

// sheetImport is a file read into sheets.
type sheetImport struct {
	sheets    []note.SheetInput
	formats   [][]note.CellFormat // by sheet: the file's number formats Foundry has
	cells     int
	formulas  int
	asValues  []string
	asValuesN int
}

// value is a text cell of a file as a sheet stores it: a number, a
// boolean, empty, or the text.
func importValue(s string) any {
	if s == "" {
		return nil
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !strings.ContainsAny(s, "xXpPnNiI_") {
		return f
	}
	switch strings.ToUpper(s) {
	case "TRUE":
		return true
	case "FALSE":
		return false
	}
	return s
}

func (im *sheetImport) grow(cells int) error {
	im.cells += cells
	if im.cells > note.MaxSheetCells {
		return problem.New(problem.Limit, "body", "the file holds more than %d cells; a sheet tab holds at most %d (e.g. 1000 × 1000)", note.MaxSheetCells, note.MaxSheetCells)
	}
	return nil
}

// cell is one cell read from a file, refused with the sheet and cell named
// when a sheet can't hold it.
func (im *sheetImport) cell(sheet string, r, c int, v any) (any, error) {
	if s, ok := v.(string); ok {
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
			v = s
		}
		if len(s) > note.MaxCellBytes {
			return nil, problem.New(problem.Limit, "body", "cell %s of sheet %s holds %d bytes; a cell holds at most %d bytes (32 KiB)", formula.CellName(r, c), note.Quote(sheet), len(s), note.MaxCellBytes)
		}
	}
	return v, nil
}

func (im *sheetImport) csv(name string, data []byte) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return problem.New(problem.Invalid, "body", "the .csv file is not UTF-8 text; save it as CSV UTF-8 and import it again")
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	var rows [][]any
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return problem.New(problem.Invalid, "body", "the .csv file can't be read: %v", err)
		}
		if err := im.grow(len(rec)); err != nil {
			return err
		}
		row := make([]any, len(rec))
		for j, f := range rec {
			var v any = importValue(f)
			if note.IsFormula(f) {
				if _, err := formula.Parse(f); err == nil {
					v = f
					im.formulas++
				}
			}
			var err error
			if row[j], err = im.cell(name, len(rows), j, v); err != nil {
				return err
			}
		}
		rows = append(rows, row)
	}
	im.sheets = []note.SheetInput{{Name: sheetName(name, 0), Cells: rows}}
	return nil
}

func (im *sheetImport) xlsx(data []byte) error {
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{UnzipSizeLimit: maxImportUnzipped, UnzipXMLSizeLimit: maxImportUnzipped})
	if err != nil {
		return problem.New(problem.Invalid, "body", "the .xlsx file can't be read: %v; save it again as an Excel workbook (.xlsx) and import it", err)
	}
	defer f.Close()
	// The formulas as the file spells them, and the cells' types (see
	// xlsxFormulas); excelize's reading of them for a sheet whose part
	// that reading did not find, or for every sheet where the package
	// can't be followed.
	written, _ := xlsxFormulas(data, maxImportUnzipped)
	list := f.GetSheetList()
	if len(list) > note.MaxSheetsPerTab {
		return problem.New(problem.Limit, "body", "the workbook has %d sheets; a sheet tab holds at most %d", len(list), note.MaxSheetsPerTab)
	}
	for i, name := range list {
		rows, err := f.GetRows(name, excelize.Options{RawCellValue: true})
		if err != nil {
			return problem.New(problem.Invalid, "body", "sheet %s of the .xlsx file can't be read: %v", note.Quote(name), err)
		}
		ws, own := written[name]
		cells := make([][]any, len(rows))
		for r, rec := range rows {
			if err := im.grow(len(rec)); err != nil {
				return err
			}
			cells[r] = make([]any, len(rec))
			for c, raw := range rec {
				ref := formula.CellName(r, c)
				var v any
				var src string
				var typ excelize.CellType
				if own {
					src, typ = ws.formulas[ref], ws.cellType(ref)
				} else {
					src, _ = f.GetCellFormula(name, ref)
					typ, _ = f.GetCellType(name, ref)
				}
				switch typ {
				case excelize.CellTypeBool:
					v = raw == "1" || strings.EqualFold(raw, "TRUE")
				case excelize.CellTypeSharedString, excelize.CellTypeInlineString, excelize.CellTypeFormula, excelize.CellTypeError:
					if raw != "" {
						v = raw
					}
				default:
					v = importValue(raw)
				}
				if src != "" {
					text := "=" + xlfn(src, false)
					if _, err := formula.Parse(text); err == nil {
						v = text
						im.formulas++
					} else {
						im.asValuesN++
						if len(im.asValues) < 20 {
							im.asValues = append(im.asValues, name+"!"+ref)
						}
					}
				}
				if cells[r][c], err = im.cell(name, r, c, v); err != nil {
					return err
				}
			}
		}
		im.sheets = append(im.sheets, note.SheetInput{Name: sheetName(name, i), Cells: cells})
		im.formats = append(im.formats, xlsxFormats(f, name, cells))
	}
	if len(im.sheets) == 0 {
		return problem.New(problem.Invalid, "body", "the .xlsx file has no sheets")
	}
	return nil
}

// sheetName is name as a sheet's name: trimmed, within the limit, or
// "Sheet<i+1>" when nothing is left.
func sheetName(name string, i int) string {
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > note.MaxSheetNameRunes {
		name = string([]rune(name)[:note.MaxSheetNameRunes])
	}
	if name == "" {
		name = fmt.Sprintf("Sheet%d", i+1)
	}
	return name
}

// Export formats of one tab.
const (
	ExportXLSX = "xlsx"
	ExportCSV  = "csv"
	ExportMD   = "md"
	ExportPDF  = "pdf"
)

// TabExport is one tab as a file.
type TabExport struct {
	Name        string // the file's name
	ContentType string
	Data        []byte
	// MissingGlyphs counts the characters a PDF's fonts lack, drawn as
	// boxes (see internal/slidepdf).
	MissingGlyphs int
}

// ExportTab writes one tab as a file: a sheet tab as .xlsx (every sheet,
// formulas with their values) or .csv (one sheet's values), the markdown
// tab as .md, a slides tab as .pdf (one page a slide, drawn by
// internal/slidepdf).
func (s *Service) ExportTab(ctx context.Context, c Caller, noteID, tabID, format, sheetID string) (TabExport, error) {
	for _, f := range [][2]string{{"tab_id", tabID}, {"sheet_id", sheetID}} {
		if err := CheckID(f[0], f[1]); err != nil {
			return TabExport{}, err
		}
	}
	r, d, err := s.noteFor(ctx, c, noteID)
	if err != nil {
		return TabExport{}, err
	}
	t, err := note.FindTab(d, tabID)
	if err != nil {
		return TabExport{}, err
	}
	base := safeFileName(slug(r.Title, "note"))
	if t.Type != note.TypeMarkdown {
		base += "-" + safeFileName(slug(t.Label, t.ID))
	}
	wrong := func(fits string) error {
		return problem.New(problem.Invalid, "format", "a %s tab is exported as %s; format %s is not one of them", t.Type, fits, note.Quote(format)).With("tab_type", t.Type)
	}
	switch t.Type {
	case note.TypeMarkdown:
		if format != ExportMD {
			return TabExport{}, wrong("md")
		}
		return TabExport{Name: base + ".md", ContentType: "text/markdown; charset=utf-8", Data: []byte(d.Markdown)}, nil
	case note.TypeSlides:
		if format != ExportPDF {
			return TabExport{}, wrong("pdf")
		}
		title := r.Title
		if l := strings.TrimSpace(t.Label); l != "" {
			title += " · " + l
		}
		out, err := slidepdf.Render(title, t.Slides, r.UpdatedAt)
		if err != nil {
			return TabExport{}, fmt.Errorf("tab %s as PDF: %w", t.ID, err)
		}
		return TabExport{Name: base + ".pdf", ContentType: "application/pdf", Data: out.PDF, MissingGlyphs: out.Missing}, nil
	case note.TypeSheet:
	default:
		return TabExport{}, problem.New(problem.Invalid, "tab_id", "tab %s is a %s tab, which has no file export", note.Quote(t.ID), t.Type).With("tab_type", t.Type)
	}
	switch format {
	case ExportCSV:
		sh := &t.Sheets[0]
		if sheetID != "" {
			found := false
			for i := range t.Sheets {
				if t.Sheets[i].ID == sheetID {
					sh, found = &t.Sheets[i], true
				}
			}
			if !found {
				return TabExport{}, notFoundSheet(t.ID, sheetID)
			}
		}
		var buf bytes.Buffer
		cw := csv.NewWriter(&buf)
		for r, row := range sh.Cells {
			rec := make([]string, len(row))
			for j, v := range row {
				if note.IsFormula(v) {
					v = note.ValueAt(sh, r, j)
					if e, ok := v.(formula.Error); ok {
						v = string(e)
					}
				}
				rec[j] = csvCell(v)
			}
			if err := cw.Write(rec); err != nil {
				return TabExport{}, err
			}
		}
		cw.Flush()
		name := base
		if len(t.Sheets) > 1 {
			name += "-" + safeFileName(slug(sh.Name, "sheet"))
		}
		return TabExport{Name: name + ".csv", ContentType: "text/csv; charset=utf-8", Data: buf.Bytes()}, cw.Error()
	case ExportXLSX:
		data, err := sheetsXLSX(t.Sheets)
		if err != nil {
			return TabExport{}, err
		}
		return TabExport{Name: base + ".xlsx", ContentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", Data: data}, nil
	}
	return TabExport{}, wrong("xlsx or csv")
}

func notFoundSheet(tabID, sheetID string) error {
	return problem.New(problem.NotFound, "sheet_id", "tab %s has no sheet %s; reading the tab names its sheets", note.Quote(tabID), note.Quote(sheetID))
}

// sheetsXLSX is a workbook of sheets: values as values, formulas as
// formulas with their computed values cached, as Excel writes them.
func sheetsXLSX(sheets []note.Sheet) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	used := map[string]bool{}
	for i := range sheets {
		sh := &sheets[i]
		name := xlsxSheetName(sh.Name, i, used)
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				return nil, err
			}
		} else if _, err := f.NewSheet(name); err != nil {
			return nil, err
		}
		sw, err := f.NewStreamWriter(name)
		if err != nil {
			return nil, err
		}
		for r, row := range sh.Cells {
			out := make([]any, len(row))
			for j, v := range row {
				if note.IsFormula(v) {
					val := note.ValueAt(sh, r, j)
					if e, ok := val.(formula.Error); ok {
						val = string(e)
					}
					out[j] = excelize.Cell{Formula: xlfn(strings.TrimPrefix(v.(string), "="), true), Value: val}
				} else {
					out[j] = v
				}
			}
			if len(out) == 0 {
				continue
			}
			if err := sw.SetRow(formula.CellName(r, 0), out); err != nil {
				return nil, err
			}
		}
		if err := sw.Flush(); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// xlsxSheetName is name within Excel's rules for a sheet's name: at most
// 31 characters, none of : \ / ? * [ ], unique in the workbook.
func xlsxSheetName(name string, i int, used map[string]bool) string {
	name = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`:\/?*[]`, r) {
			return '_'
		}
		return r
	}, name)
	name = strings.Trim(name, "'")
	if rs := []rune(name); len(rs) > 31 {
		name = string(rs[:31])
	}
	if name == "" {
		name = fmt.Sprintf("Sheet%d", i+1)
	}
	for n := 2; used[strings.ToLower(name)]; n++ {
		suffix := fmt.Sprintf(" (%d)", n)
		rs := []rune(name)
		name = string(rs[:min(len(rs), 31-len(suffix))]) + suffix
	}
	used[strings.ToLower(name)] = true
	return name
}

// xlsxFormats are the number formats of a sheet's numbers that Foundry
// shows (dates, percents, currency), as runs down each column; at most
// note.MaxSheetFormats of them.
func xlsxFormats(f *excelize.File, sheet string, cells [][]any) []note.CellFormat {
	byStyle := map[int]string{}
	kind := func(style int) string {
		if k, ok := byStyle[style]; ok {
			return k
		}
		k := ""
		if st, err := f.GetStyle(style); err == nil {
			k = numberFormat(st.NumFmt, st.CustomNumFmt)
		}
		byStyle[style] = k
		return k
	}
	// Most workbooks have few styles: when none is one Foundry shows, the
	// cells are not looked at.
	shown := false
	for i := 1; i < 4096 && !shown; i++ {
		if _, err := f.GetStyle(i); err != nil {
			break
		}
		shown = kind(i) != ""
	}
	if !shown {
		return nil
	}
	type run struct {
		r0, r1 int
		k      string
	}
	var out []note.CellFormat
	width := 0
	for _, row := range cells {
		width = max(width, len(row))
	}
	for c := 0; c < width && len(out) < note.MaxSheetFormats; c++ {
		var cur *run
		flush := func() {
			if cur != nil && len(out) < note.MaxSheetFormats {
				out = append(out, note.CellFormat{Range: formula.CellName(cur.r0, c) + ":" + formula.CellName(cur.r1, c), Format: cur.k})
			}
			cur = nil
		}
		for r, row := range cells {
			k := ""
			if c < len(row) {
				if _, isNum := row[c].(float64); isNum || note.IsFormula(row[c]) {
					if style, err := f.GetCellStyle(sheet, formula.CellName(r, c)); err == nil && style > 0 {
						k = kind(style)
					}
				}
			}
			switch {
			case k == "":
				flush()
			case cur != nil && cur.k == k && cur.r1 == r-1:
				cur.r1 = r
			default:
				flush()
				cur = &run{r, r, k}
			}
		}
		flush()
	}
	return out
}

// numberFormat is the format Foundry shows for an Excel number format:
// date, percent or currency ("" for the others).
func numberFormat(id int, custom *string) string {
	switch {
	case id >= 14 && id <= 22, id >= 45 && id <= 47:
		return "date"
	case id == 9 || id == 10:
		return "percent"
	case id >= 5 && id <= 8:
		return "currency"
	}
	if custom == nil {
		return ""
	}
	code := strings.ToLower(*custom)
	switch {
	case strings.ContainsAny(code, "$€£¥"):
		return "currency"
	case strings.Contains(code, "%"):
		return "percent"
	case strings.Contains(code, "yy") || strings.Contains(code, "mm") && strings.Contains(code, "d"):
		return "date"
	}
	return ""
}

// newerFunctions are the functions Excel writes with the _xlfn. prefix in
// a file (those added after Excel 2007 that Foundry has).
var newerFunctions = map[string]bool{
	"CONCAT": true, "DAYS": true, "IFNA": true, "IFS": true, "RANK.EQ": true, "STDEV.P": true, "STDEV.S": true,
	"SWITCH": true, "TEXTJOIN": true, "VAR.P": true, "VAR.S": true, "XLOOKUP": true, "XOR": true,
}

// xlfn rewrites the function names of formula src outside its strings:
// add puts Excel's _xlfn. prefix on the newer functions (as a file holds
// them); otherwise the prefixes _xlfn. and _xlws. are taken away (as
// Foundry reads them).
func xlfn(src string, add bool) string {
	var b strings.Builder
	inString := false
	for i := 0; i < len(src); {
		c := src[i]
		if c == '"' {
			inString = !inString
			b.WriteByte(c)
			i++
			continue
		}
		if inString || !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') || i > 0 && isNameByte(src[i-1]) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(src) && isNameByte(src[j]) {
			j++
		}
		name := src[i:j]
		if j < len(src) && src[j] == '(' {
			upper := strings.ToUpper(name)
			switch {
			case add && newerFunctions[upper]:
				name = "_xlfn." + name
			case !add:
				for _, p := range []string{"_XLFN.", "_XLWS."} {
					if strings.HasPrefix(upper, p) {
						name = name[len(p):]
					}
				}
			}
		}
		b.WriteString(name)
		i = j
	}
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
