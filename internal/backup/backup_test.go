package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"foundry/internal/backup"
	"foundry/internal/server"
	"foundry/internal/service"
	"foundry/internal/store"
)

// served is a data folder open in a server, as serve opens it.
type served struct {
	data string
	st   store.Store
	srv  *server.Server
	op   service.Caller
}

func serve(t testing.TB, data string) *served {
	t.Helper()
	ctx := context.Background()
	st, err := server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(st, server.Config{DataDir: data, Version: "test"})
	o, _, err := srv.Service.Bootstrap(ctx, "Foundry", "owner@localhost")
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	s := &served{data: data, st: st, srv: srv, op: service.Operator(o)}
	t.Cleanup(func() { st.Close() })
	return s
}

func (s *served) close(t *testing.T) {
	t.Helper()
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
}

// reopen opens a data folder as serve does, with its first workspace.
func reopen(t *testing.T, data string) (*service.Service, service.Caller) {
	t.Helper()
	ctx := context.Background()
	st, err := server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := service.New(st)
	o, err := svc.FirstWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return svc, service.Operator(o)
}

func (s *served) note(t *testing.T, title, text string) string {
	t.Helper()
	ctx := context.Background()
	n, err := s.srv.Service.CreateNote(ctx, s.op, service.CreateNoteArgs{Title: title})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.srv.Service.EditNoteTab(ctx, s.op, service.EditTabArgs{NoteID: n.NoteID, TabID: "markdown", Operation: "replace_text", Text: &text}); err != nil {
		t.Fatal(err)
	}
	return n.NoteID
}

