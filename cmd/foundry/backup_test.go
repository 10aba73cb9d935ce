package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"foundry/internal/backup"
	"foundry/internal/server"
	"foundry/internal/service"
)

// TestBackupAndRestoreCommands: foundry backup copies a data folder that a
// server holds open (and has just written), foundry restore puts it back
// in a new folder, and the Note written is there when the new folder is
// opened as serve opens it.
func TestBackupAndRestoreCommands(t *testing.T) {
	data, noteID, _ := grantWorkspace(t)
	ctx := context.Background()
	// The server is running: its store is open, and it writes.
	st, err := server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st)
	o, err := svc.FirstWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	text := "written while serving"
	if _, err := svc.EditNoteTab(ctx, service.Operator(o), service.EditTabArgs{NoteID: noteID, TabID: "markdown", Operation: "replace_text", Text: &text}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "backup")
	code, stdout, stderr := runInProcess(t, "backup", "--data", data, out)
	st.Close()
	if code != 0 || !strings.Contains(stdout, "backup written to "+out) || !strings.Contains(stdout, "1 workspace(s), 1 Note(s)") {
		t.Fatalf("backup: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "copying the database") {
		t.Errorf("backup printed no progress on stderr: %q", stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m backup.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.FoundryVersion != version || m.SchemaVersion != backup.SchemaVersion() || m.Database.SHA256 == "" || m.Counts.Notes != 1 {
		t.Errorf("manifest %+v", m)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	code, stdout, stderr = runInProcess(t, "restore", out, "--data", restored, "--quiet")
	if code != 0 || !strings.Contains(stdout, "serve it with: foundry serve --data "+restored) || stderr != "" {
		t.Fatalf("restore: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	onData(t, restored, func(ctx context.Context, svc *service.Service, op service.Caller) {
		tab, err := svc.ReadNoteTab(ctx, op, service.TabArgs{NoteID: noteID, TabID: "markdown"})
		if err != nil || tab.Text == nil || *tab.Text != text {
			t.Errorf("restored Note: %+v, %v; want its markdown %q", tab, err, text)
		}
	})

	// As one archive, too.
	archive := filepath.Join(t.TempDir(), "foundry.tar.gz")
	if code, stdout, stderr := runInProcess(t, "backup", "--data", data, archive, "--quiet"); code != 0 || stderr != "" || !strings.Contains(stdout, "backup written to "+archive) {
		t.Fatalf("backup to an archive: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	fromArchive := filepath.Join(t.TempDir(), "from-archive")
	if code, _, stderr := runInProcess(t, "restore", archive, "--data", fromArchive, "--quiet"); code != 0 {
		t.Fatalf("restore from an archive: exit %d, stderr %q", code, stderr)
	}
	onData(t, fromArchive, func(ctx context.Context, svc *service.Service, op service.Caller) {
		tab, err := svc.ReadNoteTab(ctx, op, service.TabArgs{NoteID: noteID, TabID: "markdown"})
		if err != nil || tab.Text == nil || *tab.Text != text {
			t.Errorf("Note restored from the archive: %+v, %v; want its markdown %q", tab, err, text)
		}
	})

	// Again into the same folders: both refuse, exit 1, and say why.
	if code, _, stderr := runInProcess(t, "backup", "--data", data, out); code != 1 || !strings.Contains(stderr, "is not empty") {
		t.Errorf("backup into a full folder: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runInProcess(t, "restore", out, "--data", restored); code != 1 || !strings.Contains(stderr, "is not empty") {
		t.Errorf("restore into a full folder: exit %d, %q", code, stderr)
	}
	// A tampered backup is refused.
	os.Chmod(filepath.Join(out, "foundry.db"), 0o600)
	f, _ := os.OpenFile(filepath.Join(out, "foundry.db"), os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("x"))
	f.Close()
	if code, _, stderr := runInProcess(t, "restore", out, "--data", filepath.Join(t.TempDir(), "r")); code != 1 || !strings.Contains(stderr, "does not match its manifest") {
		t.Errorf("restore of a tampered backup: exit %d, %q", code, stderr)
	}
}

// TestBackupFlagsRefused: asked wrongly, backup, restore and serve's
// backup flags exit 2 naming the flag and the fix.
func TestBackupFlagsRefused(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--data", data}, "needs OUT"},
		{[]string{"backup", "--data", data, "a", "b"}, "takes OUT only"},
		{[]string{"backup", "--database", "postgres://x/y", "out"}, "pg_dump"},
		{[]string{"restore", "b"}, "--data: give the new data folder"},
		{[]string{"restore", "b", "--data", data, "--database", "postgres://x/y"}, "pg_restore"},
		{[]string{"serve", "--data", data, "--backup-every", "1h"}, "need --backup-dir"},
		{[]string{"serve", "--data", data, "--backup-keep", "3"}, "need --backup-dir"},
		{[]string{"serve", "--database", "postgres://x/y", "--backup-dir", t.TempDir()}, "pg_dump"},
		{[]string{"serve", "--data", data, "--backup-dir", t.TempDir(), "--backup-every", "10s"}, "--backup-every: 10s is too often"},
		{[]string{"serve", "--data", data, "--backup-dir", t.TempDir(), "--backup-keep", "0"}, "--backup-keep: 0 keeps no backup"},
		{[]string{"serve", "--data", data, "--backup-dir", filepath.Join(data, "b")}, "inside the data folder"},
	} {
		code, _, stderr := runInProcess(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("foundry %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
	if code, _, stderr := runInProcess(t, "backup", "--data", data, filepath.Join(t.TempDir(), "b")); code != 1 || !strings.Contains(stderr, "holds no Foundry database") {
		t.Errorf("backup of an empty folder: exit %d, %q", code, stderr)
	}
}
