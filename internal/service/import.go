package service

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// Reading an archive back: every input is hostile. An entry's name must be
// a clean relative path (no "..", no absolute path, no backslash, valid
// UTF-8); every entry is read through a limit whatever size it claims (a
// zip bomb stops at the limit); every value passes the same checks as the
// write that would have made it; a Note is created in one guarded write,
// with all its tabs, or not at all. What cannot be read is reported by the
// entry's name, and the other Notes of the archive are still imported.

// Limits of an archive.
const (
	MaxArchiveEntries   = 100_000 // entries of one archive
	MaxManifestBytes    = 1 << 20 // one note.json
	MaxTabEntryBytes    = note.MaxNoteBytes
	MaxImportNotesBytes = 64 << 30 // everything read from one archive
)

// Archive is what an import reads: the names of its entries (as stored,
// not yet trusted) and each entry's bytes.
type Archive interface {
	Names() []string
	Open(name string) (io.ReadCloser, error)
}

// ZipArchive is an Archive over a zip.
type ZipArchive struct {
	byName map[string]*zip.File
	names  []string
}

// NewZipArchive reads the zip's directory; a name stored twice is kept
// once, and reported by the import as a duplicate.
func NewZipArchive(r *zip.Reader) *ZipArchive {
	z := &ZipArchive{byName: make(map[string]*zip.File, len(r.File))}
	for _, f := range r.File {
		z.names = append(z.names, f.Name)
		if _, dup := z.byName[f.Name]; !dup {
			z.byName[f.Name] = f
		}
	}
	return z
}

// Names are the zip's entries, in its order.
func (z *ZipArchive) Names() []string { return z.names }

// Open reads one entry, decompressed.
func (z *ZipArchive) Open(name string) (io.ReadCloser, error) {
	f, ok := z.byName[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return f.Open()
}

// FolderArchive is an Archive over a folder, read through os.Root: a
// symbolic link out of the folder is not followed.
type FolderArchive struct {
	root  *os.Root
	names []string
}

// OpenFolderArchive lists the regular files under dir.
func OpenFolderArchive(dir string) (*FolderArchive, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	a := &FolderArchive{root: root}
	err = fs.WalkDir(root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0 {
			if len(a.names) >= MaxArchiveEntries {
				return fmt.Errorf("the folder %s holds more than %d files, the most one archive may", dir, MaxArchiveEntries)
			}
			a.names = append(a.names, p)
		}
		return nil
	})
	if err != nil {
		root.Close()
		return nil, err
	}
	return a, nil
}

// Names are the folder's files, slash-separated, in lexical order.
func (a *FolderArchive) Names() []string { return a.names }

