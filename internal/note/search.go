package note

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// What full-text search reads of a Note. The index holds units: the title
// ("t"), and one unit per stored part that holds text, under the part's
// key — a chunk of the markdown text, a slide, a block of cells, the
// sources, the files — so a write re-indexes the parts it wrote and nothing
// else. A unit is a list of spots (a line, a slide's field, a cell, a
// source, a file): where a hit is shown. The text indexed for a unit is
// its spots' texts, one per line, so the index and the place a hit points
// at are read from one function.
//
// A markdown chunk is cut at a byte count, not between words: its unit
// runs from the end of the line (or word) the chunk starts in to the end
// of the line (or word) it ends in, looking at most unitReach bytes on, so
// every word of the text is in exactly one unit whole and a line is only
// cut when it runs on without a space for that long.

// TitleUnit is the key of the title's unit.
const TitleUnit = "t"

// unitReach is how far a markdown unit's edge may move past its chunk's
// edge to end a line or a word.
const unitReach = 1024

// SearchUnit is one unit of the index: its key, its tab's type ("" for
// the title) and the text indexed ("" when the unit holds none: it leaves
// the index).
type SearchUnit struct {
	Key     string
	TabType string
	Text    string
}

// Spot fields.
const (
	SpotTitle       = "title"
	SpotText        = "text"
	SpotSlideTitle  = "slide_title"
	SpotSlideBody   = "slide_body"
	SpotSlideNotes  = "slide_notes"
	SpotCell        = "cell"
	SpotSource      = "source"
	SpotFile        = "file"
	spotSourceTitle = SpotSource
)

// Spot is one place of a unit and its text.
type Spot struct {
	Field      string
	Line       int // SpotText: the line, from 1
	SlideIndex int // slides: the slide's position, from 0
	SlideID    string
	SheetID    string // SpotCell
	Row, Col   int    // SpotCell, from 0
	ItemID     string // SpotSource, SpotFile
	Text       string
}

// SearchUnits are every unit of d that holds text: what a Note indexed
// from scratch is. d must be stored by parts (see ByParts) for its
// markdown units to be keyed by its chunks.
func SearchUnits(d *Doc) []SearchUnit {
	var out []SearchUnit
	add := func(u SearchUnit) {
		if u.Text != "" {
			out = append(out, u)
		}
	}
	add(SearchUnit{Key: TitleUnit, Text: d.Title})
	for _, u := range markdownUnits(d) {
		add(SearchUnit{Key: u.key, TabType: TypeMarkdown, Text: d.Markdown[u.lo:u.hi]})
	}
	for i := range d.Tabs {
		t := &d.Tabs[i]
		switch t.Type {
		case TypeSlides:
			for j := range t.Slides {
				add(SearchUnit{Key: slideKey(t.ID, t.Slides[j].ID), TabType: TypeSlides, Text: joinSpots(slideSpots(t.Slides[j], j))})
			}
		case TypeSheet:
			for j := range t.Sheets {
				sh := &t.Sheets[j]
				for r, row := range sh.Cells {
					for bc := 0; bc*BlockCols < len(row); bc++ {
						add(SearchUnit{Key: rowUnitKey(t.ID, sh.ID, r, bc), TabType: TypeSheet, Text: segmentText(segment(row, bc))})
					}
				}
			}
		}
	}
	add(SearchUnit{Key: sourcesKey, TabType: TypeSources, Text: joinSpots(sourceSpots(d))})
	add(SearchUnit{Key: filesKey, TabType: TypeFiles, Text: joinSpots(fileSpots(d))})
	return out
}

// The keys of the sources and files parts (kind_slides.go).
const (
	sourcesKey = "src"
	filesKey   = "fil"
)

// SearchChanges are the units a write from base to next changed, as w
// (Diff(base, next)) stored it: each unit of a part it wrote or removed
// whose text differs, the title if it changed, and every markdown unit
// whose text differs (an edit moves the edges of the units beside it).
// A unit whose text is now "" leaves the index. base may be a Doc never
// stored: then every unit of next is new.
func SearchChanges(base, next *Doc, w Writes) []SearchUnit {
	if base.lay == nil {
		return SearchUnits(next)
	}
	var out []SearchUnit
	if base.Title != next.Title {
		out = append(out, SearchUnit{Key: TitleUnit, Text: next.Title})
	}
	if base.Markdown != next.Markdown || !sameChunks(base, next) {
		old := map[string]string{}
		for _, u := range markdownUnits(base) {
			old[u.key] = base.Markdown[u.lo:u.hi]
		}
		for _, u := range markdownUnits(next) {
			text := next.Markdown[u.lo:u.hi]
			if was, ok := old[u.key]; !ok || was != text {
				out = append(out, SearchUnit{Key: u.key, TabType: TypeMarkdown, Text: text})
			}
			delete(old, u.key)
		}
		for key, was := range old {
			if was != "" {
				out = append(out, SearchUnit{Key: key, TabType: TypeMarkdown})
			}
		}
	}
	for _, p := range w.Parts {
		if strings.HasPrefix(p.Key, "m/") {
			continue
		}
		if strings.HasPrefix(p.Key, "c/") {
			out = blockChanges(out, base, next, p.Key)
			continue
		}
		typ, was := unitOf(base, p.Key)
		ntyp, now := unitOf(next, p.Key)
		if ntyp != "" {
			typ = ntyp
		}
		if typ != "" && was != now {
			out = append(out, SearchUnit{Key: p.Key, TabType: typ, Text: now})
		}
	}
	return out
}

