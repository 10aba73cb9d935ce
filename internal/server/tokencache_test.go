package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/store/sqlite"
)

// TestRevocationOnTheSameFolder: two servers on one SQLite folder (as two
// processes would be). A token minted through one works on the other at
// once; revoked through the first, it is refused there by the next call,
// and by the other server, which had it cached, within 1 s.
func TestRevocationOnTheSameFolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *sqlite.Store {
		st, err := sqlite.Open(ctx, dir, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a := servertest.Start(t, servertest.Options{Store: open()})
	b := servertest.StartNode(t, open(), server.Config{})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`
	tok := a.WriteToken(t)
	for _, e := range []*servertest.Env{b, a, b, a} {
		if resp := post(t, e.URL+"/mcp", tok, call); resp.StatusCode != http.StatusOK {
			t.Fatalf("a valid token on %s: HTTP %d", e.URL, resp.StatusCode)
		}
	}
	toks, err := a.Server.Store.Tokens(ctx, a.Owner.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range toks {
		if err := a.Server.Store.RevokeToken(ctx, a.Owner.Workspace.ID, tk.ID); err != nil {
			t.Fatal(err)
		}
	}
	if resp := post(t, a.URL+"/mcp", tok, call); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked through this server, the next call: HTTP %d, want 401", resp.StatusCode)
	}
	deadline := time.Now().Add(time.Second)
	for post(t, b.URL+"/mcp", tok, call).StatusCode != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("the other server on the same folder still accepts the revoked token after 1 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
