package service_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// memArchive is an archive in memory: an export writes into it, an
// import reads it; tests change entries in between to make hostile ones.
type memArchive struct {
	names []string
	data  map[string]*bytes.Buffer
}

func newMem() *memArchive { return &memArchive{data: map[string]*bytes.Buffer{}} }

func (m *memArchive) Create(name string) (io.Writer, error) {
	b := &bytes.Buffer{}
	if _, ok := m.data[name]; !ok {
		m.names = append(m.names, name)
	}
	m.data[name] = b
	return b, nil
}

func (m *memArchive) Names() []string { return m.names }

func (m *memArchive) Open(name string) (io.ReadCloser, error) {
	b, ok := m.data[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return io.NopCloser(bytes.NewReader(b.Bytes())), nil
}

func (m *memArchive) put(name string, b []byte) {
	w, _ := m.Create(name)
	w.Write(b)
}

func (m *memArchive) find(suffix string) string {
	for _, n := range m.names {
		if strings.HasSuffix(n, suffix) {
			return n
		}
	}
	return ""
}

// zipOf is m as a zip.
func (m *memArchive) zipOf(t *testing.T) *zip.Reader {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range m.names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(m.data[n].Bytes())
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// richNote makes a Note with every tab type, moved and renamed tabs,
// unicode everywhere, slide looks, every kind of cell, two sheets, sources
// and two files (one empty), and returns its ID.
func richNote(t *testing.T, f *fixture) string {
	t.Helper()
	ctx := context.Background()
	n, err := f.svc.CreateNoteFrom(ctx, f.op, service.CreateNoteArgs{Title: "Résumé 数据 — plan"}, func(d *note.Doc) error {
		if err := note.ReplaceText(d, note.TypeMarkdown, "# Überblick\n\nक्या हाल है? 你好 👋\n\n- a\n- b\n"); err != nil {
			return err
		}
		if err := note.RenameTab(d, note.TypeMarkdown, "Notizen ✍"); err != nil {
			return err
		}
		deck, err := note.CreateTab(d, note.TypeSlides, "Deck — 幻灯片", nil, f.svc.Now())
		if err != nil {
			return err
		}
		if _, err := note.SlidesAddOutline(d, deck.ID, []note.SlideInput{{Title: "Intro", Body: "Hello\nworld", Notes: "say hi"}, {Title: "Zweite Folie", Body: "ü"}}); err != nil {
			return err
		}
		dt, _ := note.FindTab(d, deck.ID)
		dt.Slides[1].Layout, dt.Slides[1].Theme = "two-column", "ocean"
		sheet, err := note.CreateTab(d, note.TypeSheet, "Budget", nil, f.svc.Now())
		if err != nil {
			return err
		}
		data := `{"sheets":[{"name":"Q1","cells":[["item","cost","ok"],["Ümlaut, \"quoted\"",12.5,true],[null,"=B2*2",false],[]]},{"name":"Empty","cells":[]}]}`
		if err := note.ReplaceTabData(d, sheet.ID, json.RawMessage(data)); err != nil {
			return err
		}
		if _, err := note.CreateTab(d, note.TypeSlides, "Empty deck", nil, f.svc.Now()); err != nil {
			return err
		}
		if _, _, err := note.AddSource(d, "Wikipedia — Köln", "https://de.wikipedia.org/wiki/K%C3%B6ln", f.svc.Now()); err != nil {
			return err
		}
		if _, _, err := note.AddSource(d, "Example", "https://example.org/a?b=1", f.svc.Now()); err != nil {
			return err
		}
		return note.MoveTab(d, sheet.ID, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, up := range []struct{ name, ct, body string }{{"bericht ü.txt", "text/plain; charset=utf-8", "Bytes: \x00\x01\xff and 你好"}, {"empty.bin", "", ""}} {
		if _, err := f.svc.UploadFile(ctx, f.op, service.UploadArgs{NoteID: n.NoteID, FileUpload: service.FileUpload{Name: up.name, ContentType: up.ct, Body: strings.NewReader(up.body), Length: int64(len(up.body))}}); err != nil {
			t.Fatal(err)
		}
	}
	return n.NoteID
}

// content is a Note's content without its IDs, its files' bytes included:
// what a round trip must keep.
type content struct {
	Title string
	Tabs  []tabContent
}

type tabContent struct {
	Type, Label string
	Text        string
	Slides      [][5]string
	Sheets      []note.Sheet
	Sources     [][3]string
	Files       [][6]string
}

func contentOf(t *testing.T, f *fixture, c service.Caller, noteID string) content {
	t.Helper()
	ctx := context.Background()
	tabs, err := f.svc.ListNoteTabs(ctx, c, noteID)
	if err != nil {
		t.Fatal(err)
	}
	out := content{Title: tabs.Title}
	for _, ref := range tabs.Tabs {
		tc, err := f.svc.ReadNoteTab(ctx, c, service.TabArgs{NoteID: noteID, TabID: ref.TabID})
		if err != nil {
			t.Fatal(err)
		}
		x := tabContent{Type: tc.Type, Label: tc.Label}
		if tc.Text != nil {
			x.Text = *tc.Text
		}
		for _, s := range tc.Slides {
			x.Slides = append(x.Slides, [5]string{s.Title, s.Body, s.Notes, s.Layout, s.Theme})
		}
		for _, sh := range tc.Sheets {
			sh.ID = ""
			x.Sheets = append(x.Sheets, sh)
		}
		for _, s := range tc.Sources {
			x.Sources = append(x.Sources, [3]string{s.Title, s.URL, s.AddedAt})
		}
		for _, fl := range tc.Files {
			_, b, err := f.svc.OpenFile(ctx, c, service.FileArgs{NoteID: noteID, FileID: fl.ID})
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(b)
			b.Close()
			if err != nil {
				t.Fatal(err)
			}
			x.Files = append(x.Files, [6]string{fl.Name, fl.ContentType, strconv.FormatInt(fl.SizeBytes, 10), fl.SHA256, fl.AddedAt, string(body)})
		}
		out.Tabs = append(out.Tabs, x)
	}
	return out
}

func TestExportImportRoundTripKeepsEveryTab(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		id := richNote(t, f)
		want := contentOf(t, f, f.op, id)
		if len(want.Tabs) != 6 || len(want.Tabs[0].Sheets) != 2 || len(want.Tabs[2].Files) != 2 {
			t.Fatalf("the fixture is not what the test means: %+v", want)
		}
		for _, kind := range []string{"memory", "zip", "folder"} {
			t.Run(kind, func(t *testing.T) {
				m := newMem()
				e, err := f.svc.ExportNote(ctx, f.person, id, m, service.ExportOptions{History: true})
				if err != nil {
					t.Fatal(err)
				}
				if e.Files != 2 || !strings.HasPrefix(e.Dir, "résumé-数据-plan-"+id) {
					t.Fatalf("exported %+v", e)
				}
				var a service.Archive = m
				switch kind {
				case "zip":
					a = service.NewZipArchive(m.zipOf(t))
				case "folder":
					dir := filepath.Join(t.TempDir(), "out")
					fw, err := service.NewFolderWriter(dir)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := f.svc.ExportNote(ctx, f.op, id, fw, service.ExportOptions{}); err != nil {
						t.Fatal(err)
					}
					if err := fw.Close(); err != nil {
						t.Fatal(err)
					}
					fa, err := service.OpenFolderArchive(dir)
					if err != nil {
						t.Fatal(err)
					}
					defer fa.Close()
					a = fa
				}
				res, err := f.svc.ImportArchive(ctx, f.op, a, service.ImportOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Problems) != 0 || len(res.Notes) != 1 {
					t.Fatalf("import: %+v", res)
				}
				got := res.Notes[0]
				if got.NoteID == id || got.From != id || got.Version != 1 {
					t.Fatalf("imported %+v: want a new Note at version 1 from %s", got, id)
				}
				if have := contentOf(t, f, f.op, got.NoteID); !reflect.DeepEqual(want, have) {
					w, _ := json.MarshalIndent(want, "", " ")
					h, _ := json.MarshalIndent(have, "", " ")
					t.Fatalf("the imported Note differs from the exported one:\nwant %s\ngot  %s", w, h)
				}
			})
		}
	})
}

func TestExportWritesReadableFiles(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		id := richNote(t, f)
		// Two versions more, so history has something to say.
		if _, err := f.svc.UpdateNote(ctx, f.op, service.UpdateNoteArgs{NoteID: id, Title: ptr("Résumé 数据 — final")}); err != nil {
			t.Fatal(err)
		}
		m := newMem()
		if _, err := f.svc.ExportNote(ctx, f.person, id, m, service.ExportOptions{History: true}); err != nil {
			t.Fatal(err)
		}
		if md := m.find("-notizen.md"); md == "" || !strings.Contains(m.data[md].String(), "क्या हाल है?") {
			t.Fatalf("no markdown entry with the text: %v", m.names)
		}
		csvName := m.find(".1-q1.csv")
		if csvName == "" {
			t.Fatalf("no CSV of the first sheet: %v", m.names)
		}
		wantCSV := "item,cost,ok\n\"Ümlaut, \"\"quoted\"\"\",12.5,TRUE\n,=B2*2,FALSE\n,,\n"
		if got := m.data[csvName].String(); got != wantCSV {
			t.Fatalf("CSV:\n%q\nwant\n%q", got, wantCSV)
		}
		fileEntry := m.find("/001-bericht ü.txt")
		if fileEntry == "" || m.data[fileEntry].String() != "Bytes: \x00\x01\xff and 你好" {
			t.Fatalf("file bytes: %v", m.names)
		}
		var hist struct {
			Version int64                 `json:"version"`
			Kind    string                `json:"kind"`
			Title   string                `json:"title"`
			Who     struct{ Kind string } `json:"who"`
		}
		last := m.find("/history/000004.json")
		if last == "" {
			t.Fatalf("no history entry of version 4: %v", m.names)
		}
		if err := json.Unmarshal(m.data[last].Bytes(), &hist); err != nil {
			t.Fatal(err)
		}
		if hist.Version != 4 || hist.Kind != "note_renamed" || hist.Title != "Résumé 数据 — final" || hist.Who.Kind != "person" {
			t.Fatalf("history of version 4: %+v", hist)
		}
		first := m.find("/history/000001.json")
		if first == "" || !strings.Contains(m.data[first].String(), `"title": "Résumé 数据 — plan"`) {
			t.Fatalf("history of version 1 is not the Note as it was")
		}
	})
}

func TestExportIsAPersonsAct(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		_, err := f.svc.ExportNote(context.Background(), service.Agent(f.write), f.noteID, newMem(), service.ExportOptions{})
		if problemCode(err) != service.PersonOnly {
			t.Fatalf("an agent's export: %v, want %s", err, service.PersonOnly)
		}
		_, err = f.svc.ExportNote(context.Background(), f.person, "note_nosuchnote", newMem(), service.ExportOptions{})
		if problemCode(err) != "not_found" {
			t.Fatalf("export of a missing Note: %v", err)
		}
	})
}

