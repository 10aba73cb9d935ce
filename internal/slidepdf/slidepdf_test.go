package slidepdf_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"foundry/internal/note"
	"foundry/internal/slidepdf"
)

var when = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

// deck has a slide in every layout and theme, one with more body than a
// page holds, and one in scripts the Go fonts do not cover.
func deck() []note.Slide {
	long := strings.Repeat("- A bullet that goes on for a while so that the lines wrap\n", 40)
	return []note.Slide{
		{Title: "Launch overview", Body: "- Why now\n- What ships\n- Who it is for"},
		{Title: "Foundry", Body: "Notes and Rooms", Layout: "title", Theme: "ink"},
		{Title: "Part two", Body: "The numbers", Layout: "section", Theme: "ocean"},
		{Title: "Before and after", Body: "Sign-ups doubled\n---\nChurn halved", Layout: "two-column", Theme: "forest"},
		{Title: "Ada Lovelace", Body: "The engine weaves algebraic patterns.", Layout: "quote", Theme: "sunset"},
		{Title: "Too much", Body: long},
		{Title: "Ringkasan · सारांश · 摘要", Body: "Ελληνικά и кириллица"},
		{Title: "", Body: ""},
	}
}

func TestRenderPagesAndBytes(t *testing.T) {
	r, err := slidepdf.Render("Launch", deck(), when)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(r.PDF, []byte("%PDF-")) || !bytes.Contains(r.PDF[len(r.PDF)-64:], []byte("%%EOF")) {
		t.Fatalf("the output is not a whole PDF: %q…%q", r.PDF[:16], r.PDF[len(r.PDF)-16:])
	}
	if r.Pages != len(deck()) {
		t.Errorf("%d pages for %d slides", r.Pages, len(deck()))
	}
	if n := len(regexp.MustCompile(`/Type /Page\b[^s]`).FindAll(r.PDF, -1)); n != len(deck()) {
		t.Errorf("the file has %d page objects, want %d", n, len(deck()))
	}
	// Devanagari (सारांश, 6 characters) and the three CJK ones (摘要 is
	// two) are not in the Go fonts; Greek and Cyrillic are.
	if r.Missing != 8 {
		t.Errorf("missing glyphs: %d, want 8 (सारांश and 摘要)", r.Missing)
	}
	again, err := slidepdf.Render("Launch", deck(), when)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.PDF, r.PDF) {
		t.Errorf("the same deck at the same time gave different bytes")
	}
	empty, err := slidepdf.Render("Nothing yet", nil, when)
	if err != nil || empty.Pages != 1 {
		t.Errorf("an empty deck: %d pages, %v; want one page saying so", empty.Pages, err)
	}
}

// TestRenderReadsBack reads the PDF with poppler (pdfinfo, pdftotext):
// the page size, the text of each page in order, and a long body cut at
// the page's edge rather than spilling onto another page.
func TestRenderReadsBack(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("FOUNDRY_TEST_POPPLER") == "required" {
			t.Fatal("FOUNDRY_TEST_POPPLER=required but pdftotext is not on PATH: install Debian's poppler-utils package")
		}
		t.Skip("pdftotext is not on PATH (Debian's poppler-utils package); set FOUNDRY_TEST_POPPLER=required to fail instead")
	}
	r, err := slidepdf.Render("Launch", deck(), when)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "deck.pdf")
	if err := os.WriteFile(file, r.PDF, 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := exec.Command("pdfinfo", file).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfinfo: %v\n%s", err, info)
	}
	for _, want := range []string{"Title:           Launch", "Pages:           8", "Page size:       841.89 x 473.39 pts"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("pdfinfo does not say %q:\n%s", want, info)
		}
	}
	out, err := exec.Command("pdftotext", "-layout", file, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	pages := strings.Split(string(out), "\f")
	want := [][]string{
		{"Launch overview", "• Why now", "• Who it is for"},
		{"Foundry", "Notes and Rooms"},
		{"Part two", "The numbers"},
		{"Before and after", "Sign-ups doubled", "Churn halved"},
		{"engine weaves algebraic", "patterns.", "— Ada Lovelace"},
		{"Too much", "A bullet that goes on"},
		{"Ringkasan", "Ελληνικά и кириллица"},
		{"Untitled slide"},
	}
	for i, words := range want {
		if i >= len(pages) {
			t.Fatalf("pdftotext found %d pages", len(pages))
		}
		for _, w := range words {
			if !strings.Contains(pages[i], w) {
				t.Errorf("page %d lacks %q:\n%s", i+1, w, pages[i])
			}
		}
	}
	if n := strings.Count(pages[5], "A bullet"); n < 5 || n >= 40 {
		t.Errorf("the long slide shows %d of its 40 bullets: want those that fit, cut at the page", n)
	}
}

// FuzzRender: no body, title, layout or theme makes Render panic or give
// a page count other than the slides'.
func FuzzRender(f *testing.F) {
	f.Add("Title", "- a\n- b\n\npara\n---\nright", "two-column", "ink")
	f.Add("", "\n\n\n", "quote", "")
	f.Add("摘要 \u202e\u0000", "* \t•  x", "section", "ocean")
	f.Fuzz(func(t *testing.T, title, body, layout, theme string) {
		r, err := slidepdf.Render(title, []note.Slide{{Title: title, Body: body, Layout: layout, Theme: theme}, {Title: title}}, when)
		if err != nil {
			t.Fatal(err)
		}
		if r.Pages != 2 {
			t.Fatalf("%d pages for 2 slides", r.Pages)
		}
	})
}

func TestBlocksAndColumns(t *testing.T) {
	got := fmt.Sprintf("%+v", slidepdf.Blocks("intro\n- one\n* two\n•  three\n\nafter\n-not a bullet"))
	if want := "[{Bullets:false Lines:[intro]} {Bullets:true Lines:[one two three]} {Bullets:false Lines:[after -not a bullet]}]"; got != want {
		t.Errorf("blocks\n%s\nwant\n%s", got, want)
	}
	a, b := slidepdf.Columns("left\n---\nright")
	if a != "left" || b != "right" {
		t.Errorf("columns at ---: %q | %q", a, b)
	}
	a, b = slidepdf.Columns("one\n\ntwo\n\nthree")
	if a != "one\n\ntwo" || b != "three" {
		t.Errorf("columns at blank lines: %q | %q", a, b)
	}
}

// BenchmarkRender: a typical deck of 20 slides, and the largest a tab
// holds (200 slides, each body 20,000 characters: wrapped, then cut at
// the page).
func BenchmarkRender(b *testing.B) {
	for _, c := range []struct {
		name   string
		slides int
		body   string
	}{
		{"20-slides", 20, "- Why now\n- What ships\n- Who it is for\nA paragraph that wraps over the width of the slide once or twice."},
		{"200-slides-max-body", 200, strings.Repeat("word ", note.MaxSlideTextRunes/5)},
	} {
		b.Run(c.name, func(b *testing.B) {
			deck := make([]note.Slide, c.slides)
			for i := range deck {
				deck[i] = note.Slide{Title: "A slide title", Body: c.body, Theme: note.SlideThemes[i%len(note.SlideThemes)], Layout: note.SlideLayouts[i%len(note.SlideLayouts)]}
			}
			var size int
			for b.Loop() {
				r, err := slidepdf.Render("Bench", deck, when)
				if err != nil {
					b.Fatal(err)
				}
				size = len(r.PDF)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/deck")
			b.ReportMetric(float64(size)/1024, "KB/deck")
		})
	}
}