func (s *served) upload(t *testing.T, noteID string, body []byte) service.FileAdded {
	t.Helper()
	f, err := s.srv.Service.UploadFile(context.Background(), s.op, service.UploadArgs{NoteID: noteID,
		FileUpload: service.FileUpload{Name: "f.bin", ContentType: "application/octet-stream", Body: bytes.NewReader(body), Length: int64(len(body))}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func markdown(t *testing.T, svc *service.Service, op service.Caller, noteID string) string {
	t.Helper()
	tab, err := svc.ReadNoteTab(context.Background(), op, service.TabArgs{NoteID: noteID, TabID: "markdown"})
	if err != nil {
		t.Fatalf("read Note %s: %v", noteID, err)
	}
	if tab.Text == nil {
		return ""
	}
	return *tab.Text
}

func fileBytes(t *testing.T, svc *service.Service, op service.Caller, noteID, fileID string) []byte {
	t.Helper()
	_, b, err := svc.OpenFile(context.Background(), op, service.FileArgs{NoteID: noteID, FileID: fileID})
	if err != nil {
		t.Fatalf("open file %s of Note %s: %v", fileID, noteID, err)
	}
	defer b.Close()
	got, err := io.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// small is a data folder with one Note that has one file.
func small(t *testing.T) (data, noteID string, file service.FileAdded, body []byte) {
	t.Helper()
	data = filepath.Join(t.TempDir(), "data")
	s := serve(t, data)
	noteID = s.note(t, "Small", "hello")
	body = []byte("the bytes of one file")
	file = s.upload(t, noteID, body)
	s.close(t)
	return data, noteID, file, body
}

// ack is one write the service acknowledged: the Note's markdown says
// "rev N" from then on, or the file is in it.
type ack struct {
	note string
	rev  int
	file string // set for an upload
	sha  string
}

// TestBackupUnderLoadKeepsEveryAcknowledgedWrite: writers create and edit
// Notes and upload files without pause; a backup is taken in the middle;
// restored into a new folder, it holds every write acknowledged before the
// backup started (edits, Notes, files with their bytes), and its database
// is intact.
func TestBackupUnderLoadKeepsEveryAcknowledgedWrite(t *testing.T) {
	const writers, notesEach, maxOps = 4, 3, 120
	ctx := context.Background()
	dir := t.TempDir()
	s := serve(t, filepath.Join(dir, "data"))

	var mu sync.Mutex
	var acks []ack
	started := make(chan struct{}) // closed once enough writes are acknowledged
	var startOnce sync.Once
	stop := make(chan struct{})
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			svc := s.srv.Service
			var notes []string
			for i := range notesEach {
				n, err := svc.CreateNote(ctx, s.op, service.CreateNoteArgs{Title: fmt.Sprintf("w%d n%d", w, i)})
				if err != nil {
					errs <- err
					return
				}
				notes = append(notes, n.NoteID)
			}
			rev := map[string]int{}
			for k := range maxOps {
				select {
				case <-stop:
					return
				default:
				}
				id := notes[k%notesEach]
				var a ack
				if k%7 == 6 {
					body := fmt.Appendf(nil, "file of writer %d, op %d: %s", w, k, strings.Repeat("x", 512*(k%5)))
					f, err := svc.UploadFile(ctx, s.op, service.UploadArgs{NoteID: id,
						FileUpload: service.FileUpload{Name: fmt.Sprintf("f%d.txt", k), ContentType: "text/plain", Body: bytes.NewReader(body), Length: int64(len(body))}})
					if err != nil {
						errs <- fmt.Errorf("upload: %w", err)
						return
					}
					sum := sha256.Sum256(body)
					a = ack{note: id, rev: rev[id], file: f.File.ID, sha: hex.EncodeToString(sum[:])}
				} else {
					rev[id]++
					text := fmt.Sprintf("writer %d note %s rev %d", w, id, rev[id])
					if _, err := svc.EditNoteTab(ctx, s.op, service.EditTabArgs{NoteID: id, TabID: "markdown", Operation: "replace_text", Text: &text}); err != nil {
						errs <- fmt.Errorf("edit: %w", err)
						return
					}
					a = ack{note: id, rev: rev[id]}
				}
				mu.Lock()
				acks = append(acks, a)
				if len(acks) >= writers*10 {
					startOnce.Do(func() { close(started) })
				}
				mu.Unlock()
			}
		})
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()
	select {
	case <-started:
	case <-writersDone:
		t.Fatal("the writers stopped before the backup could start")
	}

	mu.Lock()
	before := append([]ack(nil), acks...) // acknowledged before the backup started
	mu.Unlock()
	out := filepath.Join(dir, "backup")
	m, err := backup.Backup(ctx, s.data, out, backup.Options{Version: "test"})
	mu.Lock()
	during := len(acks) - len(before)
	mu.Unlock()
	close(stop)
	<-writersDone
	close(errs)
	for err := range errs {
		t.Errorf("a writer failed: %v", err)
	}
	if err != nil {
		t.Fatalf("backup under load: %v", err)
	}
	t.Logf("%d writes acknowledged before the backup, %d while it ran; manifest: %+v", len(before), during, m.Counts)
	if m.SchemaVersion != store.SchemaVersion() {
		t.Errorf("manifest schema version %d, want %d", m.SchemaVersion, store.SchemaVersion())
	}
	if m.Counts.Workspaces != 1 || m.Counts.Notes < writers*notesEach {
		t.Errorf("manifest counts %+v: want 1 workspace and at least %d Notes", m.Counts, writers*notesEach)
	}
	if _, err := backup.Verify(ctx, out); err != nil {
		t.Fatalf("verify the backup: %v", err)
	}

	restored := filepath.Join(dir, "restored")
	if _, err := backup.Restore(ctx, out, restored, backup.Options{Version: "test"}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	svc, op := reopen(t, restored)
	want := map[string]int{}  // the newest rev acknowledged before the backup, per Note
	files := map[string]ack{} // files acknowledged before the backup
	for _, a := range before {
		if a.file != "" {
			files[a.file] = a
		} else {
			want[a.note] = max(want[a.note], a.rev)
		}
	}
	for id, rev := range want {
		text := markdown(t, svc, op, id)
		i := strings.LastIndex(text, " rev ")
		got, err := strconv.Atoi(text[i+len(" rev "):])
		if i < 0 || err != nil {
			t.Fatalf("Note %s restored with markdown %q", id, text)
		}
		if got < rev {
			t.Errorf("Note %s restored at rev %d; rev %d was acknowledged before the backup started", id, got, rev)
		}
	}
	for _, a := range files {
		b := fileBytes(t, svc, op, a.note, a.file)
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != a.sha {
			t.Errorf("file %s of Note %s restored with other bytes", a.file, a.note)
		}
	}
	if len(want) == 0 || len(files) == 0 {
		t.Fatalf("the load acknowledged %d edited Notes and %d files before the backup; want some of each", len(want), len(files))
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(restored, backup.DBName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("restored database integrity_check: %q, %v", check, err)
	}
}

// TestRestoreRefusesNewerSchema: a backup of a database a newer Foundry
// migrated is refused, naming both schema versions and the fix; nothing
// is written.
func TestRestoreRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	data, _, _, _ := small(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, backup.DBName))
	if err != nil {
		t.Fatal(err)
	}
	newer := store.SchemaVersion() + 1
	if _, err := db.Exec(`INSERT INTO schema_migrations (version) VALUES (?)`, newer); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out := filepath.Join(t.TempDir(), "b")
	m, err := backup.Backup(ctx, data, out, backup.Options{Version: "9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion != newer {
		t.Fatalf("manifest schema version %d, want %d", m.SchemaVersion, newer)
	}
	target := filepath.Join(t.TempDir(), "restored")
	_, err = backup.Restore(ctx, out, target, backup.Options{Version: "0.1.0"})
	var se *backup.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("restore of a newer schema: %v, want a *SchemaError", err)
	}
	for _, want := range []string{strconv.Itoa(newer), strconv.Itoa(store.SchemaVersion()), "9.9.9", "upgrade Foundry"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused restore left %s behind (%v)", target, err)
	}
}

// TestRestoreRefusesTamperedBackup: a blob or a database whose bytes are
// not the manifest's is refused, and nothing is left at the target.
func TestRestoreRefusesTamperedBackup(t *testing.T) {
	ctx := context.Background()
	data, _, file, _ := small(t)
	good := filepath.Join(t.TempDir(), "good")
	m, err := backup.Backup(ctx, data, good, backup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Blobs) != 1 || m.Blobs[0].SHA256 != file.File.SHA256 {
		t.Fatalf("manifest blobs %+v, want the one file's %s", m.Blobs, file.File.SHA256)
	}
	assertPrivate(t, good)
	blob := filepath.Join(backup.BlobsDir, m.Blobs[0].Workspace, m.Blobs[0].SHA256[:2], m.Blobs[0].SHA256[2:])
	for _, tc := range []struct {
		name, file, want string
		tamper           func(b []byte) []byte
	}{
		{"blob changed", blob, "does not match its manifest", func(b []byte) []byte { b[0] ^= 1; return b }},
		{"blob cut", blob, "does not match its manifest", func(b []byte) []byte { return b[:len(b)-1] }},
		{"database changed", backup.DBName, "database foundry.db does not match its manifest", func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b }},
		{"manifest drops the blob", backup.ManifestName, "does not list as missing", func(b []byte) []byte {
			var raw map[string]any
			json.Unmarshal(b, &raw)
			raw["blobs"] = []any{}
			out, _ := json.Marshal(raw)
			return out
		}},
		{"manifest names another schema", backup.ManifestName, "manifest says", func(b []byte) []byte {
			var raw map[string]any
			json.Unmarshal(b, &raw)
			raw["schema_version"] = store.SchemaVersion() - 1
			out, _ := json.Marshal(raw)
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "b")
			if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, tc.file)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, 0o600)
			if err := os.WriteFile(p, tc.tamper(b), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := backup.Verify(ctx, dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("verify: %v; want an error saying %q", err, tc.want)
			}
			target := filepath.Join(t.TempDir(), "restored")
			if _, err := backup.Restore(ctx, dir, target, backup.Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("restore: %v; want an error saying %q", err, tc.want)
			}
			if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused restore left %s behind (%v)", target, err)
			}
			assertNoStaging(t, filepath.Dir(target))
		})
	}
	// The untouched backup restores and serves.
	target := filepath.Join(t.TempDir(), "restored")
	if _, err := backup.Restore(ctx, good, target, backup.Options{}); err != nil {
		t.Fatal(err)
	}
	assertPrivate(t, target)
	svc, op := reopen(t, target)
	if got := fileBytes(t, svc, op, file.NoteID, file.File.ID); string(got) != "the bytes of one file" {
		t.Errorf("restored file holds %q", got)
	}
}

