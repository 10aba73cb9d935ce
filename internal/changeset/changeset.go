// Package changeset is the server's side of the change sets the web app's
// editor (CodeMirror 6, @codemirror/state) sends while people type
// together: a change set describes an edit of a whole document as a run of
// sections, each either kept or replaced, with the text that replaces it.
//
// Positions and lengths count UTF-16 code units, as the browser's strings
// do, and a line break counts one. The JSON form is the editor's own
// (ChangeSet.toJSON): a kept section is its length, a replaced one an
// array of the length it replaces followed by the lines of its new text.
//
// The operations (Apply, Compose, Map, MapPos, Invert, Of) give the same
// results as @codemirror/state, section for section: the tests compare the
// two on thousands of random documents and edits.
package changeset

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxLength bounds the documents (in UTF-16 code units) a change set may
// describe, so that a hostile length cannot ask for unbounded work.
const MaxLength = 1 << 28

// MapMode says how MapPos reports a position whose context was deleted.
type MapMode int

// The modes, as @codemirror/state's MapMode numbers them.
const (
	// Simple maps every position somewhere valid.
	Simple MapMode = iota
	// TrackDel reports a deletion across the position.
	TrackDel
	// TrackBefore reports a deletion of the character before it.
	TrackBefore
	// TrackAfter reports a deletion of the character after it.
	TrackAfter
)

// ErrMismatchedLength is returned when a change set meets a document, or
// another change set, of another length than the one it was made for.
var ErrMismatchedLength = errors.New("changeset: lengths do not match")

// ChangeSet is one edit of a document. The zero value is the empty change
// set of the empty document.
type ChangeSet struct {
	// sections are pairs: the length in the document before, then -1 for
	// a section kept, or the length of the text that replaces it.
	sections []int
	// inserted[i] is the text of section i (nil: none, or not replaced).
	inserted [][]uint16
}

// Change is one replacement, in the positions of the document before:
// From..To is replaced by Insert (an insertion has From == To, a deletion
// an empty Insert). Line breaks in Insert ("\r\n", "\r", "\n") become
// "\n", as the editor stores them.
type Change struct {
	From   int    `json:"from"`
	To     int    `json:"to"`
	Insert string `json:"insert,omitempty"`
}

// Empty is the change set that changes nothing in a document of length n.
func Empty(n int) ChangeSet {
	if n == 0 {
		return ChangeSet{}
	}
	return ChangeSet{sections: []int{n, -1}}
}

// Len is the length of the document before the change.
func (c ChangeSet) Len() int {
	n := 0
	for i := 0; i < len(c.sections); i += 2 {
		n += c.sections[i]
	}
	return n
}

// NewLen is the length of the document after the change.
func (c ChangeSet) NewLen() int {
	n := 0
	for i := 0; i < len(c.sections); i += 2 {
		if ins := c.sections[i+1]; ins < 0 {
			n += c.sections[i]
		} else {
			n += ins
		}
	}
	return n
}

// IsEmpty reports whether the change set changes nothing.
func (c ChangeSet) IsEmpty() bool {
	return len(c.sections) == 0 || len(c.sections) == 2 && c.sections[1] < 0
}

// String is the editor's debugging form: "5 2:3 4" keeps 5, replaces 2
// by 3, keeps 4.
func (c ChangeSet) String() string {
	var b strings.Builder
	for i := 0; i < len(c.sections); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d", c.sections[i])
		if ins := c.sections[i+1]; ins >= 0 {
			fmt.Fprintf(&b, ":%d", ins)
		}
	}
	return b.String()
}

// Range is a changed range: FromA..ToA in the document before became
// FromB..ToB in the document after, holding Text.
type Range struct {
	FromA, ToA, FromB, ToB int
	Text                   string
}

