package note

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"foundry/internal/problem"
)

var t0 = time.Date(2026, 11, 6, 12, 0, 0, 0, time.UTC)

// wantProblem fails unless err is a *problem.Problem with code and field
// whose message contains every one of mention.
func wantProblem(t *testing.T, err error, code, field string, mention ...string) *problem.Problem {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) {
		t.Fatalf("err = %v; want a *problem.Problem %s", err, code)
	}
	if p.Code != code || p.Field != field {
		t.Fatalf("got %s field %q (%s); want %s field %q", p.Code, p.Field, p.Message, code, field)
	}
	for _, m := range mention {
		if !strings.Contains(p.Message, m) {
			t.Errorf("message %q does not mention %q", p.Message, m)
		}
	}
	// The domain speaks no door's language: each door adds its next step
	// (the MCP door the tool to call).
	if tool := toolName.FindString(p.Message); tool != "" {
		t.Errorf("message %q names the tool %s", p.Message, tool)
	}
	return p
}

// toolName matches an MCP tool's name (operations such as replace_text
// are the domain's own words).
var toolName = regexp.MustCompile(`\b(list|read|edit|create|add|propose|poll)_[a-z_]+\b`)

func mustCreate(t *testing.T, d *Doc, typ, label string, outline ...SlideInput) Tab {
	t.Helper()
	tab, err := CreateTab(d, typ, label, outline, t0)
	if err != nil {
		t.Fatalf("CreateTab(%s, %q): %v", typ, label, err)
	}
	return tab
}

// snapshot is a deep copy, to prove that a refused call changed nothing.
func snapshot(t *testing.T, d *Doc) string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func titles(n int) []SlideInput {
	ss := make([]SlideInput, n)
	for i := range ss {
		ss[i] = SlideInput{Title: "S" + string(rune('a'+i%26))}
	}
	return ss
}

func TestNewHasTheThreeFixedTabsInOrder(t *testing.T) {
	d := New("  Plan  ")
	want := []TabRef{
		{TabID: "markdown", Type: "markdown", Label: "Note", Position: 0},
		{TabID: "files", Type: "files", Label: "Files", Position: 1},
		{TabID: "sources", Type: "sources", Label: "Sources", Position: 2},
	}
	if got := Refs(&d); !reflect.DeepEqual(got, want) {
		t.Errorf("Refs = %+v, want %+v", got, want)
	}
	if d.Title != "Plan" || d.NextTabN != 1 || d.Sources == nil || d.Files == nil || len(d.Sources)+len(d.Files) != 0 {
		t.Errorf("New = %+v", d)
	}
	b, _ := json.Marshal(d)
	if !strings.Contains(string(b), `"sources":[]`) || !strings.Contains(string(b), `"files":[]`) {
		t.Errorf("empty lists must encode as [], got %s", b)
	}
}

func TestNewTabIDShape(t *testing.T) {
	d := New("x")
	d.NextTabN = 9
	if got := NewTabID(&d, "slides", time.UnixMilli(1761559498450)); got != "slides-9-mh8z1k2a" {
		t.Errorf("NewTabID = %q, want slides-9-mh8z1k2a", got)
	}
	if d.NextTabN != 10 {
		t.Errorf("NextTabN = %d, want 10", d.NextTabN)
	}
}

func TestNewTabIDSkipsAnIDAlreadyInTheStrip(t *testing.T) {
	d := New("x")
	taken := NewTabID(&d, "sheet", t0)
	d.Tabs = append(d.Tabs, Tab{ID: taken, Type: TypeSheet, Label: "Sheet"})
	d.NextTabN = 1 // as if the counter had been restored from an older version
	got := NewTabID(&d, "sheet", t0)
	if got == taken || !strings.HasPrefix(got, "sheet-2-") || d.NextTabN != 3 {
		t.Errorf("NewTabID = %q (NextTabN %d); want sheet-2-… after %q", got, d.NextTabN, taken)
	}
}

