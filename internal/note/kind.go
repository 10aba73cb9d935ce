package note

// kind is what a tab type is, in one place: how its data is stored as parts
// and read back. The tab types are the keys of kinds; a new type is a new
// kind_*.go file and an entry here.
type kind struct {
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
