// Package search is what Foundry's full-text search means by a word, a
// query and a match, decided once in Go so that both databases answer the
// same: the index of each store holds the words this package cuts a text
// into, already folded, and each store is asked for exactly the terms this
// package parsed from a query. Neither database's own idea of a word
// (SQLite's unicode61 tables, PostgreSQL's parser and locale) takes part:
// SQLite's FTS5 reads the words with its ascii tokenizer (which splits only
// at the spaces this package puts between them, since no word holds ASCII
// punctuation) and PostgreSQL is given them as a ready tsvector.
//
// A word is a run of letters and digits, case folded, with the accents of
// Latin, Greek, Cyrillic, Arabic and Hebrew letters removed ("Ärger" and
// "arger" are one word); the marks of other scripts are kept, as they
// spell the word (Devanagari vowel signs). Scripts written without spaces
// (Han, kana, Thai, Lao, Khmer, Myanmar) have each character as a word, so a
// query finds "北京" as the phrase of 北 and 京, in any text, without a
// dictionary. Other symbols (emoji, €) are a word each. Nothing else is
// part of a word.
package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of what the index holds of a text. Both stores cut the same way,
// because this package cuts before either sees it.
const (
	// MaxWordRunes is the longest word kept: the runes after it are part
	// of the same word but not of what is indexed.
	MaxWordRunes = 32
	// MaxUnitWords is how many words of one unit (a chunk of text, a
	// slide, a block of cells) are indexed; PostgreSQL records positions
	// up to 16,383 only.
	MaxUnitWords = 16_000
)

// Word is one word of a text: its folded form and where it was, in bytes
// of the original text.
type Word struct {
	Text       string
	Start, End int
}

// folded says whether marks on letters of script s are accents to drop.
func folded(r rune) bool {
	return unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Arabic, unicode.Hebrew)
}

// unspaced says whether r is of a script written without spaces between
// words: each of its characters is a word.
func unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao,
		unicode.Khmer, unicode.Myanmar, unicode.Tibetan, unicode.Bopomofo, unicode.Yi)
}

// cutter builds words one rune at a time.
type cutter struct {
	buf        []rune
	start, end int
	single     bool // the word is one character of an unspaced script or a symbol
	foldMarks  bool // marks that follow are accents of the last letter
	n          int  // runes taken into buf (at most MaxWordRunes)
	emit       func(Word) bool
	stopped    bool
}

func (c *cutter) flush() {
	if len(c.buf) == 0 || c.stopped {
		c.buf = c.buf[:0]
		return
	}
	s := string(c.buf)
	if !isASCII(s) {
		s = norm.NFC.String(s)
	}
	c.buf, c.n, c.single = c.buf[:0], 0, false
	if !c.emit(Word{Text: s, Start: c.start, End: c.end}) {
		c.stopped = true
	}
}

func (c *cutter) add(r rune, at, end int) {
	if len(c.buf) == 0 {
		c.start = at
	}
	c.end = end
	if c.n < MaxWordRunes {
		c.buf = append(c.buf, r)
		c.n++
	}
}

// take is one rune of the text after decomposition, at [at, end) of the
// original.
func (c *cutter) take(r rune, at, end int) {
	switch {
	case unicode.Is(unicode.Variation_Selector, r), unicode.Is(unicode.Cf, r), r == 'ـ', unicode.Is(unicode.Sk, r):
		// Invisible joiners, presentation selectors, tatweel, emoji
		// modifiers: not part of what is spelled.
		if len(c.buf) > 0 {
			c.end = end
		}
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc):
		if c.foldMarks || len(c.buf) == 0 {
			if len(c.buf) > 0 {
				c.end = end
			}
			return
		}
		c.add(r, at, end)
	case unicode.IsLetter(r) || unicode.IsNumber(r):
		r = lower(r)
		if unspaced(r) {
			c.flush()
			c.add(r, at, end)
			c.single, c.foldMarks = true, false
			return
		}
		if c.single {
			c.flush()
		}
		if r == 'ß' {
			c.add('s', at, end)
			r = 's'
		}
		c.add(r, at, end)
		c.foldMarks = folded(r)
	case r >= utf8.RuneSelf && unicode.In(r, unicode.So, unicode.Sc, unicode.Sm):
		c.flush()
		c.add(r, at, end)
		c.single, c.foldMarks = true, false
		c.flush()
	default:
		c.flush()
		c.foldMarks = false
	}
}

func lower(r rune) rune {
	if r == 'ς' {
		return 'σ'
	}
	return unicode.ToLower(r)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Words calls emit with each word of s in order, until emit answers false.
func Words(s string, emit func(Word) bool) {
	c := cutter{emit: emit}
	var dec []byte
	for i := 0; i < len(s) && !c.stopped; {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case 'a' <= b && b <= 'z', '0' <= b && b <= '9':
				if c.single {
					c.flush()
				}
				c.add(rune(b), i, i+1)
				c.foldMarks = true
			case 'A' <= b && b <= 'Z':
				if c.single {
					c.flush()
				}
				c.add(rune(b+'a'-'A'), i, i+1)
				c.foldMarks = true
			default:
				c.flush()
				c.foldMarks = false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			c.flush()
			i++
			continue
		}
		dec = norm.NFKD.AppendString(dec[:0], s[i:i+n])
		for j := 0; j < len(dec); {
			d, m := utf8.DecodeRune(dec[j:])
			c.take(d, i, i+n)
			j += m
		}
		i += n
	}
	c.flush()
}

// Terms is the text the index holds for s: its words, at most
// MaxUnitWords of them, joined by single spaces ("" when s has none).
func Terms(s string) string {
	var b strings.Builder
	n := 0
	Words(s, func(w Word) bool {
		if n > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Text)
		n++
		return n < MaxUnitWords
	})
	return b.String()
}
