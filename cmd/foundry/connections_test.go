package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/server"
	"foundry/internal/service"
	"foundry/internal/store"
)

// connectionsWorkspace is a data folder with one connected client (a
// metadata-document client, all Notes, no Room) and one token (one Note,
// all Rooms).
func connectionsWorkspace(t *testing.T) (data, connID, tokID, secret string) {
	t.Helper()
	data, noteID, _ := grantWorkspace(t)
	ctx := context.Background()
	st, err := server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o, err := service.New(st).FirstWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	cl := store.Client{ID: "https://claude.example.com/client.json", Name: "Claude\tDesktop", Kind: store.ClientMetadata, CreatedAt: now}
	if err := st.CreateClient(ctx, cl); err != nil {
		t.Fatal(err)
	}
	c, err := st.PutConnection(ctx, store.Connection{ID: store.NewID("conn"), Workspace: o.Workspace.ID, User: o.User.ID, Client: cl.ID,
		Scopes: []string{auth.ScopeRead, auth.ScopeWrite}, Notes: nil, Rooms: []string{}, CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	secret, tok, err := auth.CreateToken(ctx, st, auth.NewTokenSpec{Workspace: o.Workspace.ID, User: o.User.ID, Name: "ci", Scopes: []string{auth.ScopeRead}, Notes: []string{noteID}})
	if err != nil {
		t.Fatal(err)
	}
	return data, c.ID, tok.ID, secret
}

// row is the line of the table that starts with id, split on runs of
// spaces of two or more.
func row(t *testing.T, table, id string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, id+" ") {
			var cells []string
			for _, c := range strings.Split(line, "  ") {
				if c = strings.TrimSpace(c); c != "" {
					cells = append(cells, c)
				}
			}
			return cells
		}
	}
	t.Fatalf("no row for %s in:\n%s", id, table)
	return nil
}

func TestConnectionsListAndRevoke(t *testing.T) {
	data, connID, tokID, secret := connectionsWorkspace(t)
	code, out, stderr := runInProcess(t, "connections", "list", "--data", data)
	if code != 0 {
		t.Fatalf("connections list: exit %d, %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("connections list printed:\n%s\nwant a header and two rows", out)
	}
	for _, h := range []string{"KIND", "NAME", "USER", "SCOPES", "NOTES", "ROOMS", "CREATED", "LAST USED", "REVOKED"} {
		if !strings.Contains(lines[0], h) {
			t.Errorf("header %q lacks %s", lines[0], h)
		}
	}
	if !strings.HasPrefix(lines[1], tokID) {
		t.Errorf("newest first: the token (made last) is not first:\n%s", out)
	}
	c := row(t, out, connID)
	if len(c) != 10 || c[1] != "oauth" || c[2] != "Claude Desktop (claude.example.com)" || c[3] != "owner@localhost" ||
		c[4] != "osfoundry:read,osfoundry:write" || c[5] != "all" || c[6] != "none" || c[8] != "-" || c[9] != "-" {
		t.Errorf("the connection's row: %q", c)
	}
	tk := row(t, out, tokID)
	if len(tk) != 10 || tk[1] != "token" || tk[2] != "ci" || tk[4] != "osfoundry:read" || !strings.HasPrefix(tk[5], "note_") || tk[6] != "all" || tk[9] != "-" {
		t.Errorf("the token's row: %q", tk)
	}

	for _, id := range []string{connID, tokID} {
		code, out, stderr := runInProcess(t, "connections", "revoke", id, "--data", data)
		if code != 0 || strings.TrimSpace(out) != "revoked "+id {
			t.Fatalf("connections revoke %s: exit %d, %q, %q", id, code, out, stderr)
		}
	}
	_, out, _ = runInProcess(t, "connections", "list", "--data", data)
	for _, id := range []string{connID, tokID} {
		if r := row(t, out, id); len(r) != 10 || r[9] == "-" {
			t.Errorf("%s after revoking it: %q; want a revocation time", id, r)
		}
	}
	// The revoked token no longer verifies; the connection is revoked in the store.
	ctx := context.Background()
	st, err := server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Verify(ctx, st, secret); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("the revoked token verifies: %v", err)
	}
	if c, err := st.Connection(ctx, connID); err != nil || c.RevokedAt == nil {
		t.Errorf("the revoked connection: %+v, %v", c, err)
	}
	st.Close()

	// Refusals: again (says when), unknown, malformed, missing.
	code, _, stderr = runInProcess(t, "connections", "revoke", connID, "--data", data)
	if code != 1 || !strings.Contains(stderr, "already revoked") {
		t.Errorf("revoking it again: exit %d, %q; want 1 and already revoked", code, stderr)
	}
	code, _, stderr = runInProcess(t, "connections", "revoke", "conn_nope", "--data", data)
	if code != 1 || !strings.Contains(stderr, "no connection or token conn_nope") || !strings.Contains(stderr, "connections list") {
		t.Errorf("revoking an unknown ID: exit %d, %q", code, stderr)
	}
	code, _, stderr = runInProcess(t, "connections", "revoke", "conn_\x01", "--data", data)
	if code != 1 || !strings.Contains(stderr, "ID:") {
		t.Errorf("revoking a malformed ID: exit %d, %q", code, stderr)
	}
	code, _, stderr = runInProcess(t, "connections", "revoke", "--data", data)
	if code != 2 || !strings.Contains(stderr, "needs ID") {
		t.Errorf("revoke without an ID: exit %d, %q", code, stderr)
	}
}
