package note

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"
)

// The line diff is a shortest edit script: applied to a it gives b, with
// as many edits as a and b do not share (n + m - 2·LCS), each stretch of
// changes removed lines first.
func TestDiffLinesIsShortest(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	lcs := func(a, b []string) int {
		l := make([][]int, len(a)+1)
		for i := range l {
			l[i] = make([]int, len(b)+1)
		}
		for i := len(a) - 1; i >= 0; i-- {
			for j := len(b) - 1; j >= 0; j-- {
				if a[i] == b[j] {
					l[i][j] = l[i+1][j+1] + 1
				} else {
					l[i][j] = max(l[i+1][j], l[i][j+1])
				}
			}
		}
		return l[0][0]
	}
	gen := func() []string {
		out := make([]string, r.Intn(12))
		for i := range out {
			out[i] = string(rune('a' + r.Intn(4)))
		}
		return out
	}
	for i := 0; i < 5000; i++ {
		a, b := gen(), gen()
		es := diffLines(a, b)
		if len(es) != len(a)+len(b)-2*lcs(a, b) {
			t.Fatalf("%v → %v: %d edits, want %d", a, b, len(es), len(a)+len(b)-2*lcs(a, b))
		}
		// Apply: keep a's lines not removed, put b's added lines at their
		// numbers.
		removed, added := map[int]bool{}, map[int]string{}
		for _, e := range es {
			if e.op == "removed" {
				if removed[e.line] || a[e.line-1] != e.text {
					t.Fatalf("%v → %v: bad removal %+v", a, b, e)
				}
				removed[e.line] = true
			} else {
				added[e.line] = e.text
			}
		}
		var kept []string
		for i, l := range a {
			if !removed[i+1] {
				kept = append(kept, l)
			}
		}
		got := make([]string, 0, len(b))
		for j := 1; j <= len(b); j++ {
			if l, ok := added[j]; ok {
				got = append(got, l)
			} else {
				got, kept = append(got, kept[0]), kept[1:]
			}
		}
		if !slices.Equal(got, b) || len(kept) != 0 {
			t.Fatalf("%v → %v: the edits %+v give %v", a, b, es, got)
		}
	}
	// A stretch replaced reads as its old lines, then its new ones.
	es := diffLines([]string{"a", "b", "c", "d"}, []string{"a", "x", "y", "d"})
	var ops []string
	for _, e := range es {
		ops = append(ops, fmt.Sprint(e.op, e.line, e.text))
	}
	if strings.Join(ops, " ") != "removed2b removed3c added2x added3y" {
		t.Fatalf("a stretch replaced reads %v", ops)
	}
}

// Past the work bound, the changed stretch is removed, then added.
func TestDiffLinesBounded(t *testing.T) {
	var a, b []string
	for i := range 30_000 {
		a = append(a, fmt.Sprint("a", i))
		b = append(b, fmt.Sprint("b", i))
	}
	es := diffLines(append([]string{"same"}, a...), append([]string{"same"}, b...))
	if len(es) != 60_000 || es[0].op != "removed" || es[0].line != 2 || es[30_000].op != "added" || es[30_000].line != 2 {
		t.Fatalf("%d edits, first %+v", len(es), es[0])
	}
}

func TestCellAddress(t *testing.T) {
	for _, c := range []struct {
		r, c int
		want string
	}{{0, 0, "A1"}, {2, 1, "B3"}, {0, 25, "Z1"}, {0, 26, "AA1"}, {9, 701, "ZZ10"}, {0, 702, "AAA1"}, {999, 999, "ALL1000"}} {
		if got := CellAddress(c.r, c.c); got != c.want {
			t.Errorf("CellAddress(%d, %d) = %s, want %s", c.r, c.c, got, c.want)
		}
	}
}

