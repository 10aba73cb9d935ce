package service

import (
	"archive/zip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"foundry/internal/note"
	"foundry/internal/store"
)

// Export and import: a Note written out as plain files (markdown as .md,
// sheets as .csv beside their exact cells in .json, slides, sources and
// the files' metadata as .json, the files' bytes as themselves, history if
// asked), so a team's data is never locked in; and such an archive read
// back into new Notes. The layout is docs/export-format.md; the archive is
// a folder or a zip, behind ArchiveWriter and Archive, so every door (CLI,
// REST) runs the same use case.

// The format an archive names in every note.json.
const (
	ExportFormat        = "foundry-note"
	ExportFormatVersion = 1
)

// ArchiveWriter is where an export writes: each Create starts the entry
// name (slash-separated, relative) and the writer it returns takes its
// bytes until the next Create. *zip.Writer is one; FolderWriter another.
type ArchiveWriter interface {
	Create(name string) (io.Writer, error)
}

// FolderWriter writes an archive as files under a folder, which it never
// leaves (os.Root).
type FolderWriter struct {
	root *os.Root
	cur  *os.File
}

// NewFolderWriter writes into dir, creating it; dir must be empty or
// missing, so an export never mixes with what is there.
func NewFolderWriter(dir string) (*FolderWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(ents) > 0 {
		return nil, fmt.Errorf("the folder %s is not empty: export into a new or empty folder", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &FolderWriter{root: root}, nil
}

// Create starts the file name under the folder.
func (f *FolderWriter) Create(name string) (io.Writer, error) {
	if err := f.closeCur(); err != nil {
		return nil, err
	}
	if dir := path.Dir(name); dir != "." {
		if err := f.root.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	file, err := f.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	f.cur = file
	return file, nil
}

func (f *FolderWriter) closeCur() error {
	if f.cur == nil {
		return nil
	}
	err := f.cur.Close()
	f.cur = nil
	return err
}

// Close ends the last file and the folder.
func (f *FolderWriter) Close() error {
	return errors.Join(f.closeCur(), f.root.Close())
}

var _ ArchiveWriter = (*zip.Writer)(nil)

// ZipWriter is a zip archive whose entries carry the time of the export
// (zip.Writer's Create leaves them at 1980).
type ZipWriter struct {
	*zip.Writer
	at time.Time
}

// NewZipWriter writes a zip to w, its entries stamped at.
func NewZipWriter(w io.Writer, at time.Time) *ZipWriter {
	return &ZipWriter{Writer: zip.NewWriter(w), at: at}
}

// Create starts the entry name, compressed.
func (z *ZipWriter) Create(name string) (io.Writer, error) {
	return z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: z.at})
}

// ExportOptions say what an export holds besides the Note as it is.
type ExportOptions struct {
	// History adds every version of the Note, with who wrote it and when.
	History bool
}

// ExportedNote is one Note an export wrote.
type ExportedNote struct {
	NoteID  string `json:"note_id"`
	Title   string `json:"title"`
	Version int64  `json:"version"`
	Dir     string `json:"dir"` // its folder in the archive
	Files   int    `json:"files"`
}

// noteManifest is note.json: the Note, its tab strip in order, and where
// each tab's content is in the archive.
type noteManifest struct {
	Format        string        `json:"format"`
	FormatVersion int           `json:"format_version"`
	NoteID        string        `json:"note_id"`
	Title         string        `json:"title"`
	Version       int64         `json:"version"`
	ExportedAt    string        `json:"exported_at"`
	Tabs          []manifestTab `json:"tabs"`
	// History is the folder of the versions, when they were exported.
	History string `json:"history,omitempty"`
}

type manifestTab struct {
	TabID string `json:"tab_id"`
	Type  string `json:"type"`
	Label string `json:"label"`
	// File is the tab's content: .md for markdown; .json for the others
	// (for files, the metadata inside the tab's folder).
	File string `json:"file"`
	// CSV are a sheet tab's sheets as CSV, one per sheet, for other tools;
	// import reads the exact cells from File.
	CSV []string `json:"csv,omitempty"`
}

// Content of the .json entries.
type (
	slidesEntry struct {
		Slides []note.Slide `json:"slides"`
	}
	sheetsEntry struct {
		Sheets []note.Sheet `json:"sheets"`
	}
	sourcesEntry struct {
		Sources []note.Source `json:"sources"`
	}
	filesEntry struct {
		Files []exportedFile `json:"files"`
	}
	exportedFile struct {
		note.File
		Path string `json:"path"` // the bytes, relative to the files.json's folder
	}
	historyEntry struct {
		Version int64        `json:"version"`
		Kind    string       `json:"kind"`
		Who     Actor        `json:"who"`
		At      string       `json:"at"`
		Changed []string     `json:"changed"`
		Title   string       `json:"title"`
		Tabs    []historyTab `json:"tabs"`
	}
	historyTab struct {
		TabID   string        `json:"tab_id"`
		Type    string        `json:"type"`
		Label   string        `json:"label"`
		Text    *string       `json:"text,omitempty"`
		Slides  []note.Slide  `json:"slides,omitempty"`
		Sheets  []note.Sheet  `json:"sheets,omitempty"`
		Sources []note.Source `json:"sources,omitempty"`
		Files   []note.File   `json:"files,omitempty"`
	}
)

// ExportNote writes Note noteID, as c may see it, into w under its own
// folder ("<slug>-<id>/"). Exporting carries the files' bytes, so it is a
// person's act (and the operator's), as a file's download is.
func (s *Service) ExportNote(ctx context.Context, c Caller, noteID string, w ArchiveWriter, o ExportOptions) (ExportedNote, error) {
	if err := c.personOnly("exporting a Note (an export holds its files' bytes)"); err != nil {
		return ExportedNote{}, err
	}
	r, d, err := s.noteFor(ctx, c, noteID)
	if err != nil {
		return ExportedNote{}, err
	}
	dir := ExportDirName(d.Title, r.ID)
	m := noteManifest{Format: ExportFormat, FormatVersion: ExportFormatVersion, NoteID: r.ID, Title: d.Title, Version: r.Version,
		ExportedAt: s.Now().UTC().Format(time.RFC3339)}
	res := ExportedNote{NoteID: r.ID, Title: d.Title, Version: r.Version, Dir: dir}
	for i, t := range d.Tabs {
		base := fmt.Sprintf("%02d-%s", i+1, slug(t.Label, t.Type))
		mt := manifestTab{TabID: t.ID, Type: t.Type, Label: t.Label}
		x := note.Read(d, &t)
		switch t.Type {
		case note.TypeMarkdown:
			mt.File = base + ".md"
			err = putEntry(w, dir+"/"+mt.File, []byte(*x.Text))
		case note.TypeSlides:
			mt.File = base + ".json"
			err = putJSON(w, dir+"/"+mt.File, slidesEntry{Slides: nonNil(x.Slides)})
		case note.TypeSheet:
			mt.File = base + ".json"
			if err = putJSON(w, dir+"/"+mt.File, sheetsEntry{Sheets: nonNil(x.Sheets)}); err != nil {
				break
			}
			for j, sh := range x.Sheets {
				name := base + ".csv"
				if len(x.Sheets) > 1 {
					name = fmt.Sprintf("%s.%d-%s.csv", base, j+1, slug(sh.Name, "sheet"))
				}
				mt.CSV = append(mt.CSV, name)
				if err = putCSV(w, dir+"/"+name, sh.Cells); err != nil {
					break
				}
			}
		case note.TypeSources:
			mt.File = base + ".json"
			err = putJSON(w, dir+"/"+mt.File, sourcesEntry{Sources: nonNil(x.Sources)})
		case note.TypeFiles:
			mt.File = base + "/files.json"
			err = s.exportFiles(ctx, r.Workspace, w, dir+"/"+base, x.Files)
			res.Files = len(x.Files)
		default:
			err = fmt.Errorf("note %s: tab %s has the type %s, which export does not know", r.ID, t.ID, t.Type)
		}
		if err != nil {
			return ExportedNote{}, err
		}
		m.Tabs = append(m.Tabs, mt)
	}
	if o.History {
		m.History = "history/"
		if err := s.exportHistory(ctx, c, r, w, dir+"/history"); err != nil {
			return ExportedNote{}, err
		}
	}
	if err := putJSON(w, dir+"/note.json", m); err != nil {
		return ExportedNote{}, err
	}
	return res, nil
}

// exportFiles writes the files' bytes under dir, each checked against the
// hash the files tab names, and dir/files.json.
func (s *Service) exportFiles(ctx context.Context, ws string, w ArchiveWriter, dir string, files []note.File) error {
	out := filesEntry{Files: []exportedFile{}}
	for i, f := range files {
		ef := exportedFile{File: f, Path: fmt.Sprintf("%03d-%s", i+1, safeFileName(f.Name))}
		b, err := s.Store.Blobs().Open(ctx, ws, f.SHA256)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("file %s (%s): its bytes (%s) are not in the blob store", f.ID, f.Name, f.SHA256)
		}
		if err != nil {
			return err
		}
		dst, err := w.Create(dir + "/" + ef.Path)
		if err == nil {
			_, err = io.Copy(dst, b)
		}
		b.Close()
		if err != nil {
			return fmt.Errorf("file %s (%s): %w", f.ID, f.Name, err)
		}
		out.Files = append(out.Files, ef)
	}
	return putJSON(w, dir+"/files.json", out)
}

