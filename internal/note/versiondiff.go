package note

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"foundry/internal/problem"
)

// What changed between two versions of a Note, read from what history
// stores: the two heads (tab strip, title, slide order, sheets) and the
// parts the versions between them wrote, each as it was on either side.
// Markdown is compared as lines, sheets as cells, slides as fields, sources
// and files as items; the lists are bounded (MaxDiffEntries in all), and
// what is left out is counted.

// Bounds of one diff.
const (
	MaxDiffEntries = 200 // lines, cells, sheets, slides and items listed in one diff
	MaxDiffText    = 300 // runes of a line or field shown ("…" when cut)
	// maxDiffWork bounds the line diff's work ((lines) × (edit distance)):
	// past it, the changed stretch is shown as removed, then added.
	maxDiffWork = 20_000_000
)

// VersionDiff is what changed between two versions of a Note.
type VersionDiff struct {
	Title   *TextChange `json:"title,omitempty" description:"The title, when it changed"`
	Tabs    []TabDiff   `json:"tabs" nullable:"false" description:"The tabs that changed, in the strip's order after, then the tabs deleted"`
	Changes int         `json:"changes" description:"Every change found, listed or not"`
	Omitted int         `json:"omitted" description:"Changes left out of the lists (at most 200 are listed)"`
}

// TextChange is a text before and after.
type TextChange struct {
	Before string `json:"before"`
	After  string `json:"after"`
}

// TabDiff is what changed in one tab.
type TabDiff struct {
	TabID       string  `json:"tab_id"`
	Type        string  `json:"type"`
	Label       string  `json:"label" description:"The label after (before, for a tab deleted)"`
	Change      string  `json:"change" enum:"added,deleted,changed"`
	LabelBefore *string `json:"label_before,omitempty" description:"The label before, when the tab was renamed"`
	Moved       bool    `json:"moved,omitempty" description:"The tab moved in the strip"`
	// Exactly the lists of the tab's type may be set.
	Lines   []LineChange `json:"lines,omitempty" description:"markdown: the lines removed and added"`
	Sheets  []ItemChange `json:"sheets,omitempty" description:"sheet: sheets added, deleted or renamed"`
	Cells   []CellChange `json:"cells,omitempty" description:"sheet: the cells changed"`
	Slides  []ItemChange `json:"slides,omitempty" description:"slides: slides added, deleted, changed or moved"`
	Items   []ItemChange `json:"items,omitempty" description:"sources and files: items added, deleted or changed"`
	Changes int          `json:"changes" description:"The tab's changes, listed or not"`
	Omitted int          `json:"omitted,omitempty" description:"The tab's changes left out of its lists"`
}

// LineChange is one line removed or added.
type LineChange struct {
	Op   string `json:"op" enum:"removed,added"`
	Line int    `json:"line" description:"The line's number (from 1) in the version before (removed) or after (added)"`
	Text string `json:"text"`
}

// CellChange is one cell changed.
type CellChange struct {
	SheetID string `json:"sheet_id"`
	Sheet   string `json:"sheet" description:"The sheet's name"`
	Address string `json:"address" description:"A1 style: B3 is row 2, column 1"`
	Row     int    `json:"row"`
	Col     int    `json:"col"`
	Before  any    `json:"before"`
	After   any    `json:"after"`
}

// ItemChange is one sheet, slide, source or file added, deleted, changed
// or moved.
type ItemChange struct {
	ID     string        `json:"id"`
	Change string        `json:"change" enum:"added,deleted,changed,renamed,moved"`
	Name   string        `json:"name" description:"Its title or name"`
	Moved  bool          `json:"moved,omitempty" description:"A slide changed that also moved in the deck"`
	Fields []FieldChange `json:"fields,omitempty" description:"The fields that changed"`
}

