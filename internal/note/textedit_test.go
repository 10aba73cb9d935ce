package note

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"foundry/internal/problem"
)

func TestEditTextReplacesTheOneOccurrence(t *testing.T) {
	got, err := EditText("# Plan\n\nShip in May.\n", []TextEdit{{OldText: "May", NewText: "June"}})
	if err != nil || got != "# Plan\n\nShip in June.\n" {
		t.Fatalf("EditText = %q, %v", got, err)
	}
	// new_text may be empty (a deletion) or equal old_text (no change).
	got, err = EditText("a, b, c", []TextEdit{{OldText: ", b", NewText: ""}, {OldText: "c", NewText: "c"}})
	if err != nil || got != "a, c" {
		t.Fatalf("EditText = %q, %v", got, err)
	}
}

// Each edit sees the text as the previous ones left it: an old_text may
// name what an earlier edit wrote, and one an earlier edit removed is gone.
func TestEditTextAppliesEditsInOrder(t *testing.T) {
	got, err := EditText("one two", []TextEdit{
		{OldText: "one", NewText: "three"},
		{OldText: "three two", NewText: "four"}, // only there after the first edit
	})
	if err != nil || got != "four" {
		t.Fatalf("EditText = %q, %v", got, err)
	}
	// The first edit makes "x" occur twice, so the second is ambiguous.
	_, err = EditText("x y", []TextEdit{{OldText: "y", NewText: "x"}, {OldText: "x", NewText: "z"}})
	wantProblem(t, err, CodeTextNotUnique, "edits[1].old_text", "found 2 times")
	// The first edit removed what the second names.
	_, err = EditText("x y", []TextEdit{{OldText: "y", NewText: ""}, {OldText: "y", NewText: "z"}})
	wantProblem(t, err, CodeTextNotFound, "edits[1].old_text", "not found")
}

func TestEditTextNotFoundShowsTheClosestPlace(t *testing.T) {
	text := "# Notes\n\nThe launch is planned for the first week of May, after review.\n"
	// The text says "first week of May"; old_text says "first week in May".
	_, err := EditText(text, []TextEdit{{OldText: "launch", NewText: "release"}, {OldText: "planned for the first week in May", NewText: "x"}})
	p := wantProblem(t, err, CodeTextNotFound, "edits[1].old_text", "not found", "first 27 of 33 characters", "line 3", "match the current text exactly")
	c, ok := p.Details["closest"].(TextPlace)
	if !ok {
		t.Fatalf("closest = %#v", p.Details["closest"])
	}
	if c.Line != 3 || !strings.HasSuffix(c.Before, "planned for the first week ") || !strings.HasPrefix(c.After, "of May, after review.") {
		t.Errorf("closest = %+v; want it split where the text goes on \"of May\"", c)
	}
	if p.Details["matched_chars"] != 27 {
		t.Errorf("matched_chars = %v, want 27", p.Details["matched_chars"])
	}
	// The start differs: the longest matching suffix is the nearest place.
	_, err = EditText(text, []TextEdit{{OldText: "The start is planned for the first week of May", NewText: "x"}})
	p = wantProblem(t, err, CodeTextNotFound, "edits[0].old_text", "last 37 of 46 characters")
	if c := p.Details["closest"].(TextPlace); c.Before != "# Notes\n\nThe launch" || !strings.HasPrefix(c.After, " is planned") {
		t.Errorf("closest = %+v; want it split before the matched suffix", c)
	}
	// Nothing worth showing matches: no place, still "not found".
	_, err = EditText(text, []TextEdit{{OldText: "zzzz qqqq", NewText: "x"}})
	p = wantProblem(t, err, CodeTextNotFound, "edits[0].old_text", "not found")
	if _, ok := p.Details["closest"]; ok {
		t.Errorf("a place was shown for a text that shares nothing with old_text: %v", p.Details)
	}
}

func TestEditTextFoundManyTimesShowsCandidates(t *testing.T) {
	var b strings.Builder
	for i := range 5 {
		b.WriteString("line " + string(rune('A'+i)) + ": TODO check\n")
	}
	_, err := EditText(b.String(), []TextEdit{{OldText: "TODO", NewText: "DONE"}})
	p := wantProblem(t, err, CodeTextNotUnique, "edits[0].old_text", "found 5 times", "lines 1, 2, 3, …", "exactly once")
	if p.Details["matches"] != 5 {
		t.Errorf("matches = %v, want 5", p.Details["matches"])
	}
	cands := p.Details["candidates"].([]TextPlace)
	if len(cands) != 3 {
		t.Fatalf("%d candidates, want at most 3: %+v", len(cands), cands)
	}
	for i, c := range cands {
		want := "line " + string(rune('A'+i)) + ": "
		if c.Line != i+1 || !strings.HasSuffix(c.Before, want) || !strings.HasPrefix(c.After, " check\n") {
			t.Errorf("candidate %d = %+v", i, c)
		}
	}
	// An old_text that overlaps itself names no one place either.
	_, err = EditText("aaa", []TextEdit{{OldText: "aa", NewText: "b"}})
	p = wantProblem(t, err, CodeTextNotUnique, "edits[0].old_text", "found 2 times", "(at line 1)")
	if c := p.Details["candidates"].([]TextPlace); len(c) != 2 || c[0].After != "a" || c[1].Before != "a" {
		t.Errorf("overlapping candidates = %+v", c)
	}
}