func TestFindTabAcceptsOnlyTheExactID(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "Q3 deck")
	if got, err := FindTab(&d, deck.ID); err != nil || got.ID != deck.ID || got.Label != "Q3 deck" {
		t.Fatalf("FindTab(%q) = %+v, %v", deck.ID, got, err)
	}
	for _, id := range []string{"slides", "", "Q3 deck", "Note", "MARKDOWN", deck.ID + " ", "slides-1"} {
		t.Run(id, func(t *testing.T) {
			_, err := FindTab(&d, id)
			p := wantProblem(t, err, CodeUnknownTab, "tab_id",
				`markdown (markdown, "Note")`, `files (files, "Files")`, `sources (sources, "Sources")`,
				deck.ID+` (slides, "Q3 deck")`,
				"exact tab ID only", `type names such as "slides"`, "labels are not accepted", "Pick an ID from that list")
			if got := p.Details["tabs"]; !reflect.DeepEqual(got, Refs(&d)) {
				t.Errorf("Details[tabs] = %+v, want %+v", got, Refs(&d))
			}
		})
	}
}

func TestCreateTab(t *testing.T) {
	tests := []struct {
		name       string
		typ, label string
		outline    []SlideInput
		wantLabel  string
		wantSlides []Slide
		wantSheets []Sheet
	}{
		{"empty slides tab gets the default label", "slides", "", nil, "Slides", []Slide{}, nil},
		{"sheet tab gets one empty sheet", "sheet", "  ", nil, "Sheet", nil, []Sheet{{ID: "sheet-1", Name: "Sheet1", Cells: [][]any{}}}},
		{"label is trimmed", "slides", "  Board deck \n", nil, "Board deck", []Slide{}, nil},
		{"label of exactly 100 runes", "sheet", strings.Repeat("é", 100), nil, strings.Repeat("é", 100), nil, []Sheet{{ID: "sheet-1", Name: "Sheet1", Cells: [][]any{}}}},
		{"outline fills the deck in order", "slides", "Deck", []SlideInput{{Title: " Intro ", Body: "b", Notes: "n"}, {Title: "End"}}, "Deck",
			[]Slide{{ID: "slide-1", Title: "Intro", Body: "b", Notes: "n"}, {ID: "slide-2", Title: "End"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New("x")
			tab := mustCreate(t, &d, tt.typ, tt.label, tt.outline...)
			if !strings.HasPrefix(tab.ID, tt.typ+"-1-") || tab.Type != tt.typ || tab.Label != tt.wantLabel {
				t.Errorf("tab = %q %q %q", tab.ID, tab.Type, tab.Label)
			}
			if !reflect.DeepEqual(tab.Slides, tt.wantSlides) || !reflect.DeepEqual(tab.Sheets, tt.wantSheets) {
				t.Errorf("data = %+v %+v, want %+v %+v", tab.Slides, tab.Sheets, tt.wantSlides, tt.wantSheets)
			}
			refs := Refs(&d)
			if last := refs[len(refs)-1]; len(refs) != 4 || last.TabID != tab.ID || last.Position != 3 {
				t.Errorf("new tab is not appended at the end: %+v", refs)
			}
		})
	}
}

func TestCreateTabRefusals(t *testing.T) {
	withEmptyTitle := titles(3)
	withEmptyTitle[2].Title = "   "
	tests := []struct {
		name, typ, label string
		outline          []SlideInput
		code, field      string
		mention          []string
	}{
		{"fixed type", "markdown", "", nil, problem.Invalid, "tab_type", []string{`"slides" or "sheet"`}},
		{"type by another spelling", "Slides", "", nil, problem.Invalid, "tab_type", []string{`"Slides"`}},
		{"outline on a sheet", "sheet", "", titles(1), problem.Invalid, "slides", []string{"only fits a slides tab"}},
		{"21 slides", "slides", "", titles(21), problem.Limit, "slides", []string{"at most 20 slides per call (outline limit); split the deck into several calls"}},
		{"label of 101 runes", "slides", strings.Repeat("a", 101), nil, problem.Limit, "label", []string{"at most 100"}},
		{"slide without title", "slides", "", withEmptyTitle, problem.Invalid, "slides[2].title", []string{"title"}},
		{"slide body over 20000 characters", "slides", "", []SlideInput{{Title: "t", Body: strings.Repeat("x", MaxSlideTextRunes+1)}}, problem.Limit, "slides[0].body", []string{"20001 characters", "at most 20000 characters"}},
		{"slide notes over 64 KiB", "slides", "", []SlideInput{{Title: "t", Notes: strings.Repeat("😀", 17000)}}, problem.Limit, "slides[0].notes", []string{"68000 bytes", "65536"}},
		{"slide title over 500 characters", "slides", "", []SlideInput{{Title: strings.Repeat("ü", 501)}}, problem.Limit, "slides[0].title", []string{"501 characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New("x")
			before := snapshot(t, &d)
			_, err := CreateTab(&d, tt.typ, tt.label, tt.outline, t0)
			wantProblem(t, err, tt.code, tt.field, tt.mention...)
			if after := snapshot(t, &d); after != before {
				t.Errorf("refused call changed the Note:\n%s\n%s", before, after)
			}
		})
	}
}

func TestCreateTabOutlineOf20IsAccepted(t *testing.T) {
	d := New("x")
	if tab := mustCreate(t, &d, "slides", "", titles(20)...); len(tab.Slides) != 20 || tab.Slides[19].ID != "slide-20" {
		t.Errorf("got %d slides, last %+v", len(tab.Slides), tab.Slides[len(tab.Slides)-1])
	}
}

func TestTabIDsAreNotReusedAfterDelete(t *testing.T) {
	d := New("x")
	first := mustCreate(t, &d, "slides", "")
	if err := DeleteTab(&d, first.ID); err != nil {
		t.Fatal(err)
	}
	second := mustCreate(t, &d, "slides", "") // same type, same clock
	if second.ID == first.ID || !strings.HasPrefix(second.ID, "slides-2-") || d.NextTabN != 3 {
		t.Errorf("after deleting %q, CreateTab gave %q (NextTabN %d)", first.ID, second.ID, d.NextTabN)
	}
}

// Property: over any sequence of creates and deletes, a created tab never
// has an ID that any earlier tab had, even with a clock standing still or
// going back. A seeded generator keeps the run deterministic.
func TestPropertyCreateAfterDeleteNeverYieldsAnOldID(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		d := New("x")
		seen := map[string]bool{"markdown": true, "files": true, "sources": true}
		now := t0
		for step := range 300 {
			switch rng.IntN(4) {
			case 0, 1:
				typ := []string{"slides", "sheet"}[rng.IntN(2)]
				tab, err := CreateTab(&d, typ, "", nil, now)
				if len(d.Tabs) == MaxTabsPerNote && err != nil {
					continue // the tab limit; deletes make room again
				}
				if err != nil {
					t.Fatal(err)
				}
				if seen[tab.ID] {
					t.Fatalf("seed %d step %d: CreateTab reused %q", seed, step, tab.ID)
				}
				seen[tab.ID] = true
			case 2:
				if len(d.Tabs) > 3 {
					victim := d.Tabs[3+rng.IntN(len(d.Tabs)-3)].ID
					if err := DeleteTab(&d, victim); err != nil {
						t.Fatal(err)
					}
				}
			case 3:
				now = now.Add(time.Duration(rng.IntN(3)-1) * time.Millisecond)
			}
		}
	}
}

