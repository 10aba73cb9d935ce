package sqlite

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// codedErr stands for the driver's *sqlite.Error (which cannot be built
// outside its package): SQLite's message and result code.
type codedErr struct {
	msg  string
	code int
}

func (e codedErr) Error() string { return e.msg }
func (e codedErr) Code() int     { return e.code }

// TestReadOnlyDataFolderIsNamed: SQLite's "attempt to write a readonly
// database (1544)" and "unable to open database file (14)", and a refused
// mkdir, become a message naming the folder or file and the permission
// missing. Tests run as root, whom permissions do not stop, so which paths
// are writable is injected here; cmd/foundry's TestReadOnlyDataFolder runs
// the real thing as an unprivileged user.
func TestReadOnlyDataFolderIsNamed(t *testing.T) {
	root := t.TempDir()
	existing := filepath.Join(root, "data")
	if err := os.MkdirAll(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(existing, "foundry.db")
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	denied := func(paths ...string) func(string, bool) error {
		return func(p string, _ bool) error {
			for _, d := range paths {
				if p == d {
					return &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES}
				}
			}
			return nil
		}
	}
	readonly := codedErr{"attempt to write a readonly database (1544)", 1544}
	cantOpen := codedErr{"unable to open database file (14)", 14}
	mkdir := &fs.PathError{Op: "mkdir", Path: filepath.Join(root, "new"), Err: syscall.EACCES}
	cases := []struct {
		name     string
		dir      string
		err      error
		writable func(string, bool) error
		want     []string // in the message; nil: the error is returned as it is
	}{
		{"readonly folder", existing, readonly, denied(existing), []string{"data folder " + existing + " is not writable by this user (uid ", "foundry.db", "-wal", "--data"}},
		{"cannot open", existing, cantOpen, denied(existing), []string{"data folder " + existing + " is not writable"}},
		{"wrapped", existing, errors.Join(errors.New("migrate"), readonly), denied(existing), []string{existing + " is not writable"}},
		{"readonly file", existing, readonly, denied(db), []string{db + " is not writable by this user"}},
		{"read-only file system", existing, readonly, func(string, bool) error { return syscall.EROFS }, []string{existing + " is on a read-only file system"}},
		{"folder not creatable", filepath.Join(root, "new", "deeper"), mkdir, denied(root), []string{"cannot create the data folder " + filepath.Join(root, "new", "deeper"), root + " is not writable"}},
		{"not a permission", existing, codedErr{"database disk image is malformed (11)", 11}, denied(existing), nil},
		{"permission but all writable", existing, readonly, denied(), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := explainAccess(c.dir, c.err, c.writable)
			if c.want == nil {
				if got != c.err {
					t.Fatalf("got %v, want the error as it was", got)
				}
				return
			}
			var ae *AccessError
			if !errors.As(got, &ae) {
				t.Fatalf("got %T %v, want an *AccessError", got, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
			if strings.Contains(got.Error(), "1544") || strings.Contains(got.Error(), "readonly database") {
				t.Errorf("%q still speaks SQLite", got)
			}
		})
	}
}

// TestOpenChecksAccessFirst: Open refuses a folder it cannot write before
// SQLite opens it read-only without a word (checked here through the real
// canWrite on a folder root can write: Open succeeds, and leaves no probe
// file behind).
func TestOpenChecksAccessFirst(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "write-check") {
			t.Fatalf("probe file %s left behind", e.Name())
		}
	}
	if err := checkAccess(dir, func(p string, _ bool) error { return syscall.EACCES }); err == nil {
		t.Fatal("checkAccess passed a folder that cannot be written")
	}
}