func TestExportAllSkipsDeletedNotes(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		id := richNote(t, f)
		gone, err := f.svc.CreateNote(ctx, f.op, service.CreateNoteArgs{Title: "Gone"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.DeleteNote(ctx, f.op, service.NoteArgs{NoteID: gone.NoteID}); err != nil {
			t.Fatal(err)
		}
		m := newMem()
		var heard []string
		out, err := f.svc.ExportAll(ctx, f.op, m, service.ExportAllOptions{Progress: func(done int, n service.ExportedNote) { heard = append(heard, n.NoteID) }})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{f.noteID, id}
		sort.Strings(want)
		if !slices.Equal(heard, want) || len(out) != 2 {
			t.Fatalf("exported %v, want %v (the deleted Note left out)", heard, want)
		}
		res, err := f.svc.ImportArchive(ctx, f.op, m, service.ImportOptions{})
		if err != nil || len(res.Notes) != 2 || len(res.Problems) != 0 {
			t.Fatalf("import of all: %+v %v", res, err)
		}
	})
}

// TestImportRefusesHostileArchives: every entry an import can't trust is
// reported by its name, its Note is not created, and the Notes beside it
// still are.
func TestImportRefusesHostileArchives(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		id := richNote(t, f)
		good := newMem()
		if _, err := f.svc.ExportNote(ctx, f.op, id, good, service.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		dir := strings.Split(good.names[0], "/")[0]
		manifest := func(m *memArchive, edit func(v map[string]any)) {
			var v map[string]any
			json.Unmarshal(m.data[dir+"/note.json"].Bytes(), &v)
			edit(v)
			b, _ := json.Marshal(v)
			m.put(dir+"/note.json", b)
		}
		filesJSON := func(m *memArchive, edit func(fl map[string]any)) {
			name := m.find("/files.json")
			var v struct{ Files []map[string]any }
			json.Unmarshal(m.data[name].Bytes(), &v)
			edit(v.Files[0])
			b, _ := json.Marshal(map[string]any{"files": v.Files})
			m.put(name, b)
		}
		for _, tc := range []struct {
			name  string
			entry string // the entry the report must name (a suffix)
			words string // what the reason must say
			edit  func(m *memArchive)
		}{
			{"path traversal in an entry", "../../etc/passwd", "clean relative path", func(m *memArchive) { m.put("../../etc/passwd", []byte("x")) }},
			{"absolute entry", "/abs/note.json", "absolute", func(m *memArchive) { m.put("/abs/note.json", []byte("{}")) }},
			{"backslash entry", `a\..\b`, "backslash", func(m *memArchive) { m.put(`a\..\b`, []byte("x")) }},
			{"note.json names a file outside its folder", "/note.json", "clean relative path", func(m *memArchive) {
				manifest(m, func(v map[string]any) { v["tabs"].([]any)[1].(map[string]any)["file"] = "../../secret.md" })
			}},
			{"a file's path leaves the tab's folder", "/files.json", "not a file name", func(m *memArchive) {
				filesJSON(m, func(fl map[string]any) { fl["path"] = "../../../note.json" })
			}},
			{"zip bomb in the markdown", "-notizen.md", "over 1048576 bytes", func(m *memArchive) {
				m.put(m.find("-notizen.md"), bytes.Repeat([]byte("a"), note.MaxMarkdownBytes+1))
			}},
			{"bad UTF-8 in the markdown", "-notizen.md", "not valid UTF-8", func(m *memArchive) { m.put(m.find("-notizen.md"), []byte("ok \xff\xfe")) }},
			{"bad UTF-8 in a sheet", "-budget.json", "not valid UTF-8", func(m *memArchive) {
				m.put(m.find("-budget.json"), []byte("{\"sheets\":[{\"name\":\"\xff\",\"cells\":[]}]}"))
			}},
			{"unknown tab type", "/note.json", "not one Foundry knows", func(m *memArchive) {
				manifest(m, func(v map[string]any) { v["tabs"].([]any)[0].(map[string]any)["type"] = "kanban" })
			}},
			{"unknown field", "-budget.json", "unknown field", func(m *memArchive) {
				m.put(m.find("-budget.json"), []byte(`{"sheets":[],"macros":"evil"}`))
			}},
			{"newer format", "/note.json", "newer Foundry", func(m *memArchive) { manifest(m, func(v map[string]any) { v["format_version"] = 99 }) }},
			{"a file's bytes that don't match its hash", "/001-bericht ü.txt", "damaged", func(m *memArchive) {
				m.put(m.find("/001-bericht ü.txt"), []byte("Bytes: \x00\x01\xff and 你好!"[:len("Bytes: \x00\x01\xff and 你好")]))
				filesJSON(m, func(fl map[string]any) {
					fl["sha256"] = hex.EncodeToString(make([]byte, 32))
				})
			}},
			{"a file longer than it says", "/001-bericht ü.txt", "longer than", func(m *memArchive) {
				m.put(m.find("/001-bericht ü.txt"), bytes.Repeat([]byte("x"), 1000))
			}},
			{"a file bigger than a file may be", "/files.json", "over", func(m *memArchive) {
				filesJSON(m, func(fl map[string]any) { fl["size_bytes"] = service.MaxFileBytes + 1 })
			}},
			{"a file name that is a path", "/files.json", "not a path", func(m *memArchive) {
				filesJSON(m, func(fl map[string]any) { fl["name"] = "../x" })
			}},
			{"a missing tab entry", "/note.json", "markdown tab is missing", func(m *memArchive) {
				manifest(m, func(v map[string]any) {
					tabs := v["tabs"].([]any)
					v["tabs"] = slices.DeleteFunc(tabs, func(x any) bool { return x.(map[string]any)["type"] == "markdown" })
				})
			}},
			{"a title with a bidi character", "/note.json", "U+202E", func(m *memArchive) { manifest(m, func(v map[string]any) { v["title"] = "evil\u202etxt" }) }},
			{"a source that is not http", "-sources.json", "http", func(m *memArchive) {
				m.put(m.find("-sources.json"), []byte(`{"sources":[{"source_id":"s","title":"x","url":"javascript:alert(1)","normalized_url":"","added_at":""}]}`))
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				m := newMem()
				for _, n := range good.names {
					m.put(n, good.data[n].Bytes())
				}
				tc.edit(m)
				before := countNotes(t, f)
				for _, a := range []service.Archive{m, service.NewZipArchive(m.zipOf(t))} {
					res, err := f.svc.ImportArchive(ctx, f.op, a, service.ImportOptions{})
					if err != nil {
						t.Fatal(err)
					}
					var found bool
					for _, p := range res.Problems {
						if strings.HasSuffix(p.Entry, tc.entry) && strings.Contains(p.Reason, tc.words) {
							found = true
						}
					}
					if !found {
						t.Fatalf("problems %+v: want one naming %q and saying %q", res.Problems, tc.entry, tc.words)
					}
					created := countNotes(t, f) - before
					if created != len(res.Notes) {
						t.Fatalf("%d Notes appeared, the import says it created %d", created, len(res.Notes))
					}
					before += created
				}
			})
		}
		// An export's folder zipped whole: its Notes are one level down, and
		// a stray file beside them is skipped, not read.
		nested := newMem()
		for _, n := range good.names {
			nested.put("export/"+n, good.data[n].Bytes())
		}
		nested.put("export/README.txt", []byte("x"))
		nested.put("stray/readme.txt", []byte("x"))
		res, err := f.svc.ImportArchive(ctx, f.op, service.NewZipArchive(nested.zipOf(t)), service.ImportOptions{})
		if err != nil || len(res.Notes) != 1 || len(res.Problems) != 0 || len(res.Skipped) != 2 || res.Skipped[0].Entry != "export/README.txt" {
			t.Fatalf("a nested export: %+v %v", res, err)
		}

		// A good Note beside a refused one is still imported.
		m := newMem()
		for _, n := range good.names {
			m.put(n, good.data[n].Bytes())
			m.put("other-x/"+strings.TrimPrefix(n, dir+"/"), good.data[n].Bytes())
		}
		m.put("other-x/note.json", []byte(`{"format":"foundry-note","format_version":1,"title":"x","tabs":[{"type":"kanban"}]}`))
		res, err = f.svc.ImportArchive(ctx, f.op, m, service.ImportOptions{})
		if err != nil || len(res.Notes) != 1 || len(res.Problems) != 1 || res.Problems[0].Entry != "other-x/note.json" {
			t.Fatalf("a good and a bad Note: %+v %v", res, err)
		}
	})
}