// Open reads one file; a name leaving the folder is refused by os.Root.
func (a *FolderArchive) Open(name string) (io.ReadCloser, error) {
	f, err := a.root.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Close releases the folder.
func (a *FolderArchive) Close() error { return a.root.Close() }

// Imported is one Note an import created.
type Imported struct {
	From    string `json:"from"` // the exported Note's ID
	NoteID  string `json:"note_id"`
	Title   string `json:"title"`
	Version int64  `json:"version"`
}

// EntryProblem is one entry an import could not read, and why.
type EntryProblem struct {
	Entry  string `json:"entry"`
	Reason string `json:"reason"`
}

func (p EntryProblem) String() string { return p.Entry + ": " + p.Reason }

// ImportResult is what an import did: the Notes it created, and the
// entries it refused (the Note an entry belongs to was not created).
type ImportResult struct {
	Notes    []Imported     `json:"notes"`
	Problems []EntryProblem `json:"problems,omitempty"`
	// Skipped are entries in no Note's folder, which the import did not
	// read (a stray file beside the Notes).
	Skipped []EntryProblem `json:"skipped,omitempty"`
}

// ImportOptions are an import's options.
type ImportOptions struct {
	// Progress, if set, hears of each Note created.
	Progress func(done int, n Imported)
}

// ImportArchive reads every Note of a into new Notes of c's workspace
// (new IDs, connected access off), each in one guarded write. An error is
// an archive that could not be read at all; a Note that could not be is
// in the result's Problems, by entry.
func (s *Service) ImportArchive(ctx context.Context, c Caller, a Archive, o ImportOptions) (ImportResult, error) {
	if err := c.personOnly("importing Notes"); err != nil {
		return ImportResult{}, err
	}
	names := a.Names()
	if len(names) > MaxArchiveEntries {
		return ImportResult{}, problem.New(problem.Limit, "archive", "the archive has %d entries; at most %d", len(names), MaxArchiveEntries)
	}
	res := ImportResult{Notes: []Imported{}}
	seen := map[string]bool{}
	var valid []string
	for _, n := range names {
		if strings.HasSuffix(n, "/") && n != "/" && entryName(strings.TrimSuffix(n, "/")) == nil {
			continue // a zip's folder entry
		}
		if err := entryName(n); err != nil {
			res.Problems = append(res.Problems, EntryProblem{Entry: printable(n), Reason: err.Error()})
			continue
		}
		if seen[n] {
			res.Problems = append(res.Problems, EntryProblem{Entry: n, Reason: "the archive holds this name twice; the first one is read"})
			continue
		}
		seen[n] = true
		valid = append(valid, n)
	}
	// A Note is a folder with a note.json, at any depth (an export's
	// folder zipped whole puts its Notes one level down); a note.json
	// inside a Note's folder is that Note's content, not another Note.
	isNote := map[string]bool{}
	var order []string
	for _, n := range valid {
		if path.Base(n) == "note.json" && path.Dir(n) != "." {
			isNote[path.Dir(n)] = true
			order = append(order, path.Dir(n))
		}
	}
	noteOf := func(n string) string {
		out := ""
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			if isNote[d] {
				out = d // the outermost
			}
		}
		return out
	}
	order = slices.DeleteFunc(order, func(d string) bool { return noteOf(d+"/note.json") != d })
	for _, n := range valid {
		if noteOf(n) == "" {
			res.Skipped = append(res.Skipped, EntryProblem{Entry: n, Reason: "not in a Note's folder (a folder with a note.json), so not read"})
		}
	}
	im := importer{s: s, c: c, a: a, seen: seen}
	for _, dir := range order {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		n, p := im.note(ctx, dir)
		if p != nil {
			res.Problems = append(res.Problems, *p)
			if im.budgetSpent {
				return res, fmt.Errorf("the archive holds more than %d bytes, the most one import reads", MaxImportNotesBytes)
			}
			continue
		}
		res.Notes = append(res.Notes, n)
		if o.Progress != nil {
			o.Progress(len(res.Notes), n)
		}
	}
	return res, nil
}

