package sqlite_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"foundry/internal/store"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

func TestBlobContract(t *testing.T) {
	storetest.BlobContract(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestBlobFilesInTheDataFolder: a blob is one file named by its hash under
// the data folder, and no temporary file is left once Put returns.
func TestBlobFilesInTheDataFolder(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws := storetest.Seed(t, s)
	sha, _, err := s.Blobs().Put(context.Background(), ws, strings.NewReader("hello"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "blobs", ws, sha[:2], sha[2:])); err != nil || string(b) != "hello" {
		t.Fatalf("blob file: %q %v", b, err)
	}
	// A put over the limit leaves nothing behind either.
	s.Blobs().Put(context.Background(), ws, strings.NewReader("much too long"), 3)
	ents, _ := os.ReadDir(filepath.Join(dir, "blobs", ws))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".put-") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

func TestBlobCollectContract(t *testing.T) {
	storetest.BlobCollectContract(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestBlobFilesFromBefore: blob files of a data folder from before the
// blob index are indexed by the first collect, counted, and kept (as
// referenced: nothing can tell that no version names them).
func TestBlobFilesFromBefore(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws := storetest.Seed(t, s)
	place := func(body string) string {
		sum := sha256.Sum256([]byte(body))
		sha := hex.EncodeToString(sum[:])
		p := filepath.Join(dir, "blobs", ws, sha[:2], sha[2:])
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return sha
	}
	old := []string{place("a file of a Note"), place("a file deleted long ago")}
	os.WriteFile(filepath.Join(dir, "blobs", ws, ".put-123"), []byte("a temporary file"), 0o600)
	os.WriteFile(filepath.Join(dir, "blobs", ws, "ab", "not-a-hash"), []byte("stray"), 0o600)
	if u, _ := s.Blobs().Usage(ctx, ws); u.Count != 0 {
		t.Fatalf("usage before the first collect: %+v", u)
	}
	rep, err := s.Blobs().Collect(ctx, time.Now().Add(1000*time.Hour), store.BlobCollect{})
	if err != nil || rep.Indexed != 2 || rep.Removed != 0 {
		t.Fatalf("first collect: %+v %v", rep, err)
	}
	want := store.BlobUsage{Count: 2, Bytes: int64(len("a file of a Note") + len("a file deleted long ago"))}
	if u, _ := s.Blobs().Usage(ctx, ws); u != want {
		t.Fatalf("usage after indexing: %+v, want %+v", u, want)
	}
	rep, err = s.Blobs().Collect(ctx, time.Now().Add(1000*time.Hour), store.BlobCollect{})
	if err != nil || rep.Indexed != 0 || rep.Removed != 0 {
		t.Fatalf("second collect: %+v %v", rep, err)
	}
	for _, sha := range old {
		if ok, _ := s.Blobs().Has(ctx, ws, sha); !ok {
			t.Fatalf("a blob from before the index was removed")
		}
	}
	// A new upload beside them is collected as ever.
	sha, _, err := s.Blobs().Put(ctx, ws, strings.NewReader("refused"), 100)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Blobs().Collect(ctx, time.Now().Add(2*time.Hour), store.BlobCollect{}); err != nil || rep.Removed != 1 {
		t.Fatalf("collect of a new upload: %+v %v", rep, err)
	}
	if ok, _ := s.Blobs().Has(ctx, ws, sha); ok {
		t.Fatal("the new unreferenced blob was kept")
	}
}