func TestImportReadsAZipBombOnlyToItsLimit(t *testing.T) {
	// 64 MiB of zeros compress to about 64 KiB; the import reads the
	// markdown entry only to its limit and refuses it.
	eachStore(t, func(t *testing.T, f *fixture) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("n-1/note.json")
		w.Write([]byte(`{"format":"foundry-note","format_version":1,"note_id":"n","title":"bomb","version":1,"exported_at":"","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note","file":"01.md"},{"tab_id":"files","type":"files","label":"Files","file":"02/files.json"},{"tab_id":"sources","type":"sources","label":"Sources","file":"03.json"}]}`))
		w, _ = zw.Create("n-1/01.md")
		zero := make([]byte, 1<<20)
		for range 64 {
			w.Write(zero)
		}
		zw.Close()
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if buf.Len() > 8<<20 {
			t.Fatalf("the bomb is %d bytes; the test means a small zip", buf.Len())
		}
		res, err := f.svc.ImportArchive(context.Background(), f.op, service.NewZipArchive(zr), service.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) != 0 || len(res.Problems) != 1 || res.Problems[0].Entry != "n-1/01.md" || !strings.Contains(res.Problems[0].Reason, "over") {
			t.Fatalf("bomb: %+v", res)
		}
	})
}

func countNotes(t *testing.T, f *fixture) int {
	t.Helper()
	n, cursor := 0, ""
	for {
		page, err := f.svc.ListNotes(context.Background(), f.op, service.ListNotesArgs{Page: service.Page{Cursor: cursor, Limit: service.MaxPage}})
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Notes)
		if cursor = page.NextCursor; cursor == "" {
			return n
		}
	}
}