func TestReplaceText(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "")
	tests := []struct {
		name, tab, text string
		code, field     string
		mention         []string
	}{
		{"markdown tab takes text", "markdown", "# Hello", "", "", nil},
		{"exactly 1 MiB", "markdown", strings.Repeat("a", 1<<20), "", "", nil},
		{"1 MiB + 1 byte", "markdown", strings.Repeat("a", 1<<20+1), problem.Limit, "text", []string{"1048577 bytes", "1 MiB markdown limit"}},
		{"slides tab", deck.ID, "x", CodeWrongTabType, "operation", []string{"replace_text works only on the markdown tab", "slide_add, slides_add_outline or replace_tab_data"}},
		{"sources tab", "sources", "x", CodeWrongTabType, "tab_id", []string{"files and sources can't be edited this way", "add a citation as a new source"}},
		{"type name instead of ID", "slides", "x", CodeUnknownTab, "tab_id", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d.Markdown = "old"
			err := ReplaceText(&d, tt.tab, tt.text)
			if tt.code == "" {
				if err != nil || d.Markdown != tt.text {
					t.Fatalf("err %v, markdown of %d bytes", err, len(d.Markdown))
				}
				return
			}
			wantProblem(t, err, tt.code, tt.field, tt.mention...)
			if d.Markdown != "old" {
				t.Errorf("refused call changed the text")
			}
		})
	}
}