// entryName refuses an entry name that is not a clean relative path.
func entryName(n string) error {
	switch {
	case !utf8.ValidString(n):
		return errors.New("the name is not valid UTF-8")
	case strings.Contains(n, `\`):
		return errors.New(`the name holds a backslash; entries are named with "/"`)
	case strings.HasPrefix(n, "/"):
		return errors.New("the name is an absolute path; entries are relative to the archive")
	case !fs.ValidPath(n) || n == ".":
		return errors.New(`the name is not a clean relative path (a ".." or "." segment, or an empty one): it could write outside the archive, so it is not read`)
	}
	for _, r := range n {
		if note.IsHiddenRune(r) {
			return fmt.Errorf("the name holds the control or bidi character %U", r)
		}
	}
	return nil
}

// printable is a refused name as a report can show it.
func printable(n string) string {
	return problem.Excerpt(strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if note.IsHiddenRune(r) {
			return '?'
		}
		return r
	}, n), "?"))
}

type importer struct {
	s           *Service
	c           Caller
	a           Archive
	seen        map[string]bool
	read        int64 // bytes read from the archive so far
	budgetSpent bool
}

// entryErr is a problem with one entry.
type entryErr struct {
	entry string
	err   error
}

func (e *entryErr) Error() string { return e.entry + ": " + e.err.Error() }

func fail(entry string, format string, args ...any) error {
	return &entryErr{entry: entry, err: fmt.Errorf(format, args...)}
}

// open opens an entry the archive lists.
func (im *importer) open(name string) (io.ReadCloser, error) {
	if !im.seen[name] {
		return nil, fail(name, "the archive has no such entry (note.json names it)")
	}
	rc, err := im.a.Open(name)
	if err != nil {
		return nil, fail(name, "can't be read: %v", err)
	}
	return rc, nil
}

// readAll reads an entry of at most limit bytes, whatever size it claims.
func (im *importer) readAll(name string, limit int64) ([]byte, error) {
	rc, err := im.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	im.read += int64(len(b))
	if err != nil {
		return nil, fail(name, "can't be read: %v", err)
	}
	if int64(len(b)) > limit {
		return nil, fail(name, "is over %d bytes, the most this entry may hold", limit)
	}
	if im.read > MaxImportNotesBytes {
		im.budgetSpent = true
		return nil, fail(name, "the archive holds more than %d bytes, the most one import reads", MaxImportNotesBytes)
	}
	return b, nil
}

// decode reads a JSON entry strictly: unknown fields are refused, so
// content is never silently dropped.
func (im *importer) decode(name string, limit int64, v any) error {
	b, err := im.readAll(name, limit)
	if err != nil {
		return err
	}
	if !utf8.Valid(b) {
		return fail(name, "is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fail(name, "is not the JSON an export writes: %v", err)
	}
	if dec.More() {
		return fail(name, "has more after its JSON value")
	}
	return nil
}

// note imports the Note in folder dir.
func (im *importer) note(ctx context.Context, dir string) (Imported, *EntryProblem) {
	n, err := im.build(ctx, dir)
	if err != nil {
		var ee *entryErr
		if errors.As(err, &ee) {
			return Imported{}, &EntryProblem{Entry: ee.entry, Reason: ee.err.Error()}
		}
		return Imported{}, &EntryProblem{Entry: dir + "/", Reason: err.Error()}
	}
	return n, nil
}

// build reads the Note of folder dir, checks all of it, stores its files'
// bytes, and creates the Note in one guarded write.
func (im *importer) build(ctx context.Context, dir string) (Imported, error) {
	mname := dir + "/note.json"
	var m noteManifest
	if err := im.decode(mname, MaxManifestBytes, &m); err != nil {
		return Imported{}, err
	}
	if m.Format != ExportFormat {
		return Imported{}, fail(mname, "format is %s, not %q: this is not a Foundry Note export", note.Quote(problem.Excerpt(m.Format)), ExportFormat)
	}
	if m.FormatVersion < 1 || m.FormatVersion > ExportFormatVersion {
		return Imported{}, fail(mname, "format_version is %d; this Foundry reads format version 1 to %d: import it with a newer Foundry", m.FormatVersion, ExportFormatVersion)
	}
	title, err := note.CheckTitle(m.Title)
	if err != nil {
		return Imported{}, fail(mname, "title: %s", reason(err))
	}
	if len(m.Tabs) > note.MaxTabsPerNote {
		return Imported{}, fail(mname, "has %d tabs; a Note holds at most %d", len(m.Tabs), note.MaxTabsPerNote)
	}
	now := im.s.Now()
	d := note.New(title)
	fixed := map[string]bool{}
	ids := make([]string, 0, len(m.Tabs)) // the new tab IDs, in the archive's order
	for i, mt := range m.Tabs {
		where := fmt.Sprintf("tabs[%d]", i)
		switch mt.Type {
		case note.TypeMarkdown, note.TypeFiles, note.TypeSources:
			if fixed[mt.Type] {
				return Imported{}, fail(mname, "%s: a second %s tab; a Note has exactly one", where, mt.Type)
			}
			fixed[mt.Type] = true
			if err := note.RenameTab(&d, mt.Type, mt.Label); err != nil {
				return Imported{}, fail(mname, "%s.label: %s", where, reason(err))
			}
			ids = append(ids, mt.Type)
		case note.TypeSlides, note.TypeSheet:
			t, err := note.CreateTab(&d, mt.Type, mt.Label, nil, now)
			if err != nil {
				return Imported{}, fail(mname, "%s: %s", where, reason(err))
			}
			ids = append(ids, t.ID)
		default:
			return Imported{}, fail(mname, "%s: the tab type %s is not one Foundry knows (markdown, sheet, slides, sources, files)", where, note.Quote(problem.Excerpt(mt.Type)))
		}
		if err := entryName(dir + "/" + mt.File); err != nil || mt.File == "" {
			return Imported{}, fail(mname, "%s.file %s: not a clean relative path in the Note's folder", where, note.Quote(problem.Excerpt(mt.File)))
		}
		entry := dir + "/" + mt.File
		tabID := ids[len(ids)-1]
		if err := im.tab(ctx, &d, tabID, mt.Type, entry, now); err != nil {
			return Imported{}, err
		}
	}
	for _, typ := range []string{note.TypeMarkdown, note.TypeFiles, note.TypeSources} {
		if !fixed[typ] {
			return Imported{}, fail(mname, "tabs: the %s tab is missing; every Note has one", typ)
		}
	}
	// The tab strip in the archive's order.
	pos := make(map[string]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	sort.SliceStable(d.Tabs, func(i, j int) bool { return pos[d.Tabs[i].ID] < pos[d.Tabs[j].ID] })

	check := note.Clone(&d)
	w, err := note.Diff(&note.Doc{}, &check)
	if err != nil {
		return Imported{}, fail(mname, "%v", err)
	}
	if err := note.CheckSize(w.Bytes, 0, "note"); err != nil {
		return Imported{}, fail(mname, "%s", reason(err))
	}
	res, err := im.s.CreateNoteFrom(ctx, im.c, CreateNoteArgs{Title: title}, func(nd *note.Doc) error {
		*nd = d
		return nil
	})
	if err != nil {
		return Imported{}, fail(mname, "the Note was not created: %s", reason(err))
	}
	return Imported{From: printable(m.NoteID), NoteID: res.NoteID, Title: res.Title, Version: res.Version}, nil
}

// tab reads one tab's content from entry into tab tabID of d.
func (im *importer) tab(ctx context.Context, d *note.Doc, tabID, typ, entry string, now time.Time) error {
	switch typ {
	case note.TypeMarkdown:
		b, err := im.readAll(entry, note.MaxMarkdownBytes)
		if err != nil {
			return err
		}
		if !utf8.Valid(b) {
			return fail(entry, "is not valid UTF-8")
		}
		if err := note.ReplaceText(d, tabID, string(b)); err != nil {
			return fail(entry, "%s", reason(err))
		}
	case note.TypeSlides:
		var in slidesEntry
		if err := im.decode(entry, MaxTabEntryBytes, &in); err != nil {
			return err
		}
		ins := make([]note.SlideInput, len(in.Slides))
		for i, sl := range in.Slides {
			ins[i] = note.SlideInput{Title: sl.Title, Body: sl.Body, Notes: sl.Notes}
			if err := note.CheckSlideLook(&sl.Layout, &sl.Theme); err != nil {
				return fail(entry, "slides[%d]: %s", i, reason(err))
			}
		}
		if err := note.ReplaceTabData(d, tabID, mustJSON(map[string]any{"slides": ins})); err != nil {
			return fail(entry, "%s", reason(err))
		}
		t, _ := note.FindTab(d, tabID)
		for i := range t.Slides {
			t.Slides[i].Layout, t.Slides[i].Theme = in.Slides[i].Layout, in.Slides[i].Theme
		}
	case note.TypeSheet:
		var in struct {
			Sheets []struct {
				SheetID string            `json:"sheet_id"`
				Name    string            `json:"name"`
				Cells   [][]any           `json:"cells"`
				Values  json.RawMessage   `json:"values"` // computed again, never taken
				Widths  map[string]int    `json:"widths"`
				Formats []note.CellFormat `json:"formats"`
			} `json:"sheets"`
		}
		if err := im.decode(entry, MaxTabEntryBytes, &in); err != nil {
			return err
		}
		ins := make([]note.SheetInput, len(in.Sheets))
		for i, sh := range in.Sheets {
			ins[i] = note.SheetInput{Name: sh.Name, Cells: sh.Cells} // new sheet IDs
		}
		if err := note.ReplaceTabData(d, tabID, mustJSON(map[string]any{"sheets": ins})); err != nil {
			return fail(entry, "%s", reason(err))
		}
		// The layout goes through the rules of a layout change.
		t, err := note.FindTab(d, tabID)
		if err != nil {
			return err
		}
		for i, sh := range in.Sheets {
			var changes []note.SheetLayout
			widths := map[string]int{}
			for _, k := range slices.Sorted(maps.Keys(sh.Widths)) {
				if widths[k] = sh.Widths[k]; len(widths) == note.MaxWidthsPerSet {
					changes, widths = append(changes, note.SheetLayout{Widths: widths}), map[string]int{}
				}
			}
			if len(widths) > 0 {
				changes = append(changes, note.SheetLayout{Widths: widths})
			}
			for j := range sh.Formats {
				changes = append(changes, note.SheetLayout{Format: &sh.Formats[j]})
			}
			for _, l := range changes {
				if err := note.SetSheetLayout(d, tabID, t.Sheets[i].ID, l); err != nil {
					return fail(entry, "sheet %d: %s", i+1, reason(err))
				}
			}
		}
	case note.TypeSources:
		var in sourcesEntry
		if err := im.decode(entry, MaxTabEntryBytes, &in); err != nil {
			return err
		}
		for i, src := range in.Sources {
			_, again, err := note.AddSource(d, src.Title, src.URL, now)
			if err != nil {
				return fail(entry, "sources[%d]: %s", i, reason(err))
			}
			// A second source of the same page is the first one, as when
			// a person adds it again.
			keepStamp(&d.Sources[len(d.Sources)-1].AddedAt, !again, src.AddedAt)
		}
	case note.TypeFiles:
		return im.files(ctx, d, entry, now)
	}
	return nil
}

// keepStamp keeps an archive's time stamp when it is one.
func keepStamp(dst *string, ok bool, stamp string) {
	if t, err := time.Parse(time.RFC3339, stamp); ok && err == nil {
		*dst = t.UTC().Format(time.RFC3339)
	}
}

// files reads the files tab's metadata from entry and stores each file's
// bytes, checked against the size and hash the metadata names.
func (im *importer) files(ctx context.Context, d *note.Doc, entry string, now time.Time) error {
	var in struct {
		Files []exportedFile `json:"files"`
	}
	if err := im.decode(entry, MaxTabEntryBytes, &in); err != nil {
		return err
	}
	dir := path.Dir(entry)
	for i, f := range in.Files {
		field := fmt.Sprintf("files[%d]", i)
		name, err := CheckFileName(f.Name)
		if err != nil {
			return fail(entry, "%s.name: %s", field, reason(err))
		}
		ct, err := CheckContentType(f.ContentType)
		if err != nil {
			return fail(entry, "%s.content_type: %s", field, reason(err))
		}
		if f.SizeBytes < 0 {
			return fail(entry, "%s.size_bytes: %d is not a size", field, f.SizeBytes)
		}
		if err := fileLimits(d, f.SizeBytes); err != nil {
			return fail(entry, "%s: a file of %d bytes: %s", field, f.SizeBytes, reason(err))
		}
		if _, err := hex.DecodeString(f.SHA256); err != nil || len(f.SHA256) != 64 {
			return fail(entry, "%s.sha256: not a SHA-256 in hex", field)
		}
		bytesName := dir + "/" + f.Path
		if err := entryName(bytesName); err != nil || f.Path == "" || strings.Contains(f.Path, "/") {
			return fail(entry, "%s.path %s: not a file name in the tab's folder", field, note.Quote(problem.Excerpt(f.Path)))
		}
		rc, err := im.open(bytesName)
		if err != nil {
			return err
		}
		sha, size, err := im.s.storeBytes(ctx, im.c.Workspace, rc, f.SizeBytes, f.SizeBytes)
		rc.Close()
		im.read += size
		var tl *store.BlobTooLargeError
		switch {
		case errors.As(err, &tl):
			return fail(bytesName, "is longer than the %d bytes files.json says it holds", f.SizeBytes)
		case err != nil:
			return fail(bytesName, "can't be stored: %v", err)
		case size != f.SizeBytes:
			return fail(bytesName, "holds %d bytes, not the %d files.json says", size, f.SizeBytes)
		case sha != strings.ToLower(f.SHA256):
			return fail(bytesName, "has the SHA-256 %s, not the %s files.json says: the archive is damaged", sha, f.SHA256)
		}
		if im.read > MaxImportNotesBytes {
			im.budgetSpent = true
			return fail(bytesName, "the archive holds more than %d bytes, the most one import reads", MaxImportNotesBytes)
		}
		note.AddFile(d, name, ct, size, sha, now)
		keepStamp(&d.Files[len(d.Files)-1].AddedAt, true, f.AddedAt)
	}
	return nil
}

// reason is an error's message without the field prefix a problem adds
// (the import names the entry and the field itself).
func reason(err error) string {
	if err == nil {
		return "refused"
	}
	var p *problem.Problem
	if errors.As(err, &p) {
		return p.Message
	}
	return err.Error()
}
