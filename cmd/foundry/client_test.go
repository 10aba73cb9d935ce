package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/server"
	"foundry/internal/service"
	"foundry/internal/store"
)

// storedClients reads the OAuth clients back from the data folder.
func storedClients(t *testing.T, data string) (cs []store.Client) {
	t.Helper()
	onData(t, data, func(ctx context.Context, svc *service.Service, _ service.Caller) {
		var err error
		if cs, err = svc.Store.Clients(ctx); err != nil {
			t.Fatal(err)
		}
	})
	return cs
}

// TestClientAddListRemove: client add stores a public client and prints
// its ID; --confidential also prints a secret, of which only the hash is
// stored; client list shows both; client remove deletes one and revokes
// its connections; refusals name the flag and store nothing.
func TestClientAddListRemove(t *testing.T) {
	data, _, _ := grantWorkspace(t)
	code, stdout, stderr := runInProcess(t, "client", "add", "--data", data, "--name", "Desk app",
		"--redirect-uri", "http://127.0.0.1/callback", "--redirect-uri", "com.example.desk:/oauth")
	if code != 0 {
		t.Fatalf("client add: exit %d, %s", code, stderr)
	}
	public := strings.TrimSpace(stdout)
	if !strings.HasPrefix(public, "client_") || strings.Contains(public, "\n") {
		t.Fatalf("client add printed %q, want the client ID alone", stdout)
	}
	if !strings.Contains(stderr, "public") {
		t.Errorf("client add said %q", stderr)
	}
	code, stdout, stderr = runInProcess(t, "client", "add", "--data", data, "--name", "CI runner", "--redirect-uri", "https://ci.example.com/cb", "--confidential")
	if code != 0 {
		t.Fatalf("client add --confidential: exit %d, %s", code, stderr)
	}
	lines := strings.Fields(stdout)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "client_") || !strings.HasPrefix(lines[1], "fdycs_") {
		t.Fatalf("client add --confidential printed %q, want the client ID then the secret", stdout)
	}
	confidential, secret := lines[0], lines[1]
	byID := map[string]store.Client{}
	for _, c := range storedClients(t, data) {
		byID[c.ID] = c
	}
	if c := byID[public]; c.Kind != store.ClientRegistered || c.SecretHash != "" || c.Name != "Desk app" || len(c.RedirectURIs) != 2 {
		t.Errorf("public client stored as %+v", c)
	}
	if c := byID[confidential]; c.SecretHash != auth.HashToken(secret) || strings.Contains(string(c.Metadata), secret) {
		t.Errorf("confidential client stored as %+v", c)
	}

	code, stdout, _ = runInProcess(t, "client", "list", "--data", data)
	if code != 0 || !strings.HasPrefix(stdout, "ID") {
		t.Fatalf("client list: exit %d, %q", code, stdout)
	}
	for _, want := range []string{public, "Desk app", "registered", "http://127.0.0.1/callback,com.example.desk:/oauth", confidential, "CI runner"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("client list lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, secret) || strings.Contains(stdout, auth.HashToken(secret)) {
		t.Errorf("client list shows the secret or its hash")
	}

	// Refusals: exit 2, the flag named, nothing stored.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "x", "--redirect-uri", "http://app.example.com/cb"}, "--redirect-uri: \"http://app.example.com/cb\" uses http"},
		{[]string{"--name", "x", "--redirect-uri", "https://app.example.com/cb#frag"}, "--redirect-uri:"},
		{[]string{"--name", "x", "--redirect-uri", "javascript:alert(1)"}, "--redirect-uri:"},
		{[]string{"--name", "x"}, "--redirect-uri: give at least one"},
		{[]string{"--redirect-uri", "http://127.0.0.1/cb"}, "--name: is empty"},
		{[]string{"--name", "a\u202eb", "--redirect-uri", "http://127.0.0.1/cb"}, "--name:"},
	} {
		code, _, stderr := runInProcess(t, append([]string{"client", "add", "--data", data}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("client add %v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if n := len(storedClients(t, data)); n != 2 {
		t.Errorf("refused adds left %d clients, want 2", n)
	}

	code, stdout, stderr = runInProcess(t, "client", "remove", public, "--data", data)
	if code != 0 || !strings.Contains(stdout, "removed "+public) {
		t.Fatalf("client remove: exit %d, %q %q", code, stdout, stderr)
	}
	cs := storedClients(t, data)
	if len(cs) != 1 || cs[0].ID != confidential {
		t.Errorf("after remove: %+v", cs)
	}
	code, _, stderr = runInProcess(t, "client", "remove", public, "--data", data)
	if code != 1 || !strings.Contains(stderr, "no client "+public) || !strings.Contains(stderr, "client list") {
		t.Errorf("removing it again: exit %d, %q", code, stderr)
	}
}

// TestClientRemoveRevokesItsConnections: removing a client revokes every
// live connection to it, so its tokens stop working.
func TestClientRemoveRevokesItsConnections(t *testing.T) {
	data := filepath.Join(t.TempDir(), "foundry-data")
	ctx := context.Background()
	st, err := server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	c := store.Client{ID: "cli_gone", Name: "gone", RedirectURIs: []string{"http://127.0.0.1/cb"}, Kind: store.ClientRegistered}
	other := store.Client{ID: "cli_stays", Name: "stays", RedirectURIs: []string{"http://127.0.0.1/cb"}, Kind: store.ClientRegistered}
	ws := store.Workspace{ID: store.NewID("ws"), Name: "w"}
	owner := store.User{ID: store.NewID("usr"), Workspace: ws.ID, Email: "o@example.com", Name: "o", Role: "owner"}
	conns := map[string]string{}
	err = func() error {
		defer st.Close()
		for _, cl := range []store.Client{c, other} {
			if err := st.CreateClient(ctx, cl); err != nil {
				return err
			}
		}
		if err := st.CreateWorkspace(ctx, ws, owner); err != nil {
			return err
		}
		for _, cl := range []string{c.ID, other.ID} {
			conn, err := st.PutConnection(ctx, store.Connection{ID: store.NewID("conn"), Workspace: ws.ID, User: owner.ID, Client: cl, Scopes: []string{auth.ScopeRead}})
			if err != nil {
				return err
			}
			conns[cl] = conn.ID
		}
		return nil
	}()
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runInProcess(t, "client", "remove", c.ID, "--data", data)
	if code != 0 || !strings.Contains(stdout, "(1 connection revoked)") {
		t.Fatalf("client remove: exit %d, %q %q", code, stdout, stderr)
	}
	st, err = server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gone, _ := st.Connection(ctx, conns[c.ID])
	stays, _ := st.Connection(ctx, conns[other.ID])
	if gone.RevokedAt == nil || stays.RevokedAt != nil {
		t.Errorf("after removing %s: its connection revoked at %v, the other's at %v", c.ID, gone.RevokedAt, stays.RevokedAt)
	}
}
