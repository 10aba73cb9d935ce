package main

import (
	"archive/zip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"foundry/internal/server"
	"foundry/internal/service"
	"foundry/internal/store/postgres/pgtest"
)

// TestExportImportFromTheCLI: an operator exports one Note and every Note
// to a zip and a folder, imports them into another data folder, and finds
// the same content under new IDs.
func TestExportImportFromTheCLI(t *testing.T) {
	data, noteID, _ := grantWorkspace(t)
	text := "# Plan ✓\n\nनमस्ते"
	onData(t, data, func(ctx context.Context, svc *service.Service, op service.Caller) {
		if _, err := svc.EditNoteTab(ctx, op, service.EditTabArgs{NoteID: noteID, TabID: "markdown", Operation: "replace_text", Text: &text}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.UploadFile(ctx, op, service.UploadArgs{NoteID: noteID, FileUpload: service.FileUpload{Name: "a.txt", Body: strings.NewReader("bytes"), Length: 5}}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateNote(ctx, op, service.CreateNoteArgs{Title: "Second"}); err != nil {
			t.Fatal(err)
		}
	})
	out := t.TempDir()
	zipPath := filepath.Join(out, "one.zip")
	code, stdout, stderr := runInProcess(t, "export", "--data", data, "--note", noteID, "--history", zipPath)
	if code != 0 || !strings.Contains(stdout, "exported 1 Note to") {
		t.Fatalf("export --note: %d\n%s%s", code, stdout, stderr)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	zr.Close()
	joined := strings.Join(names, "\n")
	for _, want := range []string{"granted-" + noteID + "/note.json", "-note.md", "/001-a.txt", "/history/000003.json"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("the zip has no %s:\n%s", want, joined)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(out, ".one.zip*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}

	folder := filepath.Join(out, "all")
	code, stdout, stderr = runInProcess(t, "export", "--all", folder, "--data", data)
	if code != 0 || !strings.Contains(stdout, "exported 2 Notes") || strings.Count(stderr, "exported ") != 2 {
		t.Fatalf("export --all: %d\n%s%s", code, stdout, stderr)
	}

	// Into a new data folder, as when moving to a new server: the first
	// import creates the workspace, as a first serve does.
	other := filepath.Join(t.TempDir(), "new-data")
	for i, archive := range []string{zipPath, folder} {
		code, stdout, stderr = runInProcess(t, "import", "--data", other, archive)
		if code != 0 {
			t.Fatalf("import %s: %d\n%s%s", archive, code, stdout, stderr)
		}
		if created := strings.Contains(stderr, "created the workspace"); created != (i == 0) {
			t.Fatalf("import %d into the new folder says:\n%s", i, stderr)
		}
		ids := strings.Fields(stdout)
		if want := map[string]int{zipPath: 1, folder: 2}[archive]; len(ids) != want {
			t.Fatalf("import %s printed %v, want %d Note IDs", archive, ids, want)
		}
		onData(t, other, func(ctx context.Context, svc *service.Service, op service.Caller) {
			for _, id := range ids {
				tabs, err := svc.ListNoteTabs(ctx, op, id)
				if err != nil {
					t.Fatal(err)
				}
				if tabs.Title != "Granted" {
					continue
				}
				md, err := svc.ReadNoteTab(ctx, op, service.TabArgs{NoteID: id, TabID: "markdown"})
				if err != nil || *md.Text != text {
					t.Fatalf("imported markdown: %v %v", md.Text, err)
				}
				files, _ := svc.ReadNoteTab(ctx, op, service.TabArgs{NoteID: id, TabID: "files"})
				if len(files.Files) != 1 || files.Files[0].Name != "a.txt" || files.Files[0].SizeBytes != 5 {
					t.Fatalf("imported files: %+v", files.Files)
				}
			}
		})
	}
}

func TestExportAndImportRefuseWrongCalls(t *testing.T) {
	data, noteID, _ := grantWorkspace(t)
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.zip")
	os.WriteFile(exists, []byte("x"), 0o644)
	full := filepath.Join(dir, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), []byte("x"), 0o644)
	notZip := filepath.Join(dir, "not.zip")
	os.WriteFile(notZip, []byte("not a zip"), 0o644)
	for _, tc := range []struct {
		args  []string
		code  int
		words string
	}{
		{[]string{"export", "--data", data, filepath.Join(dir, "a.zip")}, 2, "--note ID or --all"},
		{[]string{"export", "--data", data, "--all", "--note", noteID, filepath.Join(dir, "a.zip")}, 2, "exactly one"},
		{[]string{"export", "--data", data, "--note", noteID, exists}, 2, "exists already"},
		{[]string{"export", "--data", data, "--note", noteID, full}, 1, "not empty"},
		{[]string{"export", "--data", data, "--note", "note_nosuchnote", filepath.Join(dir, "b.zip")}, 1, "no Note note_nosuchnote"},
		{[]string{"export", "--data", data, "--note", noteID}, 2, "needs OUT"},
		{[]string{"import", "--data", data, filepath.Join(dir, "missing.zip")}, 2, "give a folder or a .zip"},
		{[]string{"import", "--data", data, notZip}, 1, "is not a zip"},
		{[]string{"import", "--data", data, full}, 1, "not in a Note's folder"},
	} {
		code, stdout, stderr := runInProcess(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.words) {
			t.Errorf("foundry %s: exit %d (want %d)\n%s%s\nwant it to say %q", strings.Join(tc.args, " "), code, tc.code, stdout, stderr, tc.words)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b.zip")); err == nil {
		t.Fatal("a failed export left its zip")
	}
}

// TestExportImportOnPostgres: the same commands with --database, from one
// PostgreSQL schema to another.
func TestExportImportOnPostgres(t *testing.T) {
	from, _ := pgtest.Schema(t)
	to, _ := pgtest.Schema(t)
	ctx := context.Background()
	st, err := server.OpenStore(ctx, server.Config{Database: from})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st)
	o, _, err := svc.Bootstrap(ctx, "PG", "owner@localhost")
	if err != nil {
		t.Fatal(err)
	}
	n, err := svc.CreateNote(ctx, service.Operator(o), service.CreateNoteArgs{Title: "On PostgreSQL"})
	if err == nil {
		_, err = svc.UploadFile(ctx, service.Operator(o), service.UploadArgs{NoteID: n.NoteID, FileUpload: service.FileUpload{Name: "pg.txt", Body: strings.NewReader("chunks"), Length: 6}})
	}
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(t.TempDir(), "pg.zip")
	if code, stdout, stderr := runInProcess(t, "export", "--database", from, "--all", zipPath); code != 0 {
		t.Fatalf("export: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := runInProcess(t, "import", "--database", to, zipPath)
	if code != 0 || len(strings.Fields(stdout)) != 1 {
		t.Fatalf("import: %d\n%s%s", code, stdout, stderr)
	}
	st, err = server.OpenStore(ctx, server.Config{Database: to})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc = service.New(st)
	o, err = svc.FirstWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := svc.OpenFile(ctx, service.Operator(o), service.FileArgs{NoteID: strings.TrimSpace(stdout), FileID: "file-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, _ := io.ReadAll(b); string(got) != "chunks" {
		t.Fatalf("the imported file holds %q", got)
	}
}
