package backup_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/url"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"foundry/internal/server"
	"foundry/internal/service"
	"foundry/internal/store/postgres/pgtest"
)

// TestPostgresDumpHoldsTheFiles follows the operators' guide on
// PostgreSQL: pg_dump -Fc of a Foundry database, pg_restore into a new
// database, and the restored database serves the Note and its file's
// bytes (blobs are rows, so they are in the dump). The dump is of the
// test's own schema, as the test server is shared.
func TestPostgresDumpHoldsTheFiles(t *testing.T) {
	u, schema := pgtest.Schema(t)
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the PostgreSQL procedure cannot be run here", tool)
		}
	}
	ctx := context.Background()
	st, err := server.OpenStore(ctx, server.Config{Database: u})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st)
	o, _, err := svc.Bootstrap(ctx, "Foundry", "owner@localhost")
	if err != nil {
		t.Fatal(err)
	}
	op := service.Operator(o)
	n, err := svc.CreateNote(ctx, op, service.CreateNoteArgs{Title: "Dumped"})
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("a file larger than one chunk "), 40000) // > 1 MiB: several blob_chunks rows
	f, err := svc.UploadFile(ctx, op, service.UploadArgs{NoteID: n.NoteID, FileUpload: service.FileUpload{Name: "big.txt", ContentType: "text/plain", Body: bytes.NewReader(body), Length: int64(len(body))}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	base := pgtest.BaseURL(t)
	dump := filepath.Join(t.TempDir(), "foundry.dump")
	if out, err := exec.CommandContext(ctx, "pg_dump", "-Fc", "--schema", schema, "--file", dump, "--dbname", base).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}

	// A new database to restore into, dropped at the end.
	var rb [6]byte
	rand.Read(rb[:])
	db := "foundry_test_restore_" + hex.EncodeToString(rb[:])
	admin := func(stmt string) error {
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, stmt)
		return err
	}
	if err := admin("CREATE DATABASE " + db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := admin("DROP DATABASE " + db + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", db, err)
		}
	})
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = "/" + db
	// The dump of one schema leaves out the extensions of public (a whole
	// database's dump has them): the trigram index needs pg_trgm.
	if c, err := pgx.Connect(ctx, target.String()); err == nil {
		c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_trgm")
		c.Close(ctx)
	}
	if out, err := exec.CommandContext(ctx, "pg_restore", "--no-owner", "--exit-on-error", "--single-transaction", "--dbname", target.String(), dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}

	q := target.Query()
	q.Set("search_path", schema)
	target.RawQuery = q.Encode()
	rst, err := server.OpenStore(ctx, server.Config{Database: target.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer rst.Close()
	rsvc := service.New(rst)
	ro, err := rsvc.FirstWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, blob, err := rsvc.OpenFile(ctx, service.Operator(ro), service.FileArgs{NoteID: n.NoteID, FileID: f.File.ID})
	if err != nil {
		t.Fatalf("the restored database's file: %v", err)
	}
	defer blob.Close()
	got, err := io.ReadAll(blob)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("the restored file has %d bytes, want the %d uploaded", len(got), len(body))
	}
}