// assertPrivate: a backup or restored folder holds what the database does
// (password and token hashes): no one but its owner may read any of it.
func assertPrivate(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v: others may read it", path, fi.Mode().Perm())
		}
		return nil
	})
}

func assertNoStaging(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".partial-") {
			t.Errorf("%s left behind in %s", e.Name(), dir)
		}
	}
}

// TestBackupAndRestoreRefuseNonEmptyTargets: neither writes into a folder
// that holds anything, and what is there stays as it was.
func TestBackupAndRestoreRefuseNonEmptyTargets(t *testing.T) {
	ctx := context.Background()
	data, _, _, _ := small(t)
	full := t.TempDir()
	keep := filepath.Join(full, "precious.txt")
	os.WriteFile(keep, []byte("mine"), 0o600)
	if _, err := backup.Backup(ctx, data, full, backup.Options{}); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("backup into a non-empty folder: %v, want it refused as not empty", err)
	}
	good := filepath.Join(t.TempDir(), "good")
	if _, err := backup.Backup(ctx, data, good, backup.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Restore(ctx, good, full, backup.Options{}); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("restore into a non-empty folder: %v, want it refused as not empty", err)
	}
	if _, err := backup.Restore(ctx, good, data, backup.Options{}); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("restore over the live data folder: %v, want it refused as not empty", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Errorf("the folder's file is now %q, %v", b, err)
	}
	assertNoStaging(t, filepath.Dir(full))
	if _, err := backup.Backup(ctx, data, filepath.Join(data, "backups", "b"), backup.Options{}); err == nil || !strings.Contains(err.Error(), "inside the data folder") {
		t.Errorf("backup into the data folder: %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(data, "backups")); err == nil {
		t.Error("a refused backup into the data folder made a folder there")
	}
	// An empty folder is taken.
	empty := t.TempDir()
	if _, err := backup.Restore(ctx, good, empty, backup.Options{}); err != nil {
		t.Errorf("restore into an empty folder: %v", err)
	}
	if _, err := backup.Backup(ctx, filepath.Join(t.TempDir(), "nothing"), filepath.Join(t.TempDir(), "b"), backup.Options{}); err == nil || !strings.Contains(err.Error(), "holds no Foundry database") {
		t.Errorf("backup of a folder with no database: %v", err)
	}
	if _, err := backup.Restore(ctx, t.TempDir(), filepath.Join(t.TempDir(), "r"), backup.Options{}); err == nil || !strings.Contains(err.Error(), "not a Foundry backup") {
		t.Errorf("restore of a folder that is no backup: %v", err)
	}
}