// exportHistory writes every version of Note r, oldest first, as
// dir/<version>.json: who wrote it, when, what it changed, and the Note as
// it was then (files: metadata; their bytes are the current files').
func (s *Service) exportHistory(ctx context.Context, c Caller, r store.Resource, w ArchiveWriter, dir string) error {
	const step = 200
	for from := int64(1); from <= r.Version; from += step {
		vs, err := s.Store.VersionRange(ctx, store.TypeNote, r.ID, from, min(from+step-1, r.Version))
		if err != nil {
			return err
		}
		es, err := s.entries(ctx, c.Workspace, vs)
		if err != nil {
			return err
		}
		for _, e := range es {
			d, err := s.NoteAt(ctx, r.ID, e.Version)
			if err != nil {
				return err
			}
			h := historyEntry{Version: e.Version, Kind: e.Kind, Who: e.Who, At: e.At.UTC().Format(time.RFC3339Nano), Changed: e.Changed, Title: d.Title}
			for _, t := range d.Tabs {
				x := note.Read(&d, &t)
				h.Tabs = append(h.Tabs, historyTab{TabID: t.ID, Type: t.Type, Label: t.Label, Text: x.Text, Slides: x.Slides, Sheets: x.Sheets, Sources: x.Sources, Files: x.Files})
			}
			if err := putJSON(w, fmt.Sprintf("%s/%06d.json", dir, e.Version), h); err != nil {
				return err
			}
		}
	}
	return nil
}

