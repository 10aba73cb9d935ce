// Package note is the Note domain: tabs and their IDs, the edit operations as
// pure functions over plain data, and the limits of SPEC §7. Nothing here does
// I/O, so the same code serves the store, the tools, tests and simulations.
package note

// Tab types. markdown, files and sources are fixed: every Note has exactly one
// of each, with the tab ID equal to the type name.
const (
	TypeMarkdown = "markdown"
	TypeFiles    = "files"
	TypeSources  = "sources"
	TypeSlides   = "slides"
	TypeSheet    = "sheet"
)

// Limits (SPEC §7 and the README's table). Errors that enforce them name the
// field and the limit. Lengths in characters are Unicode code points
// (utf8.RuneCountInString); every text that is stored also has a byte limit,
// so no field, cell or Note can grow without bound.
const (
	MaxOutlineSlides = 20  // slides in one slides_add_outline or create_note_tab call
	MaxRangeRows     = 100 // rows in one read_sheet_range or sheet_set_range call
	MaxRangeCols     = 100 // columns in one such call
	MaxMarkdownBytes = 1 << 20

	MaxTitleRunes = 200 // a Note's title
	MaxTitleBytes = 800
	MaxLabelRunes = 100 // a tab label
	MaxLabelBytes = 400

	MaxSlideTitleRunes = 500    // a slide's title
	MaxSlideTextRunes  = 20_000 // a slide's body or notes
	MaxSlideTextBytes  = 64 << 10
	MaxSlidesPerTab    = 200 // a whole deck, however it was written

	MaxCellBytes      = 32 << 10 // a string cell
	MaxSheetCells     = 1_000_000
	MaxSheetsPerTab   = 20 // sheets in one sheet tab
	MaxSheetNameRunes = MaxLabelRunes
	MaxSheetNameBytes = MaxLabelBytes

	MaxSourceTitleRunes = 500
	MaxSourceTitleBytes = 2000

	MaxTabsPerNote = 100      // the whole tab strip, the three fixed tabs included
	MaxNoteBytes   = 16 << 20 // the whole Note, as stored (JSON)
)

// Doc is the whole state of a Note except its version, which the store owns.
// The order of Tabs is the tab strip, left to right.
type Doc struct {
	Title    string `json:"title"`
	Tabs     []Tab  `json:"tabs"`
	NextTabN int    `json:"next_tab_n"` // per-Note counter for tab IDs; never goes down
	Markdown string `json:"markdown"`   // data of the fixed markdown tab
	// TextRev counts the change sets applied to Markdown (see the
	// service's text log): the version live editors of the text sync by.
	// It is stored in the head, and is no part of the Note's content: a
	// copy, an export or a restore never carries it.
	TextRev  int64    `json:"-"`
	Sources  []Source `json:"sources"`   // data of the fixed sources tab, oldest first
	Files    []File   `json:"files"`     // data of the fixed files tab, oldest first
	NextItem int      `json:"next_item"` // counter for slide, sheet, source and file IDs

	lay *layout // how this Doc is stored (parts.go); nil if it never was
}

// Tab is one entry of the tab strip. Slides and Sheets hold the data of
// slides and sheet tabs; fixed tabs keep their data on Doc.
type Tab struct {
	ID     string  `json:"tab_id"`
	Type   string  `json:"type"`
	Label  string  `json:"label"`
	Slides []Slide `json:"slides,omitempty"`
	Sheets []Sheet `json:"sheets,omitempty"`

	calc *calcBox // a sheet tab's formula graph, when one was built (calc.go)
}

// Slide is what the connector may write: title, body, notes. Layout and theme
// are set by people in the editor (one of SlideLayouts and SlideThemes, or
// "" for the default); no agent write sets them, and replace_tab_data keeps
// them (keepLooks).
type Slide struct {
	ID     string `json:"slide_id"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	Notes  string `json:"notes"`
	Layout string `json:"layout,omitempty"`
	Theme  string `json:"theme,omitempty"`
}

// Sheet is one sheet of a sheet tab. Cells are addressed by 0-based row and
// column; a cell is a string, float64, bool or nil (JSON scalars), and a
// string that starts with "=" is a formula.
//
// Values holds, beside Cells, the computed value of each formula cell
// (nil elsewhere, and nil where a formula was not computed yet); Recalc
// keeps it. Widths and Formats are how people lay the sheet out: column
// widths in pixels by column index ("0" is column A), and number formats
// over ranges, a later one winning where they overlap.
type Sheet struct {
	ID      string         `json:"sheet_id"`
	Name    string         `json:"name"`
	Cells   [][]any        `json:"cells"`
	Values  [][]any        `json:"values,omitempty"`
	Widths  map[string]int `json:"widths,omitempty"`
	Formats []CellFormat   `json:"formats,omitempty"`
}

// CellFormat is a number format over a range of a sheet.
type CellFormat struct {
	Range  string `json:"range" description:"cells in A1 notation, e.g. B2:C9 or B2"`
	Format string `json:"format" enum:"number,percent,currency,date"`
}

// Source is a citation on the sources tab.
type Source struct {
	ID      string `json:"source_id"`
	Title   string `json:"title"`
	URL     string `json:"url"`
	NormURL string `json:"normalized_url"`
	AddedAt string `json:"added_at"` // RFC 3339, UTC
}

// File is attachment metadata. The content lives in the store's blob table and
// never crosses the agent channel.
type File struct {
	ID          string `json:"file_id"`
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	SizeBytes   int64  `json:"size_bytes"`
	SHA256      string `json:"sha256"`
	AddedAt     string `json:"added_at"`
}
