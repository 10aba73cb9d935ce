// Package parts is what the store and the Note domain share about content
// stored by parts: a resource (a Note) keeps besides its document named
// parts (chunks of text, blocks of cells, slides), each written only when it
// changes. History keeps a part as a full snapshot followed by a bounded
// chain of splices (keep a prefix, drop some bytes, insert others, keep the
// suffix), the way Mercurial's revlog does, so any version rebuilds from one
// snapshot and a few small deltas.
package parts

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Part is a stored part as read back: Data nil means the part is gone (a
// tombstone, kept so that a reader who had it learns it went away).
// ChainLen and ChainBytes are the deltas history holds since the part's
// last full snapshot.
type Part struct {
	Key        string
	Data       []byte
	ChainLen   int
	ChainBytes int
}

// Write is one part a write changed: its new bytes (nil: gone), what
// history keeps of it (Hist: the bytes when Full, else a Splice against the
// previous bytes), and its chain since the last snapshot.
type Write struct {
	Key        string
	Data       []byte
	Hist       []byte
	Full       bool
	ChainLen   int
	ChainBytes int
}

// Splice returns the splice that turns old into new: "<offset>,<deleted>,<inserted text>".
// The cut points fall on UTF-8 rune boundaries, so for text the inserted
// part is valid UTF-8 whenever new is.
func Splice(old, new []byte) []byte {
	p := CommonPrefix(old, new)
	for p > 0 && ((p < len(old) && !utf8.RuneStart(old[p])) || (p < len(new) && !utf8.RuneStart(new[p]))) {
		p--
	}
	s := CommonSuffix(old[p:], new[p:])
	for s > 0 && (!utf8.RuneStart(old[len(old)-s]) || !utf8.RuneStart(new[len(new)-s])) {
		s--
	}
	ins := new[p : len(new)-s]
	out := make([]byte, 0, len(ins)+24)
	out = strconv.AppendInt(out, int64(p), 10)
	out = append(out, ',')
	out = strconv.AppendInt(out, int64(len(old)-s-p), 10)
	out = append(out, ',')
	return append(out, ins...)
}

// ErrCorrupt: a delta that does not fit the text it is applied to.
var ErrCorrupt = errors.New("delta does not apply")

// Apply applies one splice made by Splice to old.
func Apply(old []byte, d []byte) ([]byte, error) { return ApplyTo(nil, old, d) }

// ApplyTo is Apply writing into dst[:0] (grown as needed), so that a chain
// of splices can be replayed in two buffers instead of one new buffer per
// splice. dst must not overlap old.
func ApplyTo(dst, old, d []byte) ([]byte, error) {
	i := bytes.IndexByte(d, ',')
	if i < 0 {
		return nil, ErrCorrupt
	}
	j := bytes.IndexByte(d[i+1:], ',')
	if j < 0 {
		return nil, ErrCorrupt
	}
	off, err1 := strconv.Atoi(string(d[:i]))
	del, err2 := strconv.Atoi(string(d[i+1 : i+1+j]))
	ins := d[i+2+j:]
	if err1 != nil || err2 != nil || off < 0 || del < 0 || off > len(old) || del > len(old)-off {
		return nil, ErrCorrupt
	}
	out := slices.Grow(dst[:0], len(old)-del+len(ins))
	out = append(out, old[:off]...)
	out = append(out, ins...)
	return append(out, old[off+del:]...), nil
}

// CommonPrefix is the length of the longest common prefix of a and b. It
// compares 512-byte windows first (a comparison the runtime vectorizes),
// bytes only in the first window that differs.
func CommonPrefix[T ~string | ~[]byte](a, b T) int {
	const w = 512
	p, n := 0, min(len(a), len(b))
	for p+w <= n && string(a[p:p+w]) == string(b[p:p+w]) {
		p += w
	}
	for p < n && a[p] == b[p] {
		p++
	}
	return p
}

// CommonSuffix is the length of the longest common suffix of a and b.
func CommonSuffix[T ~string | ~[]byte](a, b T) int {
	const w = 512
	s, n := 0, min(len(a), len(b))
	for s+w <= n && string(a[len(a)-s-w:len(a)-s]) == string(b[len(b)-s-w:len(b)-s]) {
		s += w
	}
	for s < n && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return s
}
