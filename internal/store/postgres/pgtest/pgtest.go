// Package pgtest gives tests and benchmarks a fresh PostgreSQL schema from
// FOUNDRY_TEST_POSTGRES_URL, and skips them with a clear message without it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// URLEnv names the variable that points tests at a PostgreSQL server.
const URLEnv = "FOUNDRY_TEST_POSTGRES_URL"

// BaseURL returns the server URL or skips tb.
func BaseURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv(URLEnv)
	if u == "" {
		tb.Skip("set " + URLEnv + " (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run the PostgreSQL tests")
	}
	return u
}

// Schema creates an empty schema, drops it when tb ends (register it before
// opening stores on it: cleanups run last registered first, so the stores
// close before the drop), and returns a URL whose search_path is that schema,
// and the schema's name.
func Schema(tb testing.TB) (string, string) {
	tb.Helper()
	base := BaseURL(tb)
	var b [6]byte
	rand.Read(b[:])
	schema := "foundry_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("admin connection: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		admin, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("admin connection: %v", err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("%s is not a URL: %v", URLEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), schema
}
