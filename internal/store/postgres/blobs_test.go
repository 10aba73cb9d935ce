package postgres_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io"
	"strconv"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"foundry/internal/store"
	"foundry/internal/store/storetest"
)

func TestBlobContract(t *testing.T) {
	baseURL(t)
	storetest.BlobContract(t, func(t *testing.T) store.Store {
		u, _ := freshSchema(t)
		return open(t, u)
	})
}

func TestBlobCollectContract(t *testing.T) {
	baseURL(t)
	storetest.BlobCollectContract(t, func(t *testing.T) store.Store {
		u, _ := freshSchema(t)
		return open(t, u)
	})
}

// TestBlobsFromBeforeTheIndex: a database whose blobs table predates the
// index (no put_us, no referenced) migrates, and its blobs are counted and
// kept, as nothing can tell that no version names them.
func TestBlobsFromBeforeTheIndex(t *testing.T) {
	baseURL(t)
	ctx := context.Background()
	u, _ := freshSchema(t)
	s := open(t, u)
	ws := storetest.Seed(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	body := []byte("bytes from an earlier release")
	sum := sha256.Sum256(body)
	sha := hex.EncodeToString(sum[:])
	for _, q := range []string{
		`DROP INDEX blobs_unreferenced`,
		`ALTER TABLE blobs DROP COLUMN put_us, DROP COLUMN referenced`,
		// The blob index's migration and the three after it (the sign-in
		// counters', the trash's and the search index's, which run again
		// harmlessly) are undone.
		`DELETE FROM schema_migrations WHERE version >= ` + strconv.Itoa(store.SchemaVersion()-3),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO blobs (workspace_id, sha256, size, created_us) VALUES ($1, $2, $3, $4)`, ws, sha, len(body), time.Now().Add(-1000*time.Hour).UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO blob_chunks (workspace_id, sha256, seq, data) VALUES ($1, $2, 0, $3)`, ws, sha, body); err != nil {
		t.Fatal(err)
	}
	s = open(t, u) // migrates
	if got, err := s.Blobs().Usage(ctx, ws); err != nil || got != (store.BlobUsage{Count: 1, Bytes: int64(len(body))}) {
		t.Fatalf("usage after the migration: %+v %v", got, err)
	}
	if rep, err := s.Blobs().Collect(ctx, time.Now().Add(1000*time.Hour), store.BlobCollect{}); err != nil || rep.Removed != 0 {
		t.Fatalf("collect: %+v %v", rep, err)
	}
	b, err := s.Blobs().Open(ctx, ws, sha)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, _ := io.ReadAll(b); !bytes.Equal(got, body) {
		t.Fatalf("read back %q", got)
	}
}