// Changes lists the changed ranges, adjacent replacements joined, as the
// editor's iterChanges reports them.
func (c ChangeSet) Changes() []Range {
	var out []Range
	posA, posB := 0, 0
	for i := 0; i < len(c.sections); {
		n, ins := c.sections[i], c.sections[i+1]
		i += 2
		if ins < 0 {
			posA += n
			posB += n
			continue
		}
		endA, endB := posA, posB
		var text []uint16
		for {
			endA += n
			endB += ins
			if ins > 0 {
				text = append(text, c.text((i-2)>>1)...)
			}
			if i == len(c.sections) || c.sections[i+1] < 0 {
				break
			}
			n, ins = c.sections[i], c.sections[i+1]
			i += 2
		}
		out = append(out, Range{FromA: posA, ToA: endA, FromB: posB, ToB: endB, Text: decode(text)})
		posA, posB = endA, endB
	}
	return out
}

func (c ChangeSet) text(index int) []uint16 {
	if index < len(c.inserted) {
		return c.inserted[index]
	}
	return nil
}

// Apply applies the change set to doc, whose length (in UTF-16 code
// units) must be the change set's Len. A change may not split a character
// written as two code units.
func (c ChangeSet) Apply(doc string) (string, error) {
	var out strings.Builder
	out.Grow(len(doc) + 16)
	pos, at := 0, 0 // pos in UTF-16 units, at in bytes of doc
	for i := 0; i < len(c.sections); i += 2 {
		n, ins := c.sections[i], c.sections[i+1]
		end, endAt, ok := advance(doc, pos, at, n)
		if !ok {
			if endAt >= len(doc) && end < pos+n {
				return "", fmt.Errorf("%w: the change set is for a document of length %d, this one has %d", ErrMismatchedLength, c.Len(), len(encode(doc)))
			}
			return "", fmt.Errorf("changeset: a change at %d..%d splits a character in two", pos, pos+n)
		}
		if ins < 0 {
			out.WriteString(doc[at:endAt])
		} else if t := c.text(i >> 1); len(t) > 0 {
			out.WriteString(decode(t))
		}
		pos, at = end, endAt
	}
	if at != len(doc) {
		return "", fmt.Errorf("%w: the change set is for a document of length %d, this one has %d", ErrMismatchedLength, c.Len(), len(encode(doc)))
	}
	return out.String(), nil
}

// advance moves n UTF-16 units on from pos (at byte at of doc). It fails
// when doc ends first, or when the end would fall inside a character
// written as two units.
func advance(doc string, pos, at, n int) (end, endAt int, ok bool) {
	target := pos + n
	for pos < target {
		if at >= len(doc) {
			return pos, at, false
		}
		r, size := utf8.DecodeRuneInString(doc[at:])
		units := 1
		if r >= 0x10000 {
			units = 2
		}
		if pos+units > target {
			return pos, at, false
		}
		pos += units
		at += size
	}
	return pos, at, true
}

// Invert is the change set that takes the document after c back to doc,
// the document before it.
func (c ChangeSet) Invert(doc string) (ChangeSet, error) {
	units := encode(doc)
	if len(units) != c.Len() {
		return ChangeSet{}, fmt.Errorf("%w: the change set is for a document of length %d, this one has %d", ErrMismatchedLength, c.Len(), len(units))
	}
	sections := append([]int(nil), c.sections...)
	var inserted [][]uint16
	pos := 0
	for i := 0; i < len(sections); i += 2 {
		n, ins := sections[i], sections[i+1]
		if ins >= 0 {
			sections[i], sections[i+1] = ins, n
			for len(inserted) < i>>1 {
				inserted = append(inserted, nil)
			}
			var t []uint16
			if n > 0 {
				t = append([]uint16(nil), units[pos:pos+n]...)
			}
			inserted = append(inserted, t)
		}
		pos += n
	}
	return ChangeSet{sections: sections, inserted: inserted}, nil
}

