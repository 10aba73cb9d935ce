package search

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query limits.
const (
	MaxQueryRunes = 200 // a query's length, in characters
	MaxTerms      = 16  // words and phrases in one query
	// MinPrefixRunes is the shortest word that matches as a prefix: a
	// prefix of one letter would read every word of the index that starts
	// with it.
	MinPrefixRunes = 2
)

// Term is one part of a query: a word, or a phrase of words that must
// follow each other; with Prefix, its last word may be the start of a
// longer one.
type Term struct {
	Words  []string
	Prefix bool
}

// Query is a parsed query: every term must match within one unit of a
// Note (a title, a chunk of text, a slide, a block of cells, the sources,
// the files).
type Query struct {
	Terms []Term
}

// QueryError is a query that can't be searched for: what is wrong, said
// for the person or agent who wrote it.
type QueryError struct{ Reason string }

func (e *QueryError) Error() string { return e.Reason }

// Parse reads a query: words are all required ("q3 budget"), a quoted
// phrase must appear as written ("\"q3 budget\""), and a word ending in *
// may be the start of a longer word ("budg*", at least two characters).
// A word that is several words to the index (e-mail, 北京, don't) is a
// phrase of them. Everything else — FTS syntax, quotes left open, NUL —
// is text, cut into words like any other.
func Parse(q string) (Query, error) {
	if n := utf8.RuneCountInString(q); n > MaxQueryRunes {
		return Query{}, &QueryError{fmt.Sprintf("is %d characters; a search takes at most %d", n, MaxQueryRunes)}
	}
	var out Query
	add := func(text string, phrase bool) {
		prefix := false
		if !phrase {
			t := strings.TrimRight(text, "*")
			prefix = len(t) < len(text)
			text = t
		}
		var words []string
		Words(text, func(w Word) bool {
			words = append(words, w.Text)
			return len(words) <= MaxUnitWords
		})
		if len(words) == 0 {
			return
		}
		if prefix && utf8.RuneCountInString(words[len(words)-1]) < MinPrefixRunes && !unspacedWord(words[len(words)-1]) {
			prefix = false
		}
		t := Term{Words: words, Prefix: prefix}
		for _, have := range out.Terms {
			if have.Prefix == t.Prefix && slices.Equal(have.Words, t.Words) {
				return
			}
		}
		out.Terms = append(out.Terms, t)
	}
	for q != "" {
		q = strings.TrimLeftFunc(q, unicode.IsSpace)
		if q == "" {
			break
		}
		if q[0] == '"' {
			end := strings.IndexByte(q[1:], '"')
			if end < 0 {
				add(q[1:], true)
				break
			}
			add(q[1:1+end], true)
			q = q[2+end:]
			continue
		}
		end := strings.IndexFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if end < 0 {
			end = len(q)
		}
		add(q[:end], false)
		q = q[end:]
	}
	switch {
	case len(out.Terms) == 0:
		return Query{}, &QueryError{"has no word to search for: give at least one word of letters or digits"}
	case len(out.Terms) > MaxTerms:
		return Query{}, &QueryError{fmt.Sprintf("has %d words and phrases; a search takes at most %d, so leave out the common ones", len(out.Terms), MaxTerms)}
	}
	return out, nil
}

func unspacedWord(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unspaced(r)
}

// Match is where a query's terms were found in one text: the spans, in
// bytes of the text, of each term found (a phrase's whole span), in order,
// and how many distinct terms were found.
type Match struct {
	Spans [][2]int
	Found int
}

// Find looks for q's terms in text, by its words.
func (q Query) Find(text string) Match {
	var words []Word
	Words(text, func(w Word) bool {
		words = append(words, w)
		return len(words) < MaxUnitWords
	})
	var m Match
	for _, t := range q.Terms {
		found := false
		for i := 0; i+len(t.Words) <= len(words); i++ {
			if t.at(words, i) {
				m.Spans = append(m.Spans, [2]int{words[i].Start, words[i+len(t.Words)-1].End})
				found = true
			}
		}
		if found {
			m.Found++
		}
	}
	slices.SortFunc(m.Spans, func(a, b [2]int) int { return a[0] - b[0] })
	// Spans of two terms may overlap ("budget" and "budg*"): keep them
	// apart, the earlier one first.
	out := m.Spans[:0]
	for _, s := range m.Spans {
		if n := len(out); n > 0 && s[0] < out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], s[1])
			continue
		}
		out = append(out, s)
	}
	m.Spans = out
	return m
}

func (t Term) at(words []Word, i int) bool {
	last := len(t.Words) - 1
	for k, w := range t.Words {
		if k == last && t.Prefix {
			if !strings.HasPrefix(words[i+k].Text, w) {
				return false
			}
		} else if words[i+k].Text != w {
			return false
		}
	}
	return true
}

// MaxSnippetRunes is the longest snippet, its marks and ellipses included.
const MaxSnippetRunes = 200

// Mark opens and closes a match in a snippet.
const (
	MarkOpen  = "«"
	MarkClose = "»"
)

// Snippet is at most MaxSnippetRunes characters of text around its first
// span, with each span in it between MarkOpen and MarkClose, white space
// runs as one space, and "…" where text was cut.
func Snippet(text string, spans [][2]int) string {
	if len(spans) == 0 {
		return clip(flat(text), MaxSnippetRunes)
	}
	// Start a little before the first match, at a word's start.
	from := spans[0][0]
	for back := 0; from > 0 && back < 60; back++ {
		_, n := utf8.DecodeLastRuneInString(text[:from])
		from -= n
	}
	for from > 0 && from < spans[0][0] {
		r, _ := utf8.DecodeLastRuneInString(text[:from])
		if unicode.IsSpace(r) {
			break
		}
		_, n := utf8.DecodeRuneInString(text[from:])
		from += n
	}
	var b strings.Builder
	budget := MaxSnippetRunes
	if from > 0 {
		b.WriteString("…")
		budget--
	}
	pos, space := from, false
	write := func(s string) bool {
		for _, r := range s {
			if unicode.IsSpace(r) {
				if space {
					continue
				}
				r, space = ' ', true
			} else {
				space = false
			}
			if budget <= 1 {
				return false
			}
			b.WriteRune(r)
			budget--
		}
		return true
	}
	cut := false
	for _, s := range spans {
		if s[0] < pos {
			continue
		}
		if !write(text[pos:s[0]]) {
			cut = true
			break
		}
		// A mark is written whole or not at all.
		word := flat(text[s[0]:s[1]])
		if utf8.RuneCountInString(word)+2 >= budget {
			cut = true
			break
		}
		b.WriteString(MarkOpen + word + MarkClose)
		budget -= utf8.RuneCountInString(word) + 2
		space = false
		pos = s[1]
	}
	if !cut && !write(text[pos:]) {
		cut = true
	}
	out := strings.TrimRightFunc(b.String(), unicode.IsSpace)
	if cut {
		out += "…"
	}
	return out
}

// flat is s with each run of white space as one space.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip is s cut to at most n runes, with "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for k < n-1 {
		_, m := utf8.DecodeRuneInString(s[i:])
		i += m
		k++
	}
	return strings.TrimRightFunc(s[:i], unicode.IsSpace) + "…"
}