func TestSlideAdd(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "", SlideInput{Title: "One"})
	sheet := mustCreate(t, &d, "sheet", "")
	got, err := SlideAdd(&d, deck.ID, SlideInput{Title: " Two ", Body: "b", Notes: "n"})
	if err != nil {
		t.Fatal(err)
	}
	want := Slide{ID: "slide-3", Title: "Two", Body: "b", Notes: "n"} // slide-1, then sheet-2
	if got != want {
		t.Errorf("SlideAdd = %+v, want %+v", got, want)
	}
	tab, _ := FindTab(&d, deck.ID)
	if len(tab.Slides) != 2 || tab.Slides[1] != want {
		t.Errorf("deck = %+v", tab.Slides)
	}

	before := snapshot(t, &d)
	_, err = SlideAdd(&d, deck.ID, SlideInput{Title: " \t"})
	wantProblem(t, err, problem.Invalid, "title")
	_, err = SlideAdd(&d, deck.ID, SlideInput{Title: "t", Notes: strings.Repeat("n", MaxSlideTextBytes+1)})
	wantProblem(t, err, problem.Limit, "notes", "slide text limit")
	_, err = SlideAdd(&d, sheet.ID, SlideInput{Title: "t"})
	wantProblem(t, err, CodeWrongTabType, "operation", "slide_add works only on slides tabs", "sheet_set_range or replace_tab_data")
	if after := snapshot(t, &d); after != before {
		t.Error("refused calls changed the Note")
	}
}

func TestSlidesAddOutline(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "", SlideInput{Title: "Cover"})
	added, err := SlidesAddOutline(&d, deck.ID, titles(20))
	if err != nil {
		t.Fatal(err)
	}
	tab, _ := FindTab(&d, deck.ID)
	if len(added) != 20 || added[0].ID != "slide-2" || added[19].ID != "slide-21" || added[19].Title != "St" || len(tab.Slides) != 21 {
		t.Errorf("added %d (first %+v, last %+v), deck has %d", len(added), added[0], added[19], len(tab.Slides))
	}

	before := snapshot(t, &d)
	_, err = SlidesAddOutline(&d, deck.ID, titles(21))
	wantProblem(t, err, problem.Limit, "slides", "at most 20 slides per call (outline limit); split the deck into several calls")
	_, err = SlidesAddOutline(&d, deck.ID, nil)
	wantProblem(t, err, problem.Invalid, "slides", "1 to 20")
	bad := titles(2)
	bad[1].Title = ""
	_, err = SlidesAddOutline(&d, deck.ID, bad)
	wantProblem(t, err, problem.Invalid, "slides[1].title")
	if after := snapshot(t, &d); after != before {
		t.Error("refused calls changed the Note")
	}
}