// MapPos maps a position in the document before c to one in the document
// after. assoc < 0 keeps it with the character before (before an insertion
// at the position), assoc > 0 with the one after. With a mode other than
// Simple, deleted reports that the position's context was deleted (and
// mapped is then -1).
func (c ChangeSet) MapPos(pos, assoc int, mode MapMode) (mapped int, deleted bool, err error) {
	if pos < 0 {
		return 0, false, fmt.Errorf("changeset: position %d is negative", pos)
	}
	posA, posB := 0, 0
	for i := 0; i < len(c.sections); i += 2 {
		n, ins := c.sections[i], c.sections[i+1]
		endA := posA + n
		if ins < 0 {
			if endA > pos {
				return posB + (pos - posA), false, nil
			}
			posB += n
		} else {
			if mode != Simple && endA >= pos &&
				(mode == TrackDel && posA < pos && endA > pos ||
					mode == TrackBefore && posA < pos ||
					mode == TrackAfter && endA > pos) {
				return -1, true, nil
			}
			if endA > pos || endA == pos && assoc < 0 && n == 0 {
				if pos == posA || assoc < 0 {
					return posB, false, nil
				}
				return posB + ins, false, nil
			}
			posB += ins
		}
		posA = endA
	}
	if pos > posA {
		return 0, false, fmt.Errorf("changeset: position %d is out of range for a change set of length %d", pos, posA)
	}
	return posB, false, nil
}

// TouchesRange reports whether a change of c touches from..to (in the
// document before c); an insertion at either end touches it.
func (c ChangeSet) TouchesRange(from, to int) bool {
	pos := 0
	for i := 0; i < len(c.sections) && pos <= to; i += 2 {
		n, ins := c.sections[i], c.sections[i+1]
		end := pos + n
		if ins >= 0 && pos <= to && end >= from {
			return true
		}
		pos = end
	}
	return false
}

// Of builds the change set of changes, all in the positions of one
// document of the given length. Changes given out of order are combined as
// the editor combines them: each later one as if made after the earlier
// ones, in the positions of the original document.
func Of(changes []Change, length int) (ChangeSet, error) {
	if length < 0 || length > MaxLength {
		return ChangeSet{}, fmt.Errorf("changeset: document length %d is out of range 0..%d", length, MaxLength)
	}
	var b builder
	pos := 0
	var total *ChangeSet
	flush := func(force bool) error {
		if !force && len(b.sections) == 0 {
			return nil
		}
		if pos < length {
			b.add(length-pos, -1, false)
		}
		set := b.set()
		if total == nil {
			total = &set
		} else {
			m, err := set.Map(*total, false)
			if err != nil {
				return err
			}
			t, err := total.Compose(m)
			if err != nil {
				return err
			}
			total = &t
		}
		b = builder{}
		pos = 0
		return nil
	}
	for k, ch := range changes {
		if ch.From > ch.To || ch.From < 0 || ch.To > length {
			return ChangeSet{}, fmt.Errorf("changeset: change %d: range %d..%d is not within the document (length %d)", k, ch.From, ch.To, length)
		}
		ins := encode(normalizeBreaks(ch.Insert))
		if ch.From == ch.To && len(ins) == 0 {
			continue
		}
		if ch.From < pos {
			if err := flush(false); err != nil {
				return ChangeSet{}, err
			}
		}
		if ch.From > pos {
			b.add(ch.From-pos, -1, false)
		}
		b.add(ch.To-ch.From, len(ins), false)
		b.insert(ins)
		pos = ch.To
	}
	if err := flush(total == nil); err != nil {
		return ChangeSet{}, err
	}
	return *total, nil
}