// problemCode is the code of a refusal ("" for another error).
func problemCode(err error) string {
	var p *problem.Problem
	if errors.As(err, &p) {
		return p.Code
	}
	return ""
}

// TestImportFolderDoesNotFollowLinksOut: a folder archive whose entry is a
// symbolic link out of the folder is refused by name; nothing outside is
// read.
func TestImportFolderDoesNotFollowLinksOut(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		dir := filepath.Join(t.TempDir(), "export")
		fw, err := service.NewFolderWriter(dir)
		if err != nil {
			t.Fatal(err)
		}
		e, err := f.svc.ExportNote(ctx, f.op, f.noteID, fw, service.ExportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fw.Close()
		secret := filepath.Join(t.TempDir(), "secret.md")
		if err := os.WriteFile(secret, []byte("outside the archive"), 0o600); err != nil {
			t.Fatal(err)
		}
		md := filepath.Join(dir, e.Dir, "01-note.md")
		if err := os.Remove(md); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secret, md); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
		a, err := service.OpenFolderArchive(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		res, err := f.svc.ImportArchive(ctx, f.op, a, service.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) != 0 || len(res.Problems) != 1 || res.Problems[0].Entry != e.Dir+"/01-note.md" || !strings.Contains(res.Problems[0].Reason, "can't be read") {
			t.Fatalf("a link out of the folder: %+v", res)
		}
	})
}

func TestImportIsAPersonsAct(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		_, err := f.svc.ImportArchive(context.Background(), service.Agent(f.write), newMem(), service.ImportOptions{})
		if problemCode(err) != service.PersonOnly {
			t.Fatalf("an agent's import: %v, want %s", err, service.PersonOnly)
		}
	})
}