func sameChunks(a, b *Doc) bool {
	if b.lay == nil || len(a.lay.chunks) != len(b.lay.chunks) {
		return false
	}
	for i := range a.lay.chunks {
		if a.lay.chunks[i] != b.lay.chunks[i] {
			return false
		}
	}
	return true
}

// unitOf is the type of tab and the text of the unit of d under part key
// (a slide, a block, the sources or files); "", "" when d has no such part.
func unitOf(d *Doc, key string) (typ, text string) {
	t, spots, ok := SearchSpots(d, key)
	if !ok {
		return "", ""
	}
	return t.Type, joinSpots(spots)
}

func joinSpots(spots []Spot) string {
	var b strings.Builder
	for _, s := range spots {
		if s.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s.Text)
	}
	return b.String()
}

// SearchSpots are the spots of d's unit key and the tab it is in (the
// first tab for the title); ok is false when d has no such unit.
func SearchSpots(d *Doc, key string) (*Tab, []Spot, bool) {
	if key == TitleUnit {
		if len(d.Tabs) == 0 {
			return nil, nil, false
		}
		return &d.Tabs[0], []Spot{{Field: SpotTitle, Text: d.Title}}, true
	}
	switch {
	case strings.HasPrefix(key, "m/"):
		t := d.tabOfType(TypeMarkdown)
		if t == nil {
			return nil, nil, false
		}
		for _, u := range markdownUnits(d) {
			if u.key == key {
				return t, lineSpots(d.Markdown, u.lo, u.hi), true
			}
		}
	case key == sourcesKey:
		if t := d.tabOfType(TypeSources); t != nil {
			return t, sourceSpots(d), true
		}
	case key == filesKey:
		if t := d.tabOfType(TypeFiles); t != nil {
			return t, fileSpots(d), true
		}
	case strings.HasPrefix(key, "s/"):
		tab, slide, _ := strings.Cut(key[2:], "/")
		t := d.tabByID(tab, TypeSlides)
		if t == nil {
			return nil, nil, false
		}
		for j := range t.Slides {
			if t.Slides[j].ID == slide {
				return t, slideSpots(t.Slides[j], j), true
			}
		}
	case strings.HasPrefix(key, "c/"):
		rest := strings.Split(key[2:], "/")
		if len(rest) != 4 {
			return nil, nil, false
		}
		t := d.tabByID(rest[0], TypeSheet)
		br, bc, ok := blockIndex(rest[2])
		ri, err := strconv.Atoi(rest[3])
		if t == nil || !ok || err != nil || ri < 0 || ri >= BlockRows {
			return nil, nil, false
		}
		for j := range t.Sheets {
			if sh := &t.Sheets[j]; sh.ID == rest[1] {
				r := br*BlockRows + ri
				if r >= len(sh.Cells) {
					return nil, nil, false
				}
				var spots []Spot
				for k, v := range segment(sh.Cells[r], bc) {
					if text := cellText(v); text != "" {
						spots = append(spots, Spot{Field: SpotCell, SheetID: sh.ID, Row: r, Col: bc*BlockCols + k, Text: text})
					}
				}
				return t, spots, true
			}
		}
	}
	return nil, nil, false
}

func (d *Doc) tabOfType(typ string) *Tab {
	for i := range d.Tabs {
		if d.Tabs[i].Type == typ {
			return &d.Tabs[i]
		}
	}
	return nil
}

func (d *Doc) tabByID(id, typ string) *Tab {
	for i := range d.Tabs {
		if d.Tabs[i].ID == id && d.Tabs[i].Type == typ {
			return &d.Tabs[i]
		}
	}
	return nil
}

func blockIndex(s string) (int, int, bool) {
	a, b, ok := strings.Cut(s, ".")
	br, err1 := strconv.Atoi(a)
	bc, err2 := strconv.Atoi(b)
	return br, bc, ok && err1 == nil && err2 == nil && br >= 0 && bc >= 0
}