// ExportAllOptions are an export of every Note.
type ExportAllOptions struct {
	ExportOptions
	// Progress, if set, hears of each Note once it is written.
	Progress func(done int, n ExportedNote)
}

// ExportAll writes every Note c may see (deleted Notes left out) into w,
// each in its own folder.
func (s *Service) ExportAll(ctx context.Context, c Caller, w ArchiveWriter, o ExportAllOptions) ([]ExportedNote, error) {
	if err := c.personOnly("exporting Notes (an export holds their files' bytes)"); err != nil {
		return nil, err
	}
	var out []ExportedNote
	cursor := ""
	for {
		page, err := s.ListNotes(ctx, c, ListNotesArgs{Page: Page{Cursor: cursor, Limit: MaxPage}})
		if err != nil {
			return out, err
		}
		for _, n := range page.Notes {
			e, err := s.ExportNote(ctx, c, n.NoteID, w, o.ExportOptions)
			if err != nil {
				return out, fmt.Errorf("note %s: %w", n.NoteID, err)
			}
			out = append(out, e)
			if o.Progress != nil {
				o.Progress(len(out), e)
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			return out, nil
		}
	}
}

// ExportDirName is a Note's folder in an archive: its title as a slug,
// and its ID, which keeps two Notes of one title apart.
func ExportDirName(title, id string) string {
	return slug(title, "note") + "-" + id
}

// slug is s in lower case with every run of what is not a letter or a
// digit made one "-", at most 40 characters; def when nothing is left.
func slug(s, def string) string {
	var b strings.Builder
	dash := false
	n := 0
	for _, r := range strings.ToLower(s) {
		if n >= 40 {
			break
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
			n++
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
			n++
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if out == "" {
		return def
	}
	return out
}

// safeFileName is a file's name as an archive entry: a checked name has no
// slash or control character, and the few characters other systems refuse
// become "_".
func safeFileName(name string) string {
	out := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`<>:"|?*\/`, r) || r < 0x20 {
			return '_'
		}
		return r
	}, name)
	if utf8.RuneCountInString(out) > 100 {
		ext := path.Ext(out)
		if utf8.RuneCountInString(ext) > 20 {
			ext = ""
		}
		out = string([]rune(out)[:100-utf8.RuneCountInString(ext)]) + ext
	}
	if out == "" || out == "." || out == ".." {
		return "file"
	}
	return out
}

func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

func putEntry(w ArchiveWriter, name string, b []byte) error {
	dst, err := w.Create(name)
	if err != nil {
		return err
	}
	_, err = dst.Write(b)
	return err
}

func putJSON(w ArchiveWriter, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return putEntry(w, name, append(b, '\n'))
}

// putCSV writes cells as CSV: strings as they are (a formula as its text),
// numbers in their shortest form, booleans as TRUE/FALSE, null empty.
func putCSV(w ArchiveWriter, name string, cells [][]any) error {
	dst, err := w.Create(name)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(dst)
	width := 0
	for _, row := range cells {
		width = max(width, len(row))
	}
	rec := make([]string, width)
	for _, row := range cells {
		for j := range rec {
			rec[j] = ""
			if j < len(row) {
				rec[j] = csvCell(row[j])
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}
