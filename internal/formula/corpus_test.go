package formula

// The LibreOffice reference corpus, testdata/corpus.json: an input grid
// (sheets "Sheet1" and "Data 2") and a battery of formulas, each with the
// value LibreOffice computed for it. The formula of case i sits in cell
// Z(i+1) of Sheet1 (that is where ROW() and implicit intersection see it).
//
// TestLibreOfficeCorpus (Go only, always runs) evaluates every formula with
// this package and compares it with the stored LibreOffice value: numbers
// within 1e-9 relative, text exactly, logicals and errors by value. A case
// where Foundry deliberately differs says why in "differs" and gives
// Foundry's value in "foundry".
//
// TestLibreOfficeRecompute (needs soffice or libreoffice on PATH) writes the
// grid and the formulas, without cached values, as an .xlsx with excelize,
// has LibreOffice recalculate and save it as .xlsx in a temporary directory
// (with its own profile, set to recalculate OOXML files on load), reads the
// computed values back and checks they equal the stored ones, so the golden
// file cannot drift from LibreOffice. LibreOffice writes errors into .xlsx as
// Excel's codes: its Err:502 (invalid argument) becomes #VALUE!, Err:503
// (#NUM!) #NUM!, Err:504 (parameter list) #VALUE!, Err:508 (parentheses)
// #N/A… so the corpus holds Excel codes only.
//
//	FOUNDRY_TEST_LIBREOFFICE=required  a missing soffice fails the test (CI)
//	                                   instead of skipping it
//	UPDATE_CORPUS=1                    rewrite the stored LibreOffice values
//	                                   from this run (the regeneration path):
//	  UPDATE_CORPUS=1 go test ./internal/formula/ -run TestLibreOfficeRecompute
//
// To add a formula, append a case with "libreoffice": null and regenerate.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

const corpusPath = "testdata/corpus.json"

// corpusFormulaCol is the column (Z) that holds the formulas.
const corpusFormulaCol = 25

type corpus struct {
	About  string                                `json:"about"`
	Sheets map[string]map[string]json.RawMessage `json:"sheets"`
	Cases  []corpusCase                          `json:"cases"`
}

type corpusCase struct {
	Formula     string          `json:"formula"`
	LibreOffice json.RawMessage `json:"libreoffice"`
	Differs     string          `json:"differs,omitempty"`
	Foundry     json.RawMessage `json:"foundry,omitempty"`
}

// A value in the corpus is a JSON number, string or boolean, or
// {"error": "#N/A"}.
func decodeValue(raw json.RawMessage) (Value, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case float64, string, bool:
		return x, nil
	case map[string]any:
		if s, ok := x["error"].(string); ok {
			return Error(s), nil
		}
	}
	return nil, fmt.Errorf("corpus value %s: want a number, string, boolean or {\"error\": ...}", raw)
}

func encodeValue(v Value) json.RawMessage {
	if e, ok := v.(Error); ok {
		b, _ := json.Marshal(map[string]string{"error": string(e)})
		return b
	}
	if f, ok := v.(float64); ok {
		return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64))
	}
	b, _ := json.Marshal(v)
	return b
}

func loadCorpus(t *testing.T) *corpus {
	t.Helper()
	b, err := os.ReadFile(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", corpusPath, err)
	}
	return &c
}

// corpusCtx is the corpus grid as a Context. Sheet "" is Sheet1.
type corpusCtx struct {
	cells map[string]map[[2]int]Value // upper-case sheet name → cells
}

func newCorpusCtx(t *testing.T, c *corpus) *corpusCtx {
	t.Helper()
	ctx := &corpusCtx{cells: map[string]map[[2]int]Value{}}
	for sheet, cells := range c.Sheets {
		m := map[[2]int]Value{}
		for name, raw := range cells {
			r, col, ok := ParseCell(name)
			if !ok {
				t.Fatalf("corpus sheet %q: bad cell name %q", sheet, name)
			}
			v, err := decodeValue(raw)
			if err != nil {
				t.Fatal(err)
			}
			m[[2]int{r, col}] = v
		}
		ctx.cells[strings.ToUpper(sheet)] = m
	}
	return ctx
}