// FieldChange is one field of an item, before and after.
type FieldChange struct {
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Side is a Note at one version as history keeps it: its head (nil: no
// Note yet) and the parts of it a diff reads.
type Side struct {
	Head  []byte
	Parts []Part
}

// Stored is d as a Side of every part: how a version stored whole (before
// Notes were stored by parts) is compared.
func Stored(d *Doc) (Side, error) {
	c := Clone(d)
	c.lay = nil
	w, err := Diff(&Doc{}, &c)
	if err != nil {
		return Side{}, err
	}
	s := Side{Head: c.lay.head}
	for _, p := range w.Parts {
		if p.Data != nil {
			s.Parts = append(s.Parts, Part{Key: p.Key, Data: p.Data})
		}
	}
	return s, nil
}

// DiffReads are the parts a diff must read on each side, given the keys
// the versions between wrote: those keys, and when the markdown changed
// every chunk of it (a line diff needs the whole text).
func DiffReads(headBefore, headAfter []byte, written []string) (before, after []string, err error) {
	hb, err := readHead(headBefore)
	if err != nil {
		return nil, nil, err
	}
	ha, err := readHead(headAfter)
	if err != nil {
		return nil, nil, err
	}
	before, after = slices.Clone(written), slices.Clone(written)
	if slices.ContainsFunc(written, func(k string) bool { return strings.HasPrefix(k, "m/") }) || !slices.Equal(hb.Chunks, ha.Chunks) {
		for _, id := range hb.Chunks {
			before = append(before, chunkKey(id))
		}
		for _, id := range ha.Chunks {
			after = append(after, chunkKey(id))
		}
	}
	// A deck whose order changed: its slides, to name the ones that moved.
	decks := map[string][]string{}
	for _, t := range hb.Tabs {
		decks[t.ID] = t.Slides
	}
	for _, t := range ha.Tabs {
		if was, ok := decks[t.ID]; ok && t.Type == TypeSlides && !slices.Equal(was, t.Slides) {
			for _, id := range was {
				before = append(before, slideKey(t.ID, id))
			}
			for _, id := range t.Slides {
				after = append(after, slideKey(t.ID, id))
			}
		}
	}
	slices.Sort(before)
	slices.Sort(after)
	return slices.Compact(before), slices.Compact(after), nil
}

func readHead(b []byte) (headDoc, error) {
	var h headDoc
	if b == nil {
		return h, nil
	}
	if !IsHead(b) {
		return h, fmt.Errorf("note head: a Note stored whole is compared with Stored")
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("note head: %w", err)
	}
	return h, nil
}

// differ is one diff being made: both sides, and the entries left.
type differ struct {
	hb, ha headDoc
	pb, pa map[string][]byte
	left   int
	out    VersionDiff
}

// DiffVersions is what changed from before to after.
func DiffVersions(before, after Side) (VersionDiff, error) {
	d := &differ{left: MaxDiffEntries, pb: partBytes(before.Parts), pa: partBytes(after.Parts)}
	var err error
	if d.hb, err = readHead(before.Head); err != nil {
		return VersionDiff{}, err
	}
	if d.ha, err = readHead(after.Head); err != nil {
		return VersionDiff{}, err
	}
	d.out.Tabs = []TabDiff{}
	if d.hb.Title != d.ha.Title {
		d.out.Title = &TextChange{Before: d.hb.Title, After: d.ha.Title}
		d.out.Changes++
	}
	beforeTabs := map[string]headTab{}
	var order []string
	for _, t := range d.hb.Tabs {
		beforeTabs[t.ID] = t
		order = append(order, t.ID)
	}
	afterIDs := map[string]bool{}
	var afterOrder []string
	for _, t := range d.ha.Tabs {
		afterIDs[t.ID] = true
		if _, ok := beforeTabs[t.ID]; ok {
			afterOrder = append(afterOrder, t.ID)
		}
	}
	kept := []string{}
	for _, id := range order {
		if afterIDs[id] {
			kept = append(kept, id)
		}
	}
	moved := notInCommonOrder(kept, afterOrder)
	for _, t := range d.ha.Tabs {
		bt, had := beforeTabs[t.ID]
		td := TabDiff{TabID: t.ID, Type: t.Type, Label: t.Label, Change: "changed"}
		var bp *headTab
		switch {
		case !had && before.Head == nil:
			td.Change = "added" // the Note's first version: nothing to count it against
		case !had:
			td.Change = "added"
			td.Changes++
		default:
			bp = &bt
			if bt.Label != t.Label {
				l := bt.Label
				td.LabelBefore = &l
				td.Changes++
			}
			if moved[t.ID] {
				td.Moved = true
				td.Changes++
			}
		}
		if err := d.tabContent(&td, bp, &t); err != nil {
			return VersionDiff{}, err
		}
		d.add(td)
	}
	for _, t := range d.hb.Tabs {
		if afterIDs[t.ID] {
			continue
		}
		td := TabDiff{TabID: t.ID, Type: t.Type, Label: t.Label, Change: "deleted", Changes: 1}
		if err := d.tabContent(&td, &t, nil); err != nil {
			return VersionDiff{}, err
		}
		d.add(td)
	}
	return d.out, nil
}

func (d *differ) add(td TabDiff) {
	if td.Changes == 0 {
		return // a tab as it was (or, in a Note's first version, one still empty)
	}
	d.out.Changes += td.Changes
	d.out.Omitted += td.Omitted
	d.out.Tabs = append(d.out.Tabs, td)
}

// entry counts one change of td and answers whether it is listed.
func (d *differ) entry(td *TabDiff) bool {
	td.Changes++
	if d.left == 0 {
		td.Omitted++
		return false
	}
	d.left--
	return true
}

func partBytes(ps []Part) map[string][]byte {
	m := make(map[string][]byte, len(ps))
	for _, p := range ps {
		if p.Data != nil {
			m[p.Key] = p.Data
		}
	}
	return m
}

// changedKeys are the keys under prefix whose bytes differ between the
// sides, sorted.
func (d *differ) changedKeys(prefix string) []string {
	var keys []string
	for _, m := range []map[string][]byte{d.pb, d.pa} {
		for k := range m {
			if strings.HasPrefix(k, prefix) && !bytes.Equal(d.pb[k], d.pa[k]) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// tabContent fills td with what changed inside the tab: bt and t are its
// head entries before and after (nil: it was not there).
func (d *differ) tabContent(td *TabDiff, bt, t *headTab) error {
	switch td.Type {
	case TypeMarkdown:
		return d.markdown(td)
	case TypeSheet:
		return d.sheet(td, bt, t)
	case TypeSlides:
		return d.slides(td, bt, t)
	case TypeSources:
		return diffList(d, td, "src", func(s Source) (string, string, []FieldChange) {
			return s.ID, s.Title, []FieldChange{{Field: "title", After: s.Title}, {Field: "url", After: s.URL}}
		})
	case TypeFiles:
		return diffList(d, td, "fil", func(f File) (string, string, []FieldChange) {
			return f.ID, f.Name, []FieldChange{{Field: "name", After: f.Name}, {Field: "content_type", After: f.ContentType},
				{Field: "size_bytes", After: strconv.FormatInt(f.SizeBytes, 10)}, {Field: "sha256", After: f.SHA256}}
		})
	}
	return nil
}

func chunksText(chunks []int, m map[string][]byte) (string, error) {
	var b strings.Builder
	for _, id := range chunks {
		data, ok := m[chunkKey(id)]
		if !ok {
			return "", missing(chunkKey(id))
		}
		b.Write(data)
	}
	return b.String(), nil
}

func (d *differ) markdown(td *TabDiff) error {
	if len(d.changedKeys("m/")) == 0 && slices.Equal(d.hb.Chunks, d.ha.Chunks) {
		return nil
	}
	a, err := chunksText(d.hb.Chunks, d.pb)
	if err != nil {
		return err
	}
	b, err := chunksText(d.ha.Chunks, d.pa)
	if err != nil {
		return err
	}
	if a == b {
		return nil
	}
	for _, e := range diffLines(splitLines(a), splitLines(b)) {
		if d.entry(td) {
			td.Lines = append(td.Lines, LineChange{Op: e.op, Line: e.line, Text: cut(e.text)})
		}
	}
	return nil
}

// splitLines cuts text into lines without their "\n" ("" is no line).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// bothSides is what of says of a tab's head entry before and after (nil
// where the tab was not).
func bothSides[T any](bt, t *headTab, of func(*headTab) []T) (before, after []T) {
	if bt != nil {
		before = of(bt)
	}
	if t != nil {
		after = of(t)
	}
	return before, after
}

func (d *differ) sheet(td *TabDiff, bt, t *headTab) error {
	before, after := bothSides(bt, t, func(h *headTab) []headSheet { return h.Sheets })
	names := map[string]string{}
	had := map[string]headSheet{}
	for _, s := range before {
		had[s.ID], names[s.ID] = s, s.Name
	}
	now := map[string]bool{}
	var ids []string // the sheets whose cells are compared: after's order, then the deleted
	for _, s := range after {
		now[s.ID], names[s.ID] = true, s.Name
		ids = append(ids, s.ID)
		b, ok := had[s.ID]
		switch {
		case !ok && bt != nil:
			if d.entry(td) {
				td.Sheets = append(td.Sheets, ItemChange{ID: s.ID, Change: "added", Name: s.Name})
			}
		case ok && b.Name != s.Name:
			if d.entry(td) {
				td.Sheets = append(td.Sheets, ItemChange{ID: s.ID, Change: "renamed", Name: s.Name, Fields: []FieldChange{{Field: "name", Before: b.Name, After: s.Name}}})
			}
		}
	}
	for _, s := range before {
		if !now[s.ID] {
			ids = append(ids, s.ID)
			if t != nil && d.entry(td) {
				td.Sheets = append(td.Sheets, ItemChange{ID: s.ID, Change: "deleted", Name: s.Name})
			}
		}
	}
	for _, id := range ids {
		if err := d.cells(td, id, names[id]); err != nil {
			return err
		}
	}
	return nil
}

// cells lists the cells of one sheet that differ, by row then column.
func (d *differ) cells(td *TabDiff, sheetID, name string) error {
	prefix := blockPrefix(td.TabID, sheetID)
	byRow := map[int][]int{} // block row → block columns changed
	for _, k := range d.changedKeys(prefix) {
		if strings.HasSuffix(k, "v") {
			continue // computed values: what changed is the cells they are computed from
		}
		brs, bcs, ok := strings.Cut(strings.TrimPrefix(k, prefix), ".")
		br, err1 := strconv.Atoi(brs)
		bc, err2 := strconv.Atoi(bcs)
		if !ok || err1 != nil || err2 != nil || br < 0 || bc < 0 {
			return fmt.Errorf("note part %s: not a block key", k)
		}
		byRow[br] = append(byRow[br], bc)
	}
	brs := make([]int, 0, len(byRow))
	for br := range byRow {
		brs = append(brs, br)
	}
	slices.Sort(brs)
	for _, br := range brs {
		// One block row at a time, so its changes list by row, then column.
		var found []CellChange
		for _, bc := range byRow[br] {
			key := blockKey(td.TabID, sheetID, br, bc)
			a, err := blockOf(key, d.pb[key])
			if err != nil {
				return err
			}
			b, err := blockOf(key, d.pa[key])
			if err != nil {
				return err
			}
			for i := range max(len(a), len(b)) {
				ra, rb := rowOf(a, i), rowOf(b, i)
				for j := range max(len(ra), len(rb)) {
					x, y := cellOf(ra, j), cellOf(rb, j)
					if cellEqual(x, y) {
						continue
					}
					r, c := br*BlockRows+i, bc*BlockCols+j
					found = append(found, CellChange{SheetID: sheetID, Sheet: name, Address: CellAddress(r, c), Row: r, Col: c, Before: cutCell(x), After: cutCell(y)})
				}
			}
		}
		slices.SortFunc(found, func(x, y CellChange) int {
			if x.Row != y.Row {
				return x.Row - y.Row
			}
			return x.Col - y.Col
		})
		for _, c := range found {
			if d.entry(td) {
				td.Cells = append(td.Cells, c)
			}
		}
	}
	return nil
}

func blockOf(key string, data []byte) ([][]any, error) {
	if data == nil {
		return nil, nil
	}
	segs, err := decodeBlock(data)
	if err != nil {
		return nil, fmt.Errorf("note part %s: %w", key, err)
	}
	return segs, nil
}

func rowOf(segs [][]any, i int) []any {
	if i < len(segs) {
		return segs[i]
	}
	return nil
}

func cellOf(row []any, j int) any {
	if j < len(row) {
		return row[j]
	}
	return nil
}

// CellAddress is row r, column c (from 0) in A1 style: (2, 1) is "B3".
func CellAddress(r, c int) string {
	col := ""
	for n := c + 1; n > 0; n = (n - 1) / 26 {
		col = string(rune('A'+(n-1)%26)) + col
	}
	return col + strconv.Itoa(r+1)
}

func (d *differ) slides(td *TabDiff, bt, t *headTab) error {
	before, after := bothSides(bt, t, func(h *headTab) []string { return h.Slides })
	slide := func(m map[string][]byte, key string) (*Slide, error) {
		data, ok := m[key]
		if !ok {
			return nil, nil
		}
		var s Slide
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("note part %s: %w", key, err)
		}
		return &s, nil
	}
	inBefore := map[string]bool{}
	for _, id := range before {
		inBefore[id] = true
	}
	inAfter := map[string]bool{}
	var keptAfter []string
	for _, id := range after {
		inAfter[id] = true
		if inBefore[id] {
			keptAfter = append(keptAfter, id)
		}
	}
	var keptBefore []string
	for _, id := range before {
		if inAfter[id] {
			keptBefore = append(keptBefore, id)
		}
	}
	moved := notInCommonOrder(keptBefore, keptAfter)
	changed := map[string]bool{}
	for _, k := range d.changedKeys(slidePrefix(td.TabID)) {
		changed[strings.TrimPrefix(k, slidePrefix(td.TabID))] = true
	}
	ids := slices.Clone(after)
	for _, id := range before {
		if !inAfter[id] {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		key := slideKey(td.TabID, id)
		var c ItemChange
		switch {
		case !inBefore[id]:
			s, err := slide(d.pa, key)
			if err != nil || s == nil {
				return orMissing(err, key)
			}
			c = ItemChange{ID: id, Change: "added", Name: s.Title, Fields: slideFields(Slide{}, *s)}
		case !inAfter[id]:
			s, err := slide(d.pb, key)
			if err != nil || s == nil {
				return orMissing(err, key)
			}
			c = ItemChange{ID: id, Change: "deleted", Name: s.Title}
		case changed[id]:
			a, err := slide(d.pb, key)
			if err != nil || a == nil {
				return orMissing(err, key)
			}
			b, err := slide(d.pa, key)
			if err != nil || b == nil {
				return orMissing(err, key)
			}
			c = ItemChange{ID: id, Change: "changed", Name: b.Title, Fields: slideFields(*a, *b), Moved: moved[id]}
			if len(c.Fields) == 0 {
				c.Moved = false
				if !moved[id] {
					continue
				}
				c.Change = "moved"
			}
		case moved[id]:
			// Its part is not read when only the order changed: the title
			// is what either side read, if any.
			c = ItemChange{ID: id, Change: "moved"}
			for _, m := range []map[string][]byte{d.pa, d.pb} {
				if s, err := slide(m, key); err == nil && s != nil {
					c.Name = s.Title
					break
				}
			}
		default:
			continue
		}
		if d.entry(td) {
			td.Slides = append(td.Slides, c)
		}
	}
	return nil
}

func orMissing(err error, key string) error {
	if err != nil {
		return err
	}
	return missing(key)
}

func slidePrefix(tab string) string { return "s/" + tab + "/" }

func slideFields(a, b Slide) []FieldChange {
	var out []FieldChange
	for _, f := range []struct{ name, a, b string }{{"title", a.Title, b.Title}, {"body", a.Body, b.Body}, {"notes", a.Notes, b.Notes}, {"layout", a.Layout, b.Layout}, {"theme", a.Theme, b.Theme}} {
		if f.a != f.b {
			out = append(out, FieldChange{Field: f.name, Before: cut(f.a), After: cut(f.b)})
		}
	}
	return out
}

// diffList compares the list kept in part key (sources, files) by item ID;
// fields says an item's ID, name and fields (each in After).
func diffList[T any](d *differ, td *TabDiff, key string, fields func(T) (string, string, []FieldChange)) error {
	if bytes.Equal(d.pb[key], d.pa[key]) {
		return nil
	}
	read := func(data []byte) ([]T, error) {
		var l []T
		if data == nil {
			return nil, nil
		}
		if err := json.Unmarshal(data, &l); err != nil {
			return nil, fmt.Errorf("note part %s: %w", key, err)
		}
		return l, nil
	}
	a, err := read(d.pb[key])
	if err != nil {
		return err
	}
	b, err := read(d.pa[key])
	if err != nil {
		return err
	}
	had := map[string][]FieldChange{}
	for _, x := range a {
		id, _, fs := fields(x)
		had[id] = fs
	}
	now := map[string]bool{}
	for _, x := range b {
		id, name, fs := fields(x)
		now[id] = true
		old, ok := had[id]
		c := ItemChange{ID: id, Name: name, Change: "added"}
		if ok {
			c.Change = "changed"
			for i := range fs {
				if fs[i].After != old[i].After {
					c.Fields = append(c.Fields, FieldChange{Field: fs[i].Field, Before: cut(old[i].After), After: cut(fs[i].After)})
				}
			}
			if len(c.Fields) == 0 {
				continue
			}
		}
		if d.entry(td) {
			td.Items = append(td.Items, c)
		}
	}
	for _, x := range a {
		if id, name, _ := fields(x); !now[id] && d.entry(td) {
			td.Items = append(td.Items, ItemChange{ID: id, Name: name, Change: "deleted"})
		}
	}
	return nil
}

// notInCommonOrder is the IDs (each in both lists) that a longest common
// subsequence of the two orders leaves out: the ones that moved.
func notInCommonOrder(a, b []string) map[string]bool {
	n, m := len(a), len(b)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	stay := map[string]bool{}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			stay[a[i]] = true
			i, j = i+1, j+1
		case l[i+1][j] >= l[i][j+1]:
			i++
		default:
			j++
		}
	}
	out := map[string]bool{}
	for _, id := range a {
		if !stay[id] {
			out[id] = true
		}
	}
	return out
}

// cut is s shown in a diff: at most MaxDiffText runes.
func cut(s string) string { return problem.Clip(s, MaxDiffText) }

func cutCell(v any) any {
	if s, ok := v.(string); ok {
		return cut(s)
	}
	return v
}

// lineEdit is one line of a line diff.
type lineEdit struct {
	op   string // "removed" or "added"
	line int    // from 1, in a (removed) or b (added)
	text string
}

// diffLines is a shortest edit script from a to b (Myers), each stretch of
// changes as its removed lines, then its added ones. The lines both share
// at the start and the end are set aside first; when the rest would take
// more than maxDiffWork, it is shown as removed, then added.
func diffLines(a, b []string) []lineEdit {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	var out []lineEdit
	hunk := func(rem, add []int) {
		for _, i := range rem {
			out = append(out, lineEdit{"removed", p + i + 1, ma[i]})
		}
		for _, j := range add {
			out = append(out, lineEdit{"added", p + j + 1, mb[j]})
		}
	}
	script, ok := myers(ma, mb)
	if !ok {
		script = script[:0]
		for i := range ma {
			script = append(script, myersEdit{del: true, i: i})
		}
		for j := range mb {
			script = append(script, myersEdit{i: len(ma), j: j})
		}
	}
	// A stretch of changes is edits that follow each other with no line
	// kept between: shown as its removed lines, then its added ones.
	var rem, add []int
	endI, endJ := -1, -1
	for _, e := range script {
		if (e.i != endI || e.j != endJ) && len(rem)+len(add) > 0 {
			hunk(rem, add)
			rem, add = nil, nil
		}
		if e.del {
			rem = append(rem, e.i)
			endI, endJ = e.i+1, e.j
		} else {
			add = append(add, e.j)
			endI, endJ = e.i, e.j+1
		}
	}
	hunk(rem, add)
	return out
}

// myersEdit is one step of an edit script: delete a[i] (del) or insert
// b[j]; (i, j) is the point of the edit graph it leaves from.
type myersEdit struct {
	del  bool
	i, j int
}

// myers is Myers' O((N+M)·D) shortest edit script from a to b, or false
// when that would take more than maxDiffWork.
func myers(a, b []string) ([]myersEdit, bool) {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil, true
	}
	maxD := n + m
	if n+m > 0 {
		maxD = min(maxD, maxDiffWork/(n+m))
	}
	var trace [][]int // trace[d][k+d]: the furthest x on diagonal k after d edits
	for d := 0; d <= maxD; d++ {
		v := make([]int, 2*d+1)
		for k := -d; k <= d; k += 2 {
			var x int
			switch {
			case d == 0:
				x = 0
			case k == -d || (k != d && trace[d-1][k-1+d-1] < trace[d-1][k+1+d-1]):
				x = trace[d-1][k+1+d-1] // down: an insertion
			default:
				x = trace[d-1][k-1+d-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[k+d] = x
			if x >= n && y >= m {
				trace = append(trace, v)
				return backtrack(trace, n, m), true
			}
		}
		trace = append(trace, v)
	}
	return nil, false
}

func backtrack(trace [][]int, n, m int) []myersEdit {
	var out []myersEdit
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		k := x - y
		pk := k - 1 // came right: a deletion
		if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
			pk = k + 1 // came down: an insertion
		}
		px := prev[pk+d-1]
		py := px - pk
		out = append(out, myersEdit{del: pk == k-1, i: px, j: py})
		x, y = px, py
	}
	slices.Reverse(out)
	return out
}
