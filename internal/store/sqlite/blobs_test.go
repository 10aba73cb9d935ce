package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