func TestSlidesPerTabLimit(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "")
	for range MaxSlidesPerTab / MaxOutlineSlides {
		if _, err := SlidesAddOutline(&d, deck.ID, titles(20)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := SlideAdd(&d, deck.ID, SlideInput{Title: "one too many"})
	wantProblem(t, err, problem.Limit, "slides", "at most 200 slides per tab")
}

func TestSheetSetRangeGrowsTheGrid(t *testing.T) {
	d := New("x")
	tab := mustCreate(t, &d, "sheet", "")
	n, err := SheetSetRange(&d, tab.ID, "", 2, 1, [][]any{
		{1, "a"},
		{true, nil, json.Number("2.5")},
	})
	if err != nil || n != 5 {
		t.Fatalf("SheetSetRange = %d, %v; want 5 cells", n, err)
	}
	want := [][]any{{}, {}, {nil, 1.0, "a"}, {nil, true, nil, 2.5}}
	got, _ := FindTab(&d, tab.ID)
	if !reflect.DeepEqual(got.Sheets[0].Cells, want) {
		t.Errorf("cells = %#v, want %#v", got.Sheets[0].Cells, want)
	}

	// Overwriting inside the grid keeps the neighbours.
	if _, err := SheetSetRange(&d, tab.ID, "sheet-1", 3, 0, [][]any{{"x"}}); err != nil {
		t.Fatal(err)
	}
	want[3] = []any{"x", true, nil, 2.5}
	if !reflect.DeepEqual(got.Sheets[0].Cells, want) {
		t.Errorf("cells = %#v, want %#v", got.Sheets[0].Cells, want)
	}
}

func TestSheetSetRangeRefusals(t *testing.T) {
	d := New("x")
	tab := mustCreate(t, &d, "sheet", "")
	deck := mustCreate(t, &d, "slides", "")
	row := func(n int) []any { return make([]any, n) }
	rows := func(n int) [][]any {
		r := make([][]any, n)
		for i := range r {
			r[i] = row(1)
		}
		return r
	}
	tests := []struct {
		name        string
		tab, sheet  string
		row, col    int
		values      [][]any
		code, field string
		mention     []string
	}{
		{"101 rows", tab.ID, "", 0, 0, rows(101), problem.Limit, "values", []string{"at most 100 rows per call"}},
		{"101 columns", tab.ID, "", 0, 0, [][]any{row(1), row(101)}, problem.Limit, "values[1]", []string{"at most 100 columns per call"}},
		{"no rows", tab.ID, "", 0, 0, nil, problem.Invalid, "values", nil},
		{"object value", tab.ID, "", 0, 0, [][]any{{1}, {"a", "b", "c", map[string]any{"x": 1}}}, problem.Invalid, "values[1][3]", []string{"map"}},
		{"array value", tab.ID, "", 0, 0, [][]any{{[]any{1}}}, problem.Invalid, "values[0][0]", nil},
		{"NaN", tab.ID, "", 0, 0, [][]any{{math.NaN()}}, problem.Invalid, "values[0][0]", []string{"finite"}},
		{"bad json number", tab.ID, "", 0, 0, [][]any{{json.Number("1e999")}}, problem.Invalid, "values[0][0]", nil},
		{"negative row", tab.ID, "", -1, 0, rows(1), problem.Invalid, "start_row", []string{"0-based"}},
		{"negative column", tab.ID, "", 0, -1, rows(1), problem.Invalid, "start_col", nil},
		{"unknown sheet", tab.ID, "Sheet1", 0, 0, rows(1), problem.Invalid, "sheet_id", []string{`sheet-1 ("Sheet1")`}},
		{"tab over the cell limit", tab.ID, "", 10000, 0, [][]any{row(100)}, problem.Limit, "values", []string{"1000100 cells", "at most 1000000 cells per sheet tab"}},
		{"far-away empty row", tab.ID, "", MaxSheetCells, 0, [][]any{{}}, problem.Limit, "values", nil},
		{"slides tab", deck.ID, "", 0, 0, rows(1), CodeWrongTabType, "operation", []string{"sheet_set_range works only on sheet tabs"}},
		{"type name", "sheet", "", 0, 0, rows(1), CodeUnknownTab, "tab_id", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, &d)
			_, err := SheetSetRange(&d, tt.tab, tt.sheet, tt.row, tt.col, tt.values)
			wantProblem(t, err, tt.code, tt.field, tt.mention...)
			if after := snapshot(t, &d); after != before {
				t.Error("refused call changed the Note")
			}
		})
	}
}

func TestSheetSetRangeAtTheCellLimit(t *testing.T) {
	d := New("x")
	tab := mustCreate(t, &d, "sheet", "")
	// 10000 rows × 100 columns is exactly the limit (SPEC §7: 1,000,000).
	if _, err := SheetSetRange(&d, tab.ID, "", 9999, 0, [][]any{make([]any, 100)}); err != nil {
		t.Fatalf("a write up to the limit was refused: %v", err)
	}
	_, err := SheetSetRange(&d, tab.ID, "", 10000, 0, [][]any{{1}})
	wantProblem(t, err, problem.Limit, "values", "1000100 cells")
}