func normalizeBreaks(s string) string {
	if !strings.ContainsRune(s, '\r') {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// builder collects sections, joining neighbours as the editor does.
type builder struct {
	sections []int
	inserted [][]uint16
}

func (b *builder) add(n, ins int, forceJoin bool) {
	if n == 0 && ins <= 0 {
		return
	}
	last := len(b.sections) - 2
	switch {
	case last >= 0 && ins <= 0 && ins == b.sections[last+1]:
		b.sections[last] += n
	case last >= 0 && n == 0 && b.sections[last] == 0:
		b.sections[last+1] += ins
	case forceJoin && last >= 0:
		b.sections[last] += n
		b.sections[last+1] += ins
	default:
		b.sections = append(b.sections, n, ins)
	}
}

func (b *builder) insert(value []uint16) {
	if len(value) == 0 {
		return
	}
	index := (len(b.sections) - 2) >> 1
	if index < len(b.inserted) {
		last := len(b.inserted) - 1
		joined := make([]uint16, 0, len(b.inserted[last])+len(value))
		b.inserted[last] = append(append(joined, b.inserted[last]...), value...)
		return
	}
	for len(b.inserted) < index {
		b.inserted = append(b.inserted, nil)
	}
	b.inserted = append(b.inserted, value)
}

func (b *builder) set() ChangeSet { return ChangeSet(*b) }

// iter walks a change set's sections, part of one at a time.
type iter struct {
	set         *ChangeSet
	i           int
	n, off, ins int
}

func newIter(c *ChangeSet) *iter {
	it := &iter{set: c}
	it.next()
	return it
}

func (it *iter) next() {
	if it.i < len(it.set.sections) {
		it.n, it.ins = it.set.sections[it.i], it.set.sections[it.i+1]
		it.i += 2
	} else {
		it.n, it.ins = 0, -2
	}
	it.off = 0
}

func (it *iter) done() bool { return it.ins == -2 }

func (it *iter) len2() int {
	if it.ins < 0 {
		return it.n
	}
	return it.ins
}

func (it *iter) text() []uint16 { return it.set.text((it.i - 2) >> 1) }

func (it *iter) textBit(n int) []uint16 {
	t := it.text()
	from, to := min(it.off, len(t)), min(it.off+n, len(t))
	return t[from:to]
}

func (it *iter) forward(n int) {
	if n == it.n {
		it.next()
	} else {
		it.n -= n
		it.off += n
	}
}

func (it *iter) forward2(n int) {
	switch {
	case it.ins == -1:
		it.forward(n)
	case n == it.ins:
		it.next()
	default:
		it.ins -= n
		it.off += n
	}
}

// Compose is the change set of c followed by other, which must start in
// the document c produces.
func (c ChangeSet) Compose(other ChangeSet) (ChangeSet, error) {
	if c.IsEmpty() && c.Len() == other.Len() {
		return other, nil
	}
	if other.IsEmpty() && other.Len() == c.NewLen() {
		return c, nil
	}
	var b builder
	a, o := newIter(&c), newIter(&other)
	for open := false; ; {
		switch {
		case a.done() && o.done():
			return b.set(), nil
		case a.ins == 0: // a deletion in c
			b.add(a.n, 0, open)
			a.next()
		case o.n == 0 && !o.done(): // an insertion in other
			b.add(0, o.ins, open)
			b.insert(o.text())
			o.next()
		case a.done() || o.done():
			return ChangeSet{}, fmt.Errorf("%w: composing a change set that makes length %d with one for length %d", ErrMismatchedLength, c.NewLen(), other.Len())
		default:
			n := min(a.len2(), o.n)
			before := len(b.sections)
			switch {
			case a.ins == -1:
				insO := o.ins
				if insO != -1 && o.off > 0 {
					insO = 0
				}
				b.add(n, insO, open)
				if insO > 0 {
					b.insert(o.text())
				}
			case o.ins == -1:
				nA := a.n
				if a.off > 0 {
					nA = 0
				}
				b.add(nA, n, open)
				b.insert(a.textBit(n))
			default:
				nA, insO := a.n, o.ins
				if a.off > 0 {
					nA = 0
				}
				if o.off > 0 {
					insO = 0
				}
				b.add(nA, insO, open)
				if o.off == 0 {
					b.insert(o.text())
				}
			}
			open = (a.ins > n || o.ins >= 0 && o.n > n) && (open || len(b.sections) > before)
			a.forward2(n)
			o.forward(n)
		}
	}
}

// Map rebases c, made on the same document as other, to apply after
// other. With before, c's insertions at the same place as other's go
// first; otherwise other's do. For two change sets A and B of one
// document, A.Compose(B.Map(A, false)) and B.Compose(A.Map(B, true))
// make the same document.
func (c ChangeSet) Map(other ChangeSet, before bool) (ChangeSet, error) {
	if other.IsEmpty() && other.Len() == c.Len() {
		return c, nil
	}
	var b builder
	a, o := newIter(&c), newIter(&other)
	for inserted := -1; ; {
		switch {
		case a.done() && o.n > 0 || o.done() && a.n > 0:
			return ChangeSet{}, fmt.Errorf("%w: mapping a change set for length %d over one for length %d", ErrMismatchedLength, c.Len(), other.Len())
		case a.ins == -1 && o.ins == -1:
			n := min(a.n, o.n)
			b.add(n, -1, false)
			a.forward(n)
			o.forward(n)
		case o.ins >= 0 && (a.ins < 0 || inserted == a.i || a.off == 0 && (o.n < a.n || o.n == a.n && !before)):
			n := o.n
			b.add(o.ins, -1, false)
			for n > 0 {
				piece := min(a.n, n)
				if a.ins >= 0 && inserted < a.i && a.n <= piece {
					b.add(0, a.ins, false)
					b.insert(a.text())
					inserted = a.i
				}
				if piece == 0 && a.done() {
					return ChangeSet{}, fmt.Errorf("%w: mapping a change set for length %d over one for length %d", ErrMismatchedLength, c.Len(), other.Len())
				}
				a.forward(piece)
				n -= piece
			}
			o.next()
		case a.ins >= 0:
			n, left := 0, a.n
			for left > 0 {
				if o.ins == -1 {
					piece := min(left, o.n)
					n += piece
					left -= piece
					o.forward(piece)
				} else if o.ins == 0 && o.n < left {
					left -= o.n
					o.next()
				} else {
					break
				}
			}
			if inserted < a.i {
				b.add(n, a.ins, false)
				b.insert(a.text())
			} else {
				b.add(n, 0, false)
			}
			inserted = a.i
			a.forward(a.n - left)
		case a.done() && o.done():
			return b.set(), nil
		default:
			return ChangeSet{}, fmt.Errorf("%w: mapping a change set for length %d over one for length %d", ErrMismatchedLength, c.Len(), other.Len())
		}
	}
}

func encode(s string) []uint16 { return utf16.Encode([]rune(s)) }

func decode(u []uint16) string { return string(utf16.Decode(u)) }

// Diff is the change set that turns a into b: one replacement of what lies
// between their common prefix and suffix, cut on whole characters. Line
// breaks in b are kept as they are only when they are "\n" (see Of).
func Diff(a, b string) (ChangeSet, error) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for p > 0 && ((p < len(a) && !utf8.RuneStart(a[p])) || (p < len(b) && !utf8.RuneStart(b[p]))) {
		p--
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	for s > 0 && (!utf8.RuneStart(a[len(a)-s]) || !utf8.RuneStart(b[len(b)-s])) {
		s--
	}
	from := utf16Len(a[:p])
	to := from + utf16Len(a[p:len(a)-s])
	n := to + utf16Len(a[len(a)-s:])
	if from == to && p == len(b)-s {
		return Empty(n), nil
	}
	return Of([]Change{{From: from, To: to, Insert: b[p : len(b)-s]}}, n)
}

// Len16 is the length of s in UTF-16 code units, as the editor counts it.
func Len16(s string) int { return utf16Len(s) }

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