func mustSide(t *testing.T, d *Doc) Side {
	t.Helper()
	s, err := Stored(d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// What two versions differ in, tab by tab: the title, the strip (added,
// deleted, renamed, moved), lines, cells, sheets, slides and sources.
func TestDiffVersionsSaysWhatChanged(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := New("Budget")
	a.Markdown = "# Plan\n\nOne.\nTwo.\nThree.\n"
	grid, err := CreateTab(&a, TypeSheet, "Numbers", nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SheetSetRange(&a, grid.ID, "", 0, 0, [][]any{{1.0, "x"}, {true, nil}}); err != nil {
		t.Fatal(err)
	}
	deck, err := CreateTab(&a, TypeSlides, "Deck", []SlideInput{{Title: "One"}, {Title: "Two"}, {Title: "Three"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := CreateTab(&a, TypeSlides, "Old deck", []SlideInput{{Title: "Bye"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := AddSource(&a, "First", "https://example.com/a", now); err != nil {
		t.Fatal(err)
	}
	b := Clone(&a)
	b.Title = "Budget 2027"
	b.Markdown = "# Plan\n\nOne.\n2.\nThree.\nFour.\n"
	if _, err := SheetSetRange(&b, grid.ID, "", 1, 0, [][]any{{false}}); err != nil {
		t.Fatal(err)
	}
	if _, err := SheetSetRange(&b, grid.ID, "", 40, 33, [][]any{{"far"}}); err != nil {
		t.Fatal(err)
	}
	dt, _ := FindTab(&b, deck.ID)
	dt.Slides = slices.Clone(dt.Slides)
	dt.Slides[1].Body = "a body"
	dt.Slides[0], dt.Slides[2] = dt.Slides[2], dt.Slides[0]
	dt.Slides = dt.Slides[:2]
	if err := RenameTab(&b, grid.ID, "Figures"); err != nil {
		t.Fatal(err)
	}
	if err := DeleteTab(&b, gone.ID); err != nil {
		t.Fatal(err)
	}
	src, _, err := AddSource(&b, "Second", "https://example.com/b", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := MoveTab(&b, TypeMarkdown, len(b.Tabs)-1); err != nil {
		t.Fatal(err)
	}

	got, err := DiffVersions(mustSide(t, &a), mustSide(t, &b))
	if err != nil {
		t.Fatal(err)
	}
	if got.Title == nil || got.Title.Before != "Budget" || got.Title.After != "Budget 2027" {
		t.Errorf("title: %+v", got.Title)
	}
	tabs := map[string]TabDiff{}
	for _, td := range got.Tabs {
		tabs[td.TabID] = td
	}
	md := tabs[TypeMarkdown]
	var lines []string
	for _, l := range md.Lines {
		lines = append(lines, fmt.Sprint(l.Op, " ", l.Line, " ", l.Text))
	}
	if strings.Join(lines, "|") != "removed 4 Two.|added 4 2.|added 6 Four." || !md.Moved {
		t.Errorf("markdown: %v, moved %v", lines, md.Moved)
	}
	g := tabs[grid.ID]
	var cells []string
	for _, c := range g.Cells {
		cells = append(cells, fmt.Sprintf("%s:%v→%v", c.Address, c.Before, c.After))
	}
	if strings.Join(cells, " ") != "A2:true→false AH41:<nil>→far" || g.LabelBefore == nil || *g.LabelBefore != "Numbers" || g.Label != "Figures" {
		t.Errorf("sheet: %v, label %q (before %v)", cells, g.Label, g.LabelBefore)
	}
	var slides []string
	for _, s := range tabs[deck.ID].Slides {
		f := ""
		for _, x := range s.Fields {
			f += fmt.Sprintf(" %s=%q", x.Field, x.After)
		}
		if s.Moved {
			f += " (moved)"
		}
		slides = append(slides, s.Change+" "+s.Name+f)
	}
	// Three and Two swapped places: one of them is the one that moved.
	if j := strings.Join(slides, "|"); j != `moved Three|changed Two body="a body"|deleted One` && j != `changed Two body="a body" (moved)|deleted One` {
		t.Errorf("slides: %v", slides)
	}
	if d := tabs[gone.ID]; d.Change != "deleted" || len(d.Slides) != 1 || d.Slides[0].Change != "deleted" || d.Slides[0].Name != "Bye" {
		t.Errorf("the deleted deck: %+v", d)
	}
	if s := tabs[TypeSources]; len(s.Items) != 1 || s.Items[0].Change != "added" || s.Items[0].ID != src.ID || s.Items[0].Name != "Second" {
		t.Errorf("sources: %+v", s.Items)
	}
	if _, ok := tabs[TypeFiles]; ok {
		t.Errorf("the files tab did not change, and is listed: %+v", tabs[TypeFiles])
	}
	if got.Omitted != 0 || got.Changes != 1+4+3+len(slides)+2+1 {
		t.Errorf("changes %d, omitted %d", got.Changes, got.Omitted)
	}

	// No change: nothing. The first version: what it holds, not its empty tabs.
	if same, err := DiffVersions(mustSide(t, &b), mustSide(t, &b)); err != nil || same.Changes != 0 || len(same.Tabs) != 0 || same.Title != nil {
		t.Errorf("a version against itself: %+v, %v", same, err)
	}
	first, err := DiffVersions(Side{}, mustSide(t, &a))
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range first.Tabs {
		if td.Change != "added" || td.Changes == 0 || td.TabID == TypeFiles {
			t.Errorf("the first version lists %+v", td)
		}
	}
}

// A huge change is listed up to MaxDiffEntries, the rest counted.
func TestDiffVersionsIsBounded(t *testing.T) {
	a := New("Big")
	grid, err := CreateTab(&a, TypeSheet, "", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b := Clone(&a)
	vals := make([][]any, 100)
	for i := range vals {
		vals[i] = make([]any, 100)
		for j := range vals[i] {
			vals[i][j] = float64(i*100 + j)
		}
	}
	if _, err := SheetSetRange(&b, grid.ID, "", 0, 0, vals); err != nil {
		t.Fatal(err)
	}
	b.Markdown = strings.Repeat("a line\n", 500) + strings.Repeat("x", 2000)
	got, err := DiffVersions(mustSide(t, &a), mustSide(t, &b))
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, td := range got.Tabs {
		listed += len(td.Lines) + len(td.Cells)
		for _, l := range td.Lines {
			if len([]rune(l.Text)) > MaxDiffText+1 {
				t.Fatalf("a line of %d runes is shown whole", len([]rune(l.Text)))
			}
		}
	}
	if listed != MaxDiffEntries || got.Changes != 10_000+501 || got.Omitted != got.Changes-MaxDiffEntries {
		t.Fatalf("listed %d, changes %d, omitted %d", listed, got.Changes, got.Omitted)
	}
	if c := got.Tabs[0]; c.TabID != TypeMarkdown || len(c.Lines) != MaxDiffEntries || c.Omitted != 301 {
		t.Fatalf("the markdown tab lists %d lines, omits %d", len(c.Lines), c.Omitted)
	}
}