func TestReadRange(t *testing.T) {
	d := New("x")
	tab := mustCreate(t, &d, "sheet", "")
	if _, err := SheetSetRange(&d, tab.ID, "", 0, 0, [][]any{{"a", "b"}, {"c"}}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRange(&d, tab.ID, "", 0, 1, 3, 2)
	want := [][]any{{"b", nil}, {nil, nil}, {nil, nil}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadRange = %#v, %v; want %#v", got, err, want)
	}
	if got, _ := ReadRange(&d, tab.ID, "", 0, 0, 100, 100); len(got) != 100 || len(got[99]) != 100 || got[1][0] != "c" {
		t.Errorf("100×100 read: %d rows", len(got))
	}

	_, err = ReadRange(&d, tab.ID, "", 0, 0, 0, 1)
	wantProblem(t, err, problem.Invalid, "rows")
	_, err = ReadRange(&d, tab.ID, "", 0, 0, 1, 101)
	wantProblem(t, err, problem.Limit, "cols", "100 × 100")
	_, err = ReadRange(&d, "markdown", "", 0, 0, 1, 1)
	wantProblem(t, err, CodeWrongTabType, "tab_id", "sheet tabs only", "Read this tab whole")
}

func TestReplaceTabDataOnSlides(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "", SlideInput{Title: "Old"})
	err := ReplaceTabData(&d, deck.ID, json.RawMessage(`{"slides":[{"title":"A","body":"b"},{"title":"B","notes":"n"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tab, _ := FindTab(&d, deck.ID)
	want := []Slide{{ID: "slide-2", Title: "A", Body: "b"}, {ID: "slide-3", Title: "B", Notes: "n"}}
	if !reflect.DeepEqual(tab.Slides, want) {
		t.Errorf("slides = %+v, want %+v", tab.Slides, want)
	}
	if err := ReplaceTabData(&d, deck.ID, json.RawMessage(`{"slides":[]}`)); err != nil || len(tab.Slides) != 0 {
		t.Errorf("empty deck: %v, %d slides", err, len(tab.Slides))
	}
}

func TestReplaceTabDataOnSheets(t *testing.T) {
	d := New("x")
	tab := mustCreate(t, &d, "sheet", "") // holds sheet-1
	err := ReplaceTabData(&d, tab.ID, json.RawMessage(`{"sheets":[
		{"name":"New","cells":[[1]]},
		{"sheet_id":"sheet-1","name":" Kept ","cells":[["a",2.5,true,null]]},
		{"sheet_id":"sheet-99","name":"Unknown ID"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := FindTab(&d, tab.ID)
	want := []Sheet{
		{ID: "sheet-2", Name: "New", Cells: [][]any{{1.0}}},
		{ID: "sheet-1", Name: "Kept", Cells: [][]any{{"a", 2.5, true, nil}}},
		{ID: "sheet-3", Name: "Unknown ID", Cells: [][]any{}},
	}
	if !reflect.DeepEqual(got.Sheets, want) {
		t.Errorf("sheets = %#v\nwant %#v", got.Sheets, want)
	}
	// The first sheet is the default for sheet_set_range.
	if _, err := SheetSetRange(&d, tab.ID, "", 0, 0, [][]any{{"x"}}); err != nil || got.Sheets[0].Cells[0][0] != "x" {
		t.Errorf("write to first sheet: %v, %#v", err, got.Sheets[0].Cells)
	}
}

func TestReplaceTabDataRefusals(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "", SlideInput{Title: "Keep me"})
	sheet := mustCreate(t, &d, "sheet", "")
	many := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	tests := []struct {
		name, tab, data string
		code, field     string
		mention         []string
	}{
		{"unknown slide field", deck.ID, `{"slides":[{"title":"A","layout":"wide"}]}`, problem.Invalid, "data", []string{`unknown field "layout"`}},
		{"unknown top-level field", deck.ID, `{"slides":[],"theme":"dark"}`, problem.Invalid, "data", []string{`unknown field "theme"`}},
		{"sheets on a slides tab", deck.ID, `{"sheets":[]}`, problem.Invalid, "data", []string{`unknown field "sheets"`}},
		{"missing slides", deck.ID, `{}`, problem.Invalid, "slides", []string{"missing"}},
		{"trailing data", deck.ID, `{"slides":[]} {"slides":[]}`, problem.Invalid, "data", []string{"after the object"}},
		{"not JSON", deck.ID, `slides: []`, problem.Invalid, "data", nil},
		{"empty", deck.ID, ``, problem.Invalid, "data", nil},
		{"201 slides", deck.ID, `{"slides":` + many(201, `{"title":"t"}`) + `}`, problem.Limit, "slides", []string{"at most 200 slides per tab"}},
		{"slide without title", deck.ID, `{"slides":[{"title":"a"},{"body":"b"}]}`, problem.Invalid, "slides[1].title", nil},
		{"title of wrong type", deck.ID, `{"slides":[{"title":7}]}`, problem.Invalid, "data", nil},
		{"no sheets", sheet.ID, `{"sheets":[]}`, problem.Invalid, "sheets", []string{"1 to 20"}},
		{"21 sheets", sheet.ID, `{"sheets":` + many(21, `{"name":"s"}`) + `}`, problem.Limit, "sheets", []string{"at most 20 sheets"}},
		{"unknown sheet field", sheet.ID, `{"sheets":[{"name":"s","rows":[]}]}`, problem.Invalid, "data", []string{`unknown field "rows"`}},
		{"object in a cell", sheet.ID, `{"sheets":[{"name":"s","cells":[[1,{"x":1}]]}]}`, problem.Invalid, "sheets[0].cells[0][1]", nil},
		{"sheet without name", sheet.ID, `{"sheets":[{"name":" "}]}`, problem.Invalid, "sheets[0].name", nil},
		{"duplicate sheet_id", sheet.ID, `{"sheets":[{"sheet_id":"sheet-3","name":"a"},{"sheet_id":"sheet-3","name":"b"}]}`, problem.Invalid, "sheets[1].sheet_id", []string{"twice"}},
		{"markdown tab", "markdown", `{"slides":[]}`, CodeWrongTabType, "operation", []string{"replace_text"}},
		{"files tab", "files", `{"slides":[]}`, CodeWrongTabType, "tab_id", []string{"files and sources can't be edited this way"}},
		{"sources tab", "sources", `{}`, CodeWrongTabType, "tab_id", []string{"files and sources can't be edited this way"}},
		{"type name", "slides", `{"slides":[]}`, CodeUnknownTab, "tab_id", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, &d)
			err := ReplaceTabData(&d, tt.tab, json.RawMessage(tt.data))
			wantProblem(t, err, tt.code, tt.field, tt.mention...)
			if after := snapshot(t, &d); after != before {
				t.Error("refused call changed the Note")
			}
		})
	}
}

func TestAddSourceDedupesTheSevenSpellingsOfOnePage(t *testing.T) {
	spellings := []string{
		"https://example.org/a",
		"https://example.org/a/",
		"https://www.example.org/a",
		"https://example.org/a?utm_source=x&utm_medium=y",
		"https://example.org/a#section",
		"http://example.org/a",
		"example.org/a",
	}
	// Each spelling in turn comes first; the first one is the one kept.
	for k := range spellings {
		order := append(append([]string{}, spellings[k:]...), spellings[:k]...)
		d := New("x")
		first, attached, err := AddSource(&d, " Report ", order[0], t0.In(time.FixedZone("X", 7*3600)))
		want := Source{ID: "src-1", Title: "Report", URL: order[0], NormURL: "https://example.org/a", AddedAt: "2026-11-06T12:00:00Z"}
		if order[0] == "example.org/a" {
			want.URL = "https://example.org/a"
		}
		if err != nil || attached || first != want {
			t.Fatalf("first AddSource = %+v, %v, %v; want %+v", first, attached, err, want)
		}
		for _, raw := range order[1:] {
			got, attached, err := AddSource(&d, "A better title", raw, t0.Add(time.Hour))
			if err != nil || !attached || got != first {
				t.Errorf("AddSource(%q) = %+v, %v, %v; want the first source, already attached", raw, got, attached, err)
			}
		}
		if len(d.Sources) != 1 || d.NextItem != 2 {
			t.Errorf("%d sources, NextItem %d; want 1 and 2", len(d.Sources), d.NextItem)
		}
	}
}

func TestAddSourceRefusals(t *testing.T) {
	tests := []struct {
		name, title, url string
		code, field      string
		mention          []string
	}{
		{"javascript url", "t", "javascript:alert(1)", problem.Invalid, "url", []string{`"javascript"`, "only http and https"}},
		{"ftp url", "t", "ftp://example.org/f", problem.Invalid, "url", []string{`"ftp"`}},
		{"blank url", "t", "  ", problem.Invalid, "url", nil},
		{"blank title", " ", "https://example.org", problem.Invalid, "title", nil},
		{"title of 501 runes", strings.Repeat("ü", 501), "https://example.org", problem.Limit, "title", []string{"at most 500"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New("x")
			_, _, err := AddSource(&d, tt.title, tt.url, t0)
			wantProblem(t, err, tt.code, tt.field, tt.mention...)
			if len(d.Sources) != 0 || d.NextItem != 1 {
				t.Error("refused call changed the Note")
			}
		})
	}
	d := New("x")
	if _, _, err := AddSource(&d, strings.Repeat("ü", 500), "example.org", t0); err != nil {
		t.Errorf("a 500-rune title was refused: %v", err)
	}
}

func TestDeleteSourceThenAddAgainGetsANewID(t *testing.T) {
	d := New("x")
	s1, _, _ := AddSource(&d, "A", "https://example.org/a", t0)
	s2, _, _ := AddSource(&d, "B", "https://example.org/b", t0)
	if err := DeleteSource(&d, s1.ID); err != nil {
		t.Fatal(err)
	}
	if len(d.Sources) != 1 || d.Sources[0] != s2 {
		t.Errorf("sources = %+v", d.Sources)
	}
	again, attached, err := AddSource(&d, "A", "example.org/a/", t0)
	if err != nil || attached || again.ID != "src-3" {
		t.Errorf("re-add = %+v, %v, %v; want a new src-3", again, attached, err)
	}
	wantProblem(t, DeleteSource(&d, s1.ID), problem.NotFound, "source_id", `"src-1"`)
}

func TestAddFile(t *testing.T) {
	d := New("x")
	mustCreate(t, &d, "slides", "", SlideInput{Title: "s"}) // takes slide-1
	f := AddFile(&d, "deck.pdf", "application/pdf", 1234, "ab12", t0.In(time.FixedZone("Y", -5*3600)))
	want := File{ID: "file-2", Name: "deck.pdf", ContentType: "application/pdf", SizeBytes: 1234, SHA256: "ab12", AddedAt: "2026-11-06T12:00:00Z"}
	if f != want || len(d.Files) != 1 || d.Files[0] != want {
		t.Errorf("AddFile = %+v, files %+v; want %+v", f, d.Files, want)
	}
}

func TestMoveTab(t *testing.T) {
	tests := []struct {
		name string
		id   string // "deck" is the slides tab created below
		to   int
		want []string
	}{
		{"to the front", "deck", 0, []string{"deck", "markdown", "files", "sources"}},
		{"negative index clamps to the front", "deck", -5, []string{"deck", "markdown", "files", "sources"}},
		{"fixed tab to the end, index clamped", "markdown", 99, []string{"files", "sources", "deck", "markdown"}},
		{"into the middle", "sources", 1, []string{"markdown", "sources", "files", "deck"}},
		{"to its own place", "files", 1, []string{"markdown", "files", "sources", "deck"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New("x")
			deck := mustCreate(t, &d, "slides", "")
			id := tt.id
			if id == "deck" {
				id = deck.ID
			}
			if err := MoveTab(&d, id, tt.to); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range Refs(&d) {
				if r.TabID == deck.ID {
					r.TabID = "deck"
				}
				got = append(got, r.TabID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("strip = %v, want %v", got, tt.want)
			}
		})
	}
	d := New("x")
	wantProblem(t, MoveTab(&d, "Note", 0), CodeUnknownTab, "tab_id")
}

func TestRenameTab(t *testing.T) {
	d := New("x")
	a := mustCreate(t, &d, "slides", "A")
	b := mustCreate(t, &d, "sheet", "B")
	if err := RenameTab(&d, b.ID, "  A  "); err != nil {
		t.Fatal(err)
	}
	if err := RenameTab(&d, "markdown", "Brief"); err != nil {
		t.Fatal(err)
	}
	refs := Refs(&d)
	if refs[0].Label != "Brief" || refs[3].Label != "A" || refs[4].Label != "A" || refs[3].TabID != a.ID {
		t.Errorf("refs = %+v; want markdown renamed and two tabs labelled A", refs)
	}
	wantProblem(t, RenameTab(&d, a.ID, " \n"), problem.Invalid, "label")
	wantProblem(t, RenameTab(&d, a.ID, strings.Repeat("x", 101)), problem.Limit, "label")
	wantProblem(t, RenameTab(&d, "A", "C"), CodeUnknownTab, "tab_id")
	if tab, _ := FindTab(&d, a.ID); tab.Label != "A" {
		t.Errorf("refused rename changed the label to %q", tab.Label)
	}
}

func TestDeleteTab(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "")
	for _, fixed := range []string{"markdown", "files", "sources"} {
		wantProblem(t, DeleteTab(&d, fixed), problem.Invalid, "tab_id", "fixed tab")
	}
	wantProblem(t, DeleteTab(&d, "slides"), CodeUnknownTab, "tab_id")
	if err := DeleteTab(&d, deck.ID); err != nil {
		t.Fatal(err)
	}
	if len(d.Tabs) != 3 {
		t.Errorf("tabs = %+v", Refs(&d))
	}
	wantProblem(t, DeleteTab(&d, deck.ID), CodeUnknownTab, "tab_id")
}
