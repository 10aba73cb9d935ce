package note

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"foundry/internal/parts"
)

// A Note is stored by parts, so that a write costs what it changes and not
// what the Note holds:
//
//   - the head (the store's document of the Note): title, counters, the tab
//     strip with types and labels, each slides tab's slide order, each
//     sheet's name and row count, and the markdown tab's chunk order;
//   - "m/<n>": one chunk of the markdown tab (about 4 KiB of text, cut at
//     rune boundaries);
//   - "s/<tab>/<slide>": one slide;
//   - "c/<tab>/<sheet>/<r>.<c>": one block of BlockRows × BlockCols cells;
//   - "src" and "fil": the sources and files lists.
//
// Each tab kind owns how its data becomes parts (kind_*.go). Diff finds the
// parts a write changed by comparing the Note before and after it (rows and
// strings that an edit did not touch are shared, so that is cheap), and
// hands each with what history keeps of it: a full snapshot, or a splice
// against the previous bytes while the chain since the last snapshot stays
// short. Assemble is the way back, from a head and parts, and can start from
// an older Doc so that only the parts written since are decoded.

// Block size of a stored sheet, in cells.
const (
	BlockRows = 32
	BlockCols = 32
)

const (
	headFormat  = 1
	chunkTarget = 4 << 10 // markdown chunk size when text is cut
	chunkMax    = 8 << 10 // a chunk grown past this is cut again
	// A part's history is a snapshot then at most maxChain splices, and
	// the splices since the snapshot weigh no more than the part itself:
	// rebuilding any version reads one snapshot and a bounded chain.
	maxChain = 64
)

// Part and PartWrite are the store's parts.Part and parts.Write.
type (
	Part      = parts.Part
	PartWrite = parts.Write
)

// Writes is what a Note write stores.
type Writes struct {
	Head  []byte // the new head; nil when it did not change
	Parts []PartWrite
	Bytes int // the Note's size as stored after the write
	// Search are the units of the search index the write changed, when
	// the caller asked for them (SearchChanges).
	Search []SearchUnit
}

// layout is how a Doc is stored: the head's bytes, the markdown chunks and
// every part's size and history chain. It is never changed once made: Diff
// makes a new one for the Doc after a write.
type layout struct {
	head      []byte
	chunks    []chunkRef
	nextChunk int
	parts     map[string]partMeta
	partBytes int // the sum of parts' sizes
}

type chunkRef struct{ id, n int }

type partMeta struct{ size, chainLen, chainBytes int }

// StoredBytes is the Note's size as stored (head and parts), or 0 for a Doc
// that was never stored.
func (d *Doc) StoredBytes() int {
	if d.lay == nil {
		return 0
	}
	return len(d.lay.head) + d.lay.partBytes
}

// ByParts reports whether d was read from, or written as, parts (and so
// can be the base of Assemble and Diff).
func (d *Doc) ByParts() bool { return d.lay != nil }

// headDoc is the stored head.
type headDoc struct {
	Format    int       `json:"parts"`
	Title     string    `json:"title"`
	Tabs      []headTab `json:"tabs"`
	NextTabN  int       `json:"next_tab_n"`
	NextItem  int       `json:"next_item"`
	Chunks    []int     `json:"md"`
	NextChunk int       `json:"next_chunk"`
	TextRev   int64     `json:"text_rev,omitempty"`
}

type headTab struct {
	ID     string      `json:"tab_id"`
	Type   string      `json:"type"`
	Label  string      `json:"label"`
	Slides []string    `json:"slides,omitempty"`
	Sheets []headSheet `json:"sheets,omitempty"`
}

type headSheet struct {
	ID      string         `json:"sheet_id"`
	Name    string         `json:"name"`
	Rows    int            `json:"rows"`
	Widths  map[string]int `json:"widths,omitempty"`
	Formats []CellFormat   `json:"formats,omitempty"`
}

// IsHead tells a stored head from a Note stored whole (before Notes were
// stored by parts); Assemble reads both.
func IsHead(doc []byte) bool { return bytes.HasPrefix(doc, []byte(`{"parts":`)) }

