package note

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"foundry/internal/problem"
)

// Exact replacements in the markdown tab (edit_note_text): an agent sends
// what to replace and with what, never the whole text. Each old_text must
// occur exactly once in the text as the edits before it left it, so an edit
// lands where its author saw the text or not at all.

// TextEdit is one replacement: the one occurrence of OldText becomes NewText.
type TextEdit struct {
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
}

// Limits of one edit_note_text call. Even with every character sent as a
// \uXXXX escape, 20 edits of two 64 KiB texts fit the 16 MiB request body.
const (
	MaxTextEdits     = 20       // edits in one call
	MaxEditTextBytes = 64 << 10 // old_text and new_text, each, in UTF-8
)

// Refusals of an edit whose old_text does not occur exactly once. They
// depend on the text, so on the version: the same edit may apply to another.
const (
	CodeTextNotFound  = "old_text_not_found"
	CodeTextNotUnique = "old_text_not_unique"
)

// How much of the text a refusal shows around a place: at most
// excerptRunes characters on each side, at most maxPlaces places.
const (
	excerptRunes = 60
	maxPlaces    = 3
)

// TextPlace is a place in the text a refusal points at: its line (1-based)
// and the text just before and after it, cut at character boundaries.
type TextPlace struct {
	Line   int    `json:"line"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// CheckTextEdits applies the rules of the edits themselves, which hold in
// every version of the Note: 1–20 edits, each old_text non-empty, both texts
// valid UTF-8 and at most MaxEditTextBytes.
func CheckTextEdits(edits []TextEdit) error {
	if len(edits) == 0 {
		return problem.New(problem.Invalid, "edits", "send 1–%d edits of {old_text, new_text}", MaxTextEdits)
	}
	if len(edits) > MaxTextEdits {
		return problem.New(problem.Limit, "edits", "%d edits; at most %d in one call: send the rest in another call", len(edits), MaxTextEdits)
	}
	for i, e := range edits {
		for _, f := range []struct{ name, s string }{{"old_text", e.OldText}, {"new_text", e.NewText}} {
			field := fmt.Sprintf("edits[%d].%s", i, f.name)
			if !utf8.ValidString(f.s) {
				return problem.New(problem.Invalid, field, "is not valid UTF-8")
			}
			if len(f.s) > MaxEditTextBytes {
				return problem.New(problem.Limit, field, "is %d bytes in UTF-8; at most %d bytes (64 KiB) per text: split the edit, or replace the whole text for a rewrite", len(f.s), MaxEditTextBytes)
			}
		}
		if e.OldText == "" {
			return problem.New(problem.Invalid, fmt.Sprintf("edits[%d].old_text", i), "is empty; it must be text that occurs exactly once in the markdown tab")
		}
	}
	return nil
}

// EditText applies edits to text in order, each to the text as the edits
// before it left it, and returns the result. It refuses the whole call,
// naming edits[i].old_text, when an old_text is not found
// (CodeTextNotFound, with the closest place) or found more than once
// (CodeTextNotUnique, with up to three of the places); and a result over
// MaxMarkdownBytes (field edits).
func EditText(text string, edits []TextEdit) (string, error) {
	if err := CheckTextEdits(edits); err != nil {
		return "", err
	}
	for i, e := range edits {
		at, n := find(text, e.OldText)
		if n != 1 {
			return "", matchProblem(text, e.OldText, i, n)
		}
		text = text[:at] + e.NewText + text[at+len(e.OldText):]
	}
	if len(text) > MaxMarkdownBytes {
		return "", problem.New(problem.Limit, "edits",
			"the markdown tab would be %d bytes in UTF-8; it holds at most %d bytes (1 MiB markdown limit)", len(text), MaxMarkdownBytes)
	}
	return text, nil
}

// MatchEdits says how often each edit's old_text occurs in text, in order,
// each in the text as the edits before it that apply (found exactly once)
// left it; an edit that does not apply leaves the text as it was for the
// next. All ones: EditText(text, edits) applies every edit.
func MatchEdits(text string, edits []TextEdit) []int {
	counts := make([]int, len(edits))
	for i, e := range edits {
		if e.OldText == "" {
			continue
		}
		at, n := find(text, e.OldText)
		counts[i] = n
		if n == 1 {
			text = text[:at] + e.NewText + text[at+len(e.OldText):]
		}
	}
	return counts
}

// find returns the byte offset of the first occurrence of old in text and
// how many times old occurs. Occurrences are counted without overlap, as
// strings.Count does (linear time), except that an old that occurs once
// and again overlapping itself ("aa" in "aaa") counts 2: it does not name
// one place.
func find(text, old string) (at, n int) {
	at = strings.Index(text, old)
	if at < 0 {
		return -1, 0
	}
	n = strings.Count(text[at:], old)
	if n == 1 && strings.Contains(text[at+1:], old) {
		n = 2
	}
	return at, n
}

// matchProblem is the refusal of edits[i], whose old_text occurs n times
// (n ≠ 1) in text.
func matchProblem(text, old string, i, n int) *problem.Problem {
	field := fmt.Sprintf("edits[%d].old_text", i)
	if n == 0 {
		p := problem.New(CodeTextNotFound, field, "is not found in the markdown tab")
		if c, ok := closest(text, old); ok {
			p.Message += fmt.Sprintf("; the nearest match is its %s at line %d, where the text reads %s",
				c.what, c.place.Line, Quote(c.place.Before)+" | "+Quote(c.place.After))
			p.With("closest", c.place).With("matched_chars", c.runes)
		}
		p.Message += "; old_text must match the current text exactly, spaces and line breaks included"
		return p
	}
	places := occurrences(text, old, maxPlaces)
	var lines []string
	for j, pl := range places {
		if j == 0 || pl.Line != places[j-1].Line {
			lines = append(lines, fmt.Sprint(pl.Line))
		}
	}
	where := "line"
	if len(lines) > 1 {
		where = "lines"
	}
	if n > len(places) {
		lines = append(lines, "…")
	}
	return problem.New(CodeTextNotUnique, field,
		"is found %d times in the markdown tab (at %s %s); it must occur exactly once: include more of the text around it",
		n, where, strings.Join(lines, ", ")).With("matches", n).With("candidates", places)
}

// occurrences returns the places of the first limit occurrences of old
// (before: the text before the occurrence, after: the text after it).
func occurrences(text, old string, limit int) []TextPlace {
	var out []TextPlace
	for from := 0; len(out) < limit; {
		j := strings.Index(text[from:], old)
		if j < 0 {
			break
		}
		at := from + j
		out = append(out, place(text, at, at+len(old)))
		// The next one may overlap this one (find counts that as two).
		_, size := utf8.DecodeRuneInString(text[at:])
		from = at + size
	}
	return out
}

// place is the place between the excerpt before byte offset start and the
// one after byte offset end, with the line of start.
func place(text string, start, end int) TextPlace {
	b := start
	for n := 0; n < excerptRunes && b > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(text[:b])
		b -= size
	}
	e := end
	for n := 0; n < excerptRunes && e < len(text); n++ {
		_, size := utf8.DecodeRuneInString(text[e:])
		e += size
	}
	return TextPlace{Line: strings.Count(text[:start], "\n") + 1, Before: text[b:start], After: text[end:e]}
}

type nearest struct {
	place TextPlace // split where the text stops matching old
	runes int       // how many characters of old match there
	what  string    // "first 12 of 40 characters", for the message
}

// closest finds where the text comes nearest to old: the longest prefix or
// suffix of old (whole characters) that occurs in it, at its first
// occurrence. The place splits where the text goes its own way: after the
// matched prefix, or before the matched suffix. ok is false when no part
// worth showing matches (fewer than 4 characters, or under half of a
// short old).
func closest(text, old string) (nearest, bool) {
	starts := make([]int, 0, len(old)) // byte offset of each character of old, and len(old)
	for i := range old {
		starts = append(starts, i)
	}
	runes := len(starts)
	starts = append(starts, len(old))
	// The longest prefix and the longest suffix that occur: whether one
	// of k characters occurs is monotone in k, so a binary search finds it
	// in O(log len(old)) scans of the text.
	longest := func(occurs func(k int) bool) int {
		lo, hi := 0, runes-1 // all of old does not occur
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if occurs(mid) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return lo
	}
	pre := longest(func(k int) bool { return strings.Contains(text, old[:starts[k]]) })
	suf := longest(func(k int) bool { return strings.Contains(text, old[starts[runes-k]:]) })
	k := max(pre, suf)
	if k < 4 && 2*k <= runes {
		return nearest{}, false
	}
	if pre >= suf {
		at := strings.Index(text, old[:starts[pre]])
		end := at + starts[pre]
		return nearest{place: place(text, end, end), runes: pre, what: fmt.Sprintf("first %d of %d characters", pre, runes)}, true
	}
	tail := old[starts[runes-suf]:]
	at := strings.Index(text, tail)
	return nearest{place: place(text, at, at), runes: suf, what: fmt.Sprintf("last %d of %d characters", suf, runes)}, true
}
