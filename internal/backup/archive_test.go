package backup_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"foundry/internal/backup"
)

// TestArchiveBackupRoundTrip: a backup named *.tar.gz is one file that
// verifies, restores into a data folder that serves the file's bytes, and
// holds no manifest in the restored folder.
func TestArchiveBackupRoundTrip(t *testing.T) {
	ctx := context.Background()
	data, _, file, body := small(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "foundry.tar.gz")
	m, err := backup.Backup(ctx, data, out, backup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the archive: %v, %v", fi, err)
	}
	assertPrivate(t, out)
	if _, err := backup.Verify(ctx, out); err != nil {
		t.Fatalf("verify the archive: %v", err)
	}
	if _, err := backup.Backup(ctx, data, out, backup.Options{}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a second backup to the same archive: %v, want it refused", err)
	}
	restored := filepath.Join(dir, "restored")
	got, err := backup.Restore(ctx, out, restored, backup.Options{})
	if err != nil {
		t.Fatalf("restore the archive: %v", err)
	}
	if got.Database.SHA256 != m.Database.SHA256 {
		t.Errorf("restored manifest %+v, want %+v", got, m)
	}
	if _, err := os.Stat(filepath.Join(restored, backup.ManifestName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the restored data folder holds the manifest (%v)", err)
	}
	assertPrivate(t, restored)
	svc, op := reopen(t, restored)
	if b := fileBytes(t, svc, op, file.NoteID, file.File.ID); string(b) != string(body) {
		t.Errorf("restored file holds %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("left in the folder: %v, want the archive and the restored folder only", entries)
	}
}

// TestArchiveRefusedWhenChanged: an archive cut short, with a byte
// changed, with a name no backup holds (a path out of the folder), or
// with a blob its manifest does not list is refused, and nothing is
// restored.
func TestArchiveRefusedWhenChanged(t *testing.T) {
	ctx := context.Background()
	data, _, _, _ := small(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tgz")
	if _, err := backup.Backup(ctx, data, good, backup.Options{}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// rewrite copies the good archive's entries, changed by fn, then extra.
	rewrite := func(t *testing.T, fn func(h *tar.Header, b []byte) []byte, extra map[string]string) string {
		zr, err := gzip.NewReader(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		p := filepath.Join(t.TempDir(), "changed.tar.gz")
		f, _ := os.Create(p)
		zw := gzip.NewWriter(f)
		tw := tar.NewWriter(zw)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			b := make([]byte, h.Size)
			if _, err := io.ReadFull(tr, b); err != nil {
				t.Fatal(err)
			}
			if fn != nil {
				b = fn(h, b)
			}
			h.Size = int64(len(b))
			tw.WriteHeader(h)
			tw.Write(b)
		}
		for name, body := range extra {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg})
			tw.Write([]byte(body))
		}
		tw.Close()
		zw.Close()
		f.Close()
		return p
	}
	cut := filepath.Join(t.TempDir(), "cut.tar.gz")
	os.WriteFile(cut, raw[:len(raw)/2], 0o600)
	for _, tc := range []struct {
		name, archive, want string
	}{
		{"cut short", cut, "damaged"},
		{"database changed", rewrite(t, func(h *tar.Header, b []byte) []byte {
			if h.Name == backup.DBName {
				b[len(b)/2] ^= 0xff
			}
			return b
		}, nil), "does not match its manifest"},
		{"path out of the folder", rewrite(t, nil, map[string]string{"../evil": "x"}), `holds "../evil"`},
		{"unknown name", rewrite(t, nil, map[string]string{"run.sh": "x"}), `holds "run.sh"`},
		{"blob not in the manifest", rewrite(t, nil, map[string]string{"blobs/ws_x/ab/" + strings.Repeat("c", 62): "x"}), "does not list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := filepath.Join(t.TempDir(), "restored")
			if _, err := backup.Restore(ctx, tc.archive, target, backup.Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("restore: %v; want an error saying %q", err, tc.want)
			}
			if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused restore left %s (%v)", target, err)
			}
			assertNoStaging(t, filepath.Dir(target))
			if tc.name != "blob not in the manifest" {
				if _, err := backup.Verify(ctx, tc.archive); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("verify: %v; want an error saying %q", err, tc.want)
				}
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(target)), "evil")); err == nil {
				t.Error("an archive wrote outside its folder")
			}
		})
	}
}