// TestBackupReportsLostBlob: a data folder whose database names a file
// whose bytes are gone is backed up with the rest, and the manifest lists
// the file as missing; the backup verifies and restores.
func TestBackupReportsLostBlob(t *testing.T) {
	ctx := context.Background()
	data, _, file, _ := small(t)
	var ws string
	entries, _ := os.ReadDir(filepath.Join(data, "blobs"))
	for _, e := range entries {
		ws = e.Name()
	}
	sha := file.File.SHA256
	if err := os.Remove(filepath.Join(data, "blobs", ws, sha[:2], sha[2:])); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "b")
	var said []string
	m, err := backup.Backup(ctx, data, out, backup.Options{Progress: func(s string) { said = append(said, s) }})
	if err != nil {
		t.Fatalf("backup with a lost blob: %v", err)
	}
	if len(m.MissingBlobs) != 1 || m.MissingBlobs[0].SHA256 != sha || m.MissingBlobs[0].Workspace != ws || len(m.Blobs) != 0 {
		t.Errorf("manifest blobs %+v, missing %+v; want %s/%s missing", m.Blobs, m.MissingBlobs, ws, sha)
	}
	if !strings.Contains(strings.Join(said, "\n"), "warning: the database names 1 file(s) whose bytes are not in the data folder (first: "+ws+"/"+sha) {
		t.Errorf("the backup did not warn of the lost file: %q", said)
	}
	if _, err := backup.Verify(ctx, out); err != nil {
		t.Errorf("verify: %v", err)
	}
	if _, err := backup.Restore(ctx, out, filepath.Join(t.TempDir(), "r"), backup.Options{}); err != nil {
		t.Errorf("restore: %v", err)
	}
}