func (c *corpusCtx) sheet(s string) (map[[2]int]Value, bool) {
	if s == "" {
		s = "Sheet1"
	}
	m, ok := c.cells[strings.ToUpper(s)]
	return m, ok
}

func (c *corpusCtx) Cell(sheet string, row, col int) (Value, bool) {
	m, ok := c.sheet(sheet)
	if !ok {
		return nil, false
	}
	return m[[2]int{row, col}], true
}

func (c *corpusCtx) Size(sheet string) (int, int, bool) {
	m, ok := c.sheet(sheet)
	if !ok {
		return 0, 0, false
	}
	rows, cols := 0, 0
	for k := range m {
		rows, cols = max(rows, k[0]+1), max(cols, k[1]+1)
	}
	return rows, cols, true
}

func (c *corpusCtx) Now() time.Time { return time.Now() }

// corpusEqual compares an engine value with a stored one.
func corpusEqual(got, want Value) bool {
	if g, ok := got.(float64); ok {
		w, ok := want.(float64)
		if !ok {
			return false
		}
		if g == w || math.Abs(g) < 1e-300 && math.Abs(w) < 1e-300 {
			return true
		}
		return math.Abs(g-w) <= 1e-9*math.Max(math.Abs(g), math.Abs(w))
	}
	return got == want
}

func TestLibreOfficeCorpus(t *testing.T) {
	c := loadCorpus(t)
	if len(c.Cases) < 150 {
		t.Errorf("the corpus has %d cases, want at least 150", len(c.Cases))
	}
	ctx := newCorpusCtx(t, c)
	agree, differ := 0, 0
	for i, cs := range c.Cases {
		want, err := decodeValue(cs.LibreOffice)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if cs.Differs != "" {
			differ++
			if want, err = decodeValue(cs.Foundry); err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
		}
		f, err := Parse(cs.Formula)
		if err != nil {
			t.Errorf("case %d %s: %v", i, cs.Formula, err)
			continue
		}
		got := f.Eval(ctx, i, corpusFormulaCol)
		if !corpusEqual(got, want) {
			t.Errorf("case %d (Z%d) %s = %#v, LibreOffice %#v", i, i+1, cs.Formula, got, want)
			continue
		}
		if cs.Differs == "" {
			agree++
		}
	}
	t.Logf("%d of %d formulas agree with LibreOffice; %d deliberate differences", agree, len(c.Cases), differ)
}

// libreOffice finds soffice or libreoffice, skipping (or failing with
// FOUNDRY_TEST_LIBREOFFICE=required) without it.
func libreOffice(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"soffice", "libreoffice"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "LibreOffice (soffice or libreoffice) is not on PATH: install Debian's libreoffice-calc-nogui to recompute the corpus"
	if os.Getenv("FOUNDRY_TEST_LIBREOFFICE") == "required" {
		t.Fatal(msg + " (FOUNDRY_TEST_LIBREOFFICE=required)")
	}
	t.Skip(msg)
	return ""
}