// Clone returns a copy of d that an edit may change without changing d:
// slices of tabs, slides, sheets, rows and attachments are copied, rows and
// strings are shared. Operations of this package never change a shared row
// in place (they copy a row before writing it), so the copy and d can be
// compared row by row by identity.
func Clone(d *Doc) Doc {
	c := *d
	c.Tabs = slices.Clone(d.Tabs)
	for i := range c.Tabs {
		t := &c.Tabs[i]
		t.Slides = slices.Clone(t.Slides)
		t.Sheets = slices.Clone(t.Sheets)
		for j := range t.Sheets {
			t.Sheets[j].Cells = slices.Clone(t.Sheets[j].Cells)
			t.Sheets[j].Values = slices.Clone(t.Sheets[j].Values)
		}
		// The formulas' graph moves to the next version by Recalc, never
		// by a copy (calc.go).
		t.calc = nil
	}
	c.Sources = slices.Clone(d.Sources)
	c.Files = slices.Clone(d.Files)
	return c
}

// writer collects one Diff.
type writer struct {
	base *layout // how base is stored (empty for a Doc never stored)
	next *layout
	out  []PartWrite
}

// put records that key now holds data (nil: gone); old is its previous
// bytes when it had some.
func (w *writer) put(key string, old, data []byte) {
	m, had := w.next.parts[key]
	if data == nil {
		if !had {
			return
		}
		w.next.setPart(key, nil)
		w.out = append(w.out, PartWrite{Key: key, Full: true})
		return
	}
	if had && old != nil && bytes.Equal(old, data) {
		return
	}
	pw := PartWrite{Key: key, Data: data}
	if had && old != nil && m.chainLen < maxChain {
		if d := parts.Splice(old, data); m.chainBytes+len(d) <= len(data) {
			pw.Hist, pw.ChainLen, pw.ChainBytes = d, m.chainLen+1, m.chainBytes+len(d)
		}
	}
	if pw.Hist == nil {
		pw.Hist, pw.Full = data, true
	}
	w.next.setPart(key, &partMeta{len(data), pw.ChainLen, pw.ChainBytes})
	w.out = append(w.out, pw)
}

// setPart records key's new meta (nil: gone), keeping partBytes.
func (l *layout) setPart(key string, m *partMeta) {
	l.partBytes -= l.parts[key].size
	if m == nil {
		delete(l.parts, key)
		return
	}
	l.parts[key] = *m
	l.partBytes += m.size
}

// gone removes every stored part whose key starts with prefix.
func (w *writer) gone(prefix string) {
	keys := []string{}
	for k := range w.base.parts {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.put(k, nil, nil)
	}
}

// Diff returns what storing next costs when base is what is stored: the
// parts next changed, and its head if that changed. It gives next its
// layout. base may be a Doc that was never stored (a new Note, or one
// stored whole): then every part is written.
func Diff(base, next *Doc) (Writes, error) {
	bl := base.lay
	if bl == nil {
		bl = &layout{parts: map[string]partMeta{}}
	}
	w := &writer{base: bl, next: &layout{parts: maps.Clone(bl.parts), partBytes: bl.partBytes, nextChunk: max(bl.nextChunk, 1)}}
	known := base.lay != nil
	h := headDoc{Format: headFormat, Title: next.Title, NextTabN: next.NextTabN, NextItem: next.NextItem, TextRev: next.TextRev}
	baseTabs := map[string]*Tab{}
	if known {
		for i := range base.Tabs {
			baseTabs[base.Tabs[i].ID] = &base.Tabs[i]
		}
	}
	seen := map[string]bool{}
	for i := range next.Tabs {
		t := &next.Tabs[i]
		k, ok := kinds[t.Type]
		if !ok {
			return Writes{}, fmt.Errorf("tab %s has unknown type %q", t.ID, t.Type)
		}
		if seen[t.ID] {
			return Writes{}, fmt.Errorf("tab ID %s appears twice", t.ID)
		}
		seen[t.ID] = true
		ht := headTab{ID: t.ID, Type: t.Type, Label: t.Label}
		bt := baseTabs[t.ID]
		if bt != nil && bt.Type != t.Type {
			bt = nil
		}
		if err := k.diff(w, base, next, bt, t, &ht); err != nil {
			return Writes{}, err
		}
		h.Tabs = append(h.Tabs, ht)
	}
	for id, bt := range baseTabs {
		if !seen[id] {
			if k, ok := kinds[bt.Type]; ok && k.prefix != nil {
				w.gone(k.prefix(id))
			}
		}
	}
	for _, c := range w.next.chunks {
		h.Chunks = append(h.Chunks, c.id)
	}
	if h.Chunks == nil {
		h.Chunks = []int{}
	}
	h.NextChunk = w.next.nextChunk
	head, err := json.Marshal(h)
	if err != nil {
		return Writes{}, err
	}
	w.next.head = head
	next.lay = w.next
	out := Writes{Parts: w.out, Bytes: next.StoredBytes()}
	if !bytes.Equal(head, bl.head) {
		out.Head = head
	}
	return out, nil
}