// Excerpts are at most 60 characters each side and never split a
// character, whatever its size in UTF-8.
func TestEditTextExcerptsKeepWholeCharacters(t *testing.T) {
	side := strings.Repeat("é😀中a", 40) // 160 characters of 1 to 4 bytes
	text := side + "MARK" + side + "\n" + side + "MARK" + side
	_, err := EditText(text, []TextEdit{{OldText: "MARK", NewText: "x"}})
	p := wantProblem(t, err, CodeTextNotUnique, "edits[0].old_text", "found 2 times")
	for _, c := range p.Details["candidates"].([]TextPlace) {
		for _, s := range []string{c.Before, c.After} {
			if !utf8.ValidString(s) || utf8.RuneCountInString(s) != excerptRunes {
				t.Errorf("excerpt %q: valid %v, %d characters; want whole characters, exactly %d", s, utf8.ValidString(s), utf8.RuneCountInString(s), excerptRunes)
			}
		}
	}
	// The closest place of a near miss, inside multi-byte text.
	_, err = EditText(text, []TextEdit{{OldText: "中aMARK" + "é😀中X", NewText: "x"}})
	p = wantProblem(t, err, CodeTextNotFound, "edits[0].old_text", "first 9 of 10 characters")
	c := p.Details["closest"].(TextPlace)
	if !utf8.ValidString(c.Before) || !utf8.ValidString(c.After) || !strings.HasSuffix(c.Before, "MARKé😀中") || !strings.HasPrefix(c.After, "a") {
		t.Errorf("closest = %+v", c)
	}
	if !utf8.ValidString(p.Message) {
		t.Errorf("message is not valid UTF-8: %q", p.Message)
	}
	// Unicode text is edited by exact bytes.
	got, err := EditText("naïve café 👨‍👩‍👧", []TextEdit{{OldText: "café 👨‍👩‍👧", NewText: "bistro 🍷"}})
	if err != nil || got != "naïve bistro 🍷" {
		t.Errorf("EditText = %q, %v", got, err)
	}
}

func TestEditTextLimits(t *testing.T) {
	one := []TextEdit{{OldText: "a", NewText: "b"}}
	_, err := EditText("a", nil)
	wantProblem(t, err, problem.Invalid, "edits", "1–20")
	many := make([]TextEdit, MaxTextEdits+1)
	for i := range many {
		many[i] = one[0]
	}
	_, err = EditText("a", many)
	wantProblem(t, err, problem.Limit, "edits", "21 edits", "at most 20")
	_, err = EditText("a", []TextEdit{one[0], {OldText: "", NewText: "x"}})
	wantProblem(t, err, problem.Invalid, "edits[1].old_text", "is empty")
	_, err = EditText("a", []TextEdit{{OldText: "a", NewText: strings.Repeat("é", MaxEditTextBytes/2+1)}})
	wantProblem(t, err, problem.Limit, "edits[0].new_text", "65538 bytes", "at most 65536 bytes")
	_, err = EditText("a", []TextEdit{{OldText: strings.Repeat("a", MaxEditTextBytes+1), NewText: ""}})
	wantProblem(t, err, problem.Limit, "edits[0].old_text", "at most 65536 bytes")
	_, err = EditText("a", []TextEdit{{OldText: "a\xff", NewText: ""}})
	wantProblem(t, err, problem.Invalid, "edits[0].old_text", "UTF-8")

	// The result obeys the markdown limit; a result at the limit is fine,
	// and so is a text that shrinks.
	full := strings.Repeat("x", MaxMarkdownBytes-1) + "a"
	if got, err := EditText(full, []TextEdit{{OldText: "a", NewText: "b"}}); err != nil || len(got) != MaxMarkdownBytes {
		t.Fatalf("an edit at the limit: %d bytes, %v", len(got), err)
	}
	_, err = EditText(full, []TextEdit{{OldText: "a", NewText: "bc"}})
	wantProblem(t, err, problem.Limit, "edits", "1048577 bytes", "1 MiB markdown limit")
}

func TestMatchEditsSaysWhatStillApplies(t *testing.T) {
	text := "alpha beta gamma beta"
	got := MatchEdits(text, []TextEdit{
		{OldText: "alpha", NewText: "ALPHA"}, // once
		{OldText: "beta", NewText: "x"},      // twice: skipped
		{OldText: "delta", NewText: "x"},     // never
		{OldText: "ALPHA gamma", NewText: "x"},
		{OldText: "ALPHA beta", NewText: "x"}, // sees the first edit, not the skipped second
	})
	if want := []int{1, 2, 0, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("MatchEdits = %v, want %v", got, want)
	}
}

// find agrees with a naive count of every start position (overlapping
// ones included) on whether old occurs exactly once, and EditText with a
// naive replacement, over random small texts.
func TestEditTextAgreesWithNaiveModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "é", "😀", "\n"}
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 5000 {
		text, old, repl := word(rng.IntN(12)), word(1+rng.IntN(3)), word(rng.IntN(3))
		starts := []int{}
		for i := 0; i+len(old) <= len(text); i++ {
			if text[i:i+len(old)] == old {
				starts = append(starts, i)
			}
		}
		got, err := EditText(text, []TextEdit{{OldText: old, NewText: repl}})
		switch {
		case len(starts) == 1:
			want := text[:starts[0]] + repl + text[starts[0]+len(old):]
			if err != nil || got != want {
				t.Fatalf("EditText(%q, %q→%q) = %q, %v; want %q", text, old, repl, got, err, want)
			}
		case err == nil:
			t.Fatalf("EditText(%q, %q) applied; old occurs at %v", text, old, starts)
		}
	}
}

// BenchmarkEditText: one one-character edit near the end of a 1 KiB and of
// a 1 MiB text (the edit has to find its old_text and prove it unique, so
// it reads the whole text once; the result is one copy of it).
func BenchmarkEditText(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		text := strings.Repeat("Lorem ipsum dolor sit amet.\n", (size-64)/28) + "The end is near.\n"
		edit := []TextEdit{{OldText: "end is near", NewText: "end is dear"}}
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := EditText(text, edit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