func slideSpots(s Slide, i int) []Spot {
	return []Spot{
		{Field: SpotSlideTitle, SlideIndex: i, SlideID: s.ID, Text: s.Title},
		{Field: SpotSlideBody, SlideIndex: i, SlideID: s.ID, Text: s.Body},
		{Field: SpotSlideNotes, SlideIndex: i, SlideID: s.ID, Text: s.Notes},
	}
}

// A sheet's units are the rows of its blocks: "<block key>/<row in the
// block>", BlockCols cells each, so a one-cell write re-indexes the
// cell's row of its block and nothing else.
func rowUnitKey(tab, sheet string, r, bc int) string {
	return blockKey(tab, sheet, r/BlockRows, bc) + "/" + strconv.Itoa(r%BlockRows)
}

// segmentText is the unit text of one row segment: its cells' texts, one
// per line.
func segmentText(seg []any) string {
	var b []byte
	for _, v := range seg {
		switch v := v.(type) {
		case string:
			if v == "" {
				continue
			}
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = append(b, v...)
		case float64:
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = strconv.AppendFloat(b, v, 'f', -1, 64)
		}
	}
	return string(b)
}

// blockChanges appends the row units of block key (a part a write wrote
// or removed) whose cells differ between base and next.
func blockChanges(out []SearchUnit, base, next *Doc, key string) []SearchUnit {
	rest := strings.Split(key[2:], "/")
	if len(rest) != 3 {
		return out
	}
	br, bc, ok := blockIndex(rest[2])
	if !ok {
		return out
	}
	rowsOf := func(d *Doc) [][]any {
		if t := d.tabByID(rest[0], TypeSheet); t != nil {
			for j := range t.Sheets {
				if t.Sheets[j].ID == rest[1] {
					return t.Sheets[j].Cells
				}
			}
		}
		return nil
	}
	old, now := rowsOf(base), rowsOf(next)
	at := func(rows [][]any, r int) []any {
		if r < len(rows) {
			return segment(rows[r], bc)
		}
		return nil
	}
	for r := br * BlockRows; r < (br+1)*BlockRows; r++ {
		a, b := at(old, r), at(now, r)
		if sameSegment(a, b) {
			continue
		}
		if was, is := segmentText(a), segmentText(b); was != is {
			out = append(out, SearchUnit{Key: rowUnitKey(rest[0], rest[1], r, bc), TabType: TypeSheet, Text: is})
		}
	}
	return out
}

// cellText is what a cell says, as search reads it.
func cellText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func sourceSpots(d *Doc) []Spot {
	out := make([]Spot, 0, len(d.Sources))
	for _, s := range d.Sources {
		out = append(out, Spot{Field: spotSourceTitle, ItemID: s.ID, Text: s.Title + "\n" + s.URL})
	}
	return out
}

func fileSpots(d *Doc) []Spot {
	out := make([]Spot, 0, len(d.Files))
	for _, f := range d.Files {
		out = append(out, Spot{Field: SpotFile, ItemID: f.ID, Text: f.Name})
	}
	return out
}

// lineSpots are the lines of text[lo:hi], numbered in the whole text.
func lineSpots(text string, lo, hi int) []Spot {
	line := 1 + strings.Count(text[:lo], "\n")
	var out []Spot
	for s := text[lo:hi]; ; line++ {
		l, rest, more := strings.Cut(s, "\n")
		if l != "" {
			out = append(out, Spot{Field: SpotText, Line: line, Text: l})
		}
		if !more {
			break
		}
		s = rest
	}
	return out
}

type mdUnit struct {
	key    string
	lo, hi int
}

// markdownUnits are d's markdown units, one per chunk, in order; a unit
// may be empty (lo == hi) when its chunk lies inside one long line.
func markdownUnits(d *Doc) []mdUnit {
	if d.lay == nil || len(d.lay.chunks) == 0 {
		return nil
	}
	text := d.Markdown
	out := make([]mdUnit, 0, len(d.lay.chunks))
	off := 0
	lo := 0
	for i, c := range d.lay.chunks {
		off += c.n
		hi := len(text)
		if i < len(d.lay.chunks)-1 {
			hi = unitEdge(text, off)
		}
		out = append(out, mdUnit{key: chunkKey(c.id), lo: lo, hi: max(lo, hi)})
		lo = max(lo, hi)
	}
	return out
}

// unitEdge is where a unit whose chunk ends at off ends: after the line
// off is in, else after the word, within unitReach bytes; else at the
// rune boundary unitReach bytes on.
func unitEdge(text string, off int) int {
	if off >= len(text) || off == 0 || text[off-1] == '\n' {
		return off
	}
	end := min(len(text), off+unitReach)
	window := text[off:end]
	if i := strings.IndexByte(window, '\n'); i >= 0 {
		return off + i + 1
	}
	if i := strings.IndexAny(window, " \t"); i >= 0 {
		return off + i + 1
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	return end
}
