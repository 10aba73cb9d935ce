package note

import "encoding/json"

// kind is what a tab type is, in one place: its default label, whether
// every Note has it, the operations that edit it, how a new tab starts, how
// replace_tab_data replaces its data, what read_note_tab answers, and how
// its data is stored as parts and read back. The tab types are the keys of
// kinds; a new type is a new kind_*.go file and an entry here. The
// operations themselves run through the one guarded write.
type kind struct {
	// label is the default label of a new tab; "" for the fixed tabs.
	label string
	// fixed: every Note has exactly one such tab, whose ID is the type.
	fixed bool
	// ops are the edit operations that work on this kind (read_sheet_range
	// included, for the sheet), and fits how a refusal names them.
	ops  []string
	fits string
	// create fills a new tab (an outline only for slides); nil: tabs of
	// this kind can't be created.
	create func(d *Doc, t *Tab, outline []SlideInput)
	// checkData and replaceData are replace_tab_data on this kind (nil:
	// not replaceable).
	checkData   func(data json.RawMessage) (TabData, error)
	replaceData func(d *Doc, t *Tab, td TabData)
	// read fills what read_note_tab answers for tab t.
	read func(d *Doc, t *Tab, c *Content)

	// diff writes the parts of tab t of next that differ from bt, the same
	// tab in base (nil: none stored), and fills t's entry in the head.
	diff func(w *writer, base, next *Doc, bt, t *Tab, ht *headTab) error
	// assemble builds tab t (and, for fixed tabs, its data on d) from its
	// head entry and the parts read.
	assemble func(a *assembler, d *Doc, t *Tab, ht headTab) error
	// prefix is the key prefix of all parts of the tab with this ID, for
	// removing a deleted tab's parts (nil: the kind's tab is fixed).
	prefix func(tabID string) string
}

var kinds = map[string]*kind{
	TypeMarkdown: &markdownKind,
	TypeSlides:   &slidesKind,
	TypeSheet:    &sheetKind,
	TypeSources:  &sourcesKind,
	TypeFiles:    &filesKind,
}

// Content is one tab's data as read_note_tab answers it: exactly one field
// is set, by the tab's kind.
type Content struct {
	Text    *string
	Slides  []Slide
	Sheets  []Sheet
	Sources []Source
	Files   []File
}

// Read returns tab t's data.
func Read(d *Doc, t *Tab) Content {
	var c Content
	if k, ok := kinds[t.Type]; ok && k.read != nil {
		k.read(d, t, &c)
	}
	return c
}

// isFixed: every Note has exactly one tab of this type.
func isFixed(typ string) bool {
	k, ok := kinds[typ]
	return ok && k.fixed
}