// TestBackupFollowsTheBlobIndex: with a blob index (a blobs table), a blob
// file the copied database neither indexes nor names (stored after the
// copy was taken) is left out, so the restored folder's files and index
// agree; an indexed one is kept though no version names it.
func TestBackupFollowsTheBlobIndex(t *testing.T) {
	ctx := context.Background()
	data, _, file, _ := small(t)
	entries, _ := os.ReadDir(filepath.Join(data, "blobs"))
	ws := entries[0].Name()
	put := func(body string) string {
		sum := sha256.Sum256([]byte(body))
		sha := hex.EncodeToString(sum[:])
		p := filepath.Join(data, "blobs", ws, sha[:2], sha[2:])
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return sha
	}
	indexed, stray := put("indexed, not yet in a Note"), put("stored after the copy")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, backup.DBName))
	if err != nil {
		t.Fatal(err)
	}
	// The blobs table is the store's own (its migrations made it).
	if _, err := db.Exec(`INSERT INTO blobs (workspace_id, sha256, size, created_us) VALUES (?, ?, 1, 1)`, ws, indexed); err != nil {
		t.Fatal(err)
	}
	db.Close()
	m, err := backup.Backup(ctx, data, filepath.Join(t.TempDir(), "b"), backup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range m.Blobs {
		got = append(got, b.SHA256)
	}
	want := []string{file.File.SHA256, indexed}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("backed up blobs %v, want the named and the indexed %v (not %s)", got, want, stray)
	}
}

// TestBackupOfAnOlderRelease: a data folder an earlier release wrote (its
// database at an older schema, without the tables of later ones) is
// backed up and restored as it is, and the restored folder is migrated
// when a server opens it.
func TestBackupOfAnOlderRelease(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(data, 0o700)
	b, err := os.ReadFile(filepath.Join("..", "store", "testdata", "release-1", backup.DBName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, backup.DBName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "b")
	m, err := backup.Backup(ctx, data, out, backup.Options{})
	if err != nil {
		t.Fatalf("backup of a release-1 data folder: %v", err)
	}
	if m.SchemaVersion >= store.SchemaVersion() || m.Counts.Notes == 0 {
		t.Fatalf("manifest of the release-1 backup: schema %d (this build: %d), counts %+v", m.SchemaVersion, store.SchemaVersion(), m.Counts)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := backup.Restore(ctx, out, restored, backup.Options{}); err != nil {
		t.Fatalf("restore of an older schema: %v", err)
	}
	reopen(t, restored) // migrates, as serve does
	db, err := sql.Open("sqlite", "file:"+filepath.Join(restored, backup.DBName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v, notes int
	if err := db.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil || v != store.SchemaVersion() {
		t.Errorf("the restored release-1 folder is at schema %d after opening (%v), want %d", v, err, store.SchemaVersion())
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM resources WHERE type = 'note'`).Scan(&notes); err != nil || int64(notes) != m.Counts.Notes {
		t.Errorf("the restored folder has %d Notes (%v), the manifest says %d", notes, err, m.Counts.Notes)
	}
}

// TestBackupOfTheDemoNamesNoMissingFile: a repository's versions carry a
// "sha256" of their own (of the pushed files as a whole, no blob); a
// backup of a workspace that has one (the demo's) finds every file it
// names and warns of none.
func TestBackupOfTheDemoNamesNoMissingFile(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	s := serve(t, data)
	o, _, err := s.srv.Service.Bootstrap(ctx, "Foundry", "owner@localhost")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.srv.Service.Demo(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := s.srv.Service.DemoRoom(ctx, o); err != nil {
		t.Fatal(err)
	}
	s.close(t)
	m, err := backup.Backup(ctx, data, filepath.Join(t.TempDir(), "b"), backup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.MissingBlobs) != 0 {
		t.Errorf("the demo's backup lists missing files %+v; the demo stores none without its bytes", m.MissingBlobs)
	}
}