// recalcProfile makes LibreOffice recalculate every formula of an OOXML
// file on load (rather than trust cached values, of which there are none
// anyway).
const recalcProfile = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
`

// xlfn matches the functions newer than Excel 2007, which an .xlsx file
// names with the prefix _xlfn. (LibreOffice reads IFS without it as an
// unknown name).
var xlfn = regexp.MustCompile(`\b(IFS|IFNA|XOR|SWITCH|XLOOKUP|CONCAT|TEXTJOIN|DAYS|STDEV\.S|STDEV\.P|VAR\.S|VAR\.P|RANK\.EQ)\(`)

// writeCorpusXLSX writes the grid and the formulas (no cached values).
// Error inputs are written as the formulas that make them.
func writeCorpusXLSX(t *testing.T, c *corpus, path string) {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	names := make([]string, 0, len(c.Sheets))
	for s := range c.Sheets {
		names = append(names, s)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] == "Sheet1" || names[j] != "Sheet1" && names[i] < names[j] })
	for _, s := range names {
		if s != "Sheet1" {
			if _, err := f.NewSheet(s); err != nil {
				t.Fatal(err)
			}
		}
		for cell, raw := range c.Sheets[s] {
			v, err := decodeValue(raw)
			if err != nil {
				t.Fatal(err)
			}
			switch x := v.(type) {
			case Error:
				src, ok := map[Error]string{ErrDiv0: "1/0", ErrNA: "NA()", ErrValue: `"x"+1`}[x]
				if !ok {
					t.Fatalf("no formula makes input error %s", x)
				}
				err = f.SetCellFormula(s, cell, src)
			case bool:
				err = f.SetCellBool(s, cell, x)
			case string:
				err = f.SetCellStr(s, cell, x)
			default:
				err = f.SetCellValue(s, cell, x)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, cs := range c.Cases {
		src := xlfn.ReplaceAllString(strings.TrimPrefix(cs.Formula, "="), "_xlfn.$1(")
		if err := f.SetCellFormula("Sheet1", CellName(i, corpusFormulaCol), src); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
}

// readComputed reads the values LibreOffice saved for the formula cells.
func readComputed(t *testing.T, path string, n int) []Value {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := make([]Value, n)
	for i := range out {
		cell := CellName(i, corpusFormulaCol)
		typ, err := f.GetCellType("Sheet1", cell)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := f.GetCellValue("Sheet1", cell, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		switch typ {
		case excelize.CellTypeBool:
			out[i] = raw == "1" || strings.EqualFold(raw, "TRUE")
		case excelize.CellTypeError:
			out[i] = Error(raw)
		case excelize.CellTypeFormula, excelize.CellTypeSharedString, excelize.CellTypeInlineString:
			out[i] = raw
		default:
			if raw == "" {
				out[i] = nil
				continue
			}
			x, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				t.Fatalf("%s: LibreOffice saved %q as a number", cell, raw)
			}
			out[i] = x
		}
	}
	return out
}

func TestLibreOfficeRecompute(t *testing.T) {
	soffice := libreOffice(t)
	c := loadCorpus(t)
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile")
	if err := os.MkdirAll(filepath.Join(profile, "user"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profile, "user", "registrymodifications.xcu"), []byte(recalcProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "corpus.xlsx")
	writeCorpusXLSX(t, c, in)
	outDir := filepath.Join(dir, "out")
	cmd := exec.Command(soffice, "-env:UserInstallation=file://"+profile, "--headless", "--norestore",
		"--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", outDir, in)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("soffice --convert-to: %v\n%s", err, out.String())
	}
	got := readComputed(t, filepath.Join(outDir, "corpus.xlsx"), len(c.Cases))
	if os.Getenv("UPDATE_CORPUS") == "1" {
		for i := range c.Cases {
			c.Cases[i].LibreOffice = encodeValue(got[i])
		}
		writeCorpus(t, c)
		t.Logf("rewrote %s with LibreOffice's values for %d formulas", corpusPath, len(c.Cases))
		return
	}
	for i, cs := range c.Cases {
		want, err := decodeValue(cs.LibreOffice)
		if err != nil {
			t.Fatal(err)
		}
		if !corpusEqual(got[i], want) {
			t.Errorf("case %d %s: LibreOffice now computes %#v, the corpus says %#v (regenerate with UPDATE_CORPUS=1)", i, cs.Formula, got[i], want)
		}
	}
}

// writeCorpus writes the corpus with one case per line, for readable diffs.
func writeCorpus(t *testing.T, c *corpus) {
	t.Helper()
	marshal := func(v any, indent bool) []byte {
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false) // keep < > & in formulas readable
		if indent {
			enc.SetIndent("", "  ")
		}
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n\"about\": %s,\n\"sheets\": %s,\n\"cases\": [\n", marshal(c.About, false), marshal(c.Sheets, true))
	for i, cs := range c.Cases {
		b.Write(marshal(cs, false))
		if i < len(c.Cases)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n}\n")
	if err := os.WriteFile(corpusPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