// Assemble builds the Doc stored as head and parts. With base (a Doc at an
// earlier version, as Assemble or Diff left it), parts holds only what was
// written since: every other part is taken from base as it is, undecoded.
// A head of a Note stored whole is decoded as it is.
func Assemble(head []byte, parts []Part, base *Doc) (Doc, error) {
	if !IsHead(head) {
		var d Doc
		if err := json.Unmarshal(head, &d); err != nil {
			return Doc{}, err
		}
		return d, nil
	}
	var h headDoc
	if err := json.Unmarshal(head, &h); err != nil {
		return Doc{}, fmt.Errorf("note head: %w", err)
	}
	if base != nil && base.lay == nil {
		base = nil
	}
	a := &assembler{rows: map[string]*Part{}, lay: &layout{head: head, nextChunk: h.NextChunk, parts: map[string]partMeta{}}}
	if base != nil {
		a.base = base
		a.lay.parts, a.lay.partBytes = maps.Clone(base.lay.parts), base.lay.partBytes
		a.baseTabs = map[string]*Tab{}
		for i := range base.Tabs {
			a.baseTabs[base.Tabs[i].ID] = &base.Tabs[i]
		}
	}
	for i := range parts {
		p := &parts[i]
		a.rows[p.Key] = p
		if p.Data == nil {
			a.lay.setPart(p.Key, nil)
		} else {
			a.lay.setPart(p.Key, &partMeta{len(p.Data), p.ChainLen, p.ChainBytes})
		}
	}
	d := Doc{Title: h.Title, NextTabN: h.NextTabN, NextItem: h.NextItem, TextRev: h.TextRev, Sources: []Source{}, Files: []File{}}
	a.chunkIDs = h.Chunks
	for _, ht := range h.Tabs {
		k, ok := kinds[ht.Type]
		if !ok {
			return Doc{}, fmt.Errorf("note head: tab %s has unknown type %q", ht.ID, ht.Type)
		}
		t := Tab{ID: ht.ID, Type: ht.Type, Label: ht.Label}
		if err := k.assemble(a, &d, &t, ht); err != nil {
			return Doc{}, err
		}
		d.Tabs = append(d.Tabs, t)
	}
	d.lay = a.lay
	return d, nil
}

// assembler is one Assemble: the parts read, and the Doc they update.
type assembler struct {
	rows     map[string]*Part
	base     *Doc
	baseTabs map[string]*Tab
	chunkIDs []int
	lay      *layout
}

// part returns the bytes of key read now; ok is false when it was not read
// (then it is base's). A part read as gone is (nil, true).
func (a *assembler) part(key string) (data []byte, ok bool) {
	p, ok := a.rows[key]
	if !ok {
		return nil, false
	}
	return p.Data, true
}

func (a *assembler) baseTab(id, typ string) *Tab {
	if t := a.baseTabs[id]; t != nil && t.Type == typ {
		return t
	}
	return nil
}

func missing(key string) error { return fmt.Errorf("note part %s is missing", key) }
