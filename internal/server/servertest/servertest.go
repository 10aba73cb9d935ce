// Package servertest starts a real Foundry server on a loopback port for
// tests, benchmarks and simulations, and connects real MCP clients to it.
package servertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/mcpclient"
	"foundry/internal/server"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/sqlite"
)

// Env is a running server with its workspace.
type Env struct {
	URL    string // base URL, e.g. http://127.0.0.1:41234
	Server *server.Server
	HTTP   *httptest.Server
	Owner  service.Owner
	NoteID string // the demo Note "Welcome"
	RoomID string // the demo cloud Room
}

// Options for Start.
type Options struct {
	Store  store.Store // nil: a fresh SQLite store in t.TempDir()
	Config server.Config
	// HTTP, when set, adjusts the http.Server before it starts (timeouts).
	HTTP func(*http.Server)
}

// Start runs a server on 127.0.0.1 with the demo workspace.
func Start(t testing.TB, o Options) *Env {
	t.Helper()
	ctx := context.Background()
	st := o.Store
	if st == nil {
		s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st = s
	}
	hs := httptest.NewUnstartedServer(nil) // loopback only
	if o.HTTP != nil {
		o.HTTP(hs.Config)
	}
	hs.Start()
	o.Config.PublicURL = hs.URL
	srv := server.New(st, o.Config)
	hs.Config.Handler = srv.Handler
	t.Cleanup(func() { hs.Close(); st.Close() })
	owner, _, err := srv.Service.Bootstrap(ctx, "Test", "owner@example.org")
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{URL: hs.URL, Server: srv, HTTP: hs, Owner: owner}
	if e.NoteID, err = srv.Service.Demo(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if e.RoomID, err = srv.Service.DemoRoom(ctx, owner); err != nil {
		t.Fatal(err)
	}
	return e
}

// Token creates a token with the given scopes (nil notes: all).
func (e *Env) Token(t testing.TB, notes []string, scopes ...string) string {
	t.Helper()
	secret, _, err := auth.CreateToken(context.Background(), e.Server.Store, auth.NewTokenSpec{
		Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: "test", Scopes: scopes, Notes: notes,
	})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// WriteToken is a read+write token for every Note.
func (e *Env) WriteToken(t testing.TB) string {
	return e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)
}

// Client connects the official go-sdk client over real HTTP. version ""
// uses the SDK's newest protocol (2026-07-28, stateless).
func (e *Env) Client(t testing.TB, token, version string) *mcp.ClientSession {
	t.Helper()
	return Connect(t, e.URL+"/mcp", token, version, nil)
}

// Connect connects a go-sdk client to any Foundry /mcp URL.
func Connect(t testing.TB, url, token, version string, base http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpclient.Dial(context.Background(), "foundry-test", url, token, version, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// MustCall is mcpclient.Call that fails the test on a protocol error.
func MustCall(t testing.TB, cs *mcp.ClientSession, tool string, args any) mcpclient.Result {
	t.Helper()
	r, err := mcpclient.Call(context.Background(), cs, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return r
}

// Serves reports whether the server has a tool of that name.
func (e *Env) Serves(name string) bool {
	for _, t := range e.Server.MCP.Tools() {
		if t.Def.Name == name {
			return true
		}
	}
	return false
}

// StartNode runs one more server (a node) on st, a store that already holds
// the workspace — as a second stateless node sharing one PostgreSQL database
// does. It creates nothing: no workspace, no demo Note or Room (Demo would
// add a second "Welcome" Note). Owner is the store's first workspace and its
// owner; NoteID and RoomID are empty. The server listens on 127.0.0.1 and
// is closed, with st, when the test ends.
func StartNode(t testing.TB, st store.Store, c server.Config) *Env {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil) // loopback only
	hs.Start()
	c.PublicURL = hs.URL
	srv := server.New(st, c)
	hs.Config.Handler = srv.Handler
	t.Cleanup(func() { hs.Close(); st.Close() })
	owner, err := srv.Service.FirstWorkspace(context.Background())
	if err != nil {
		t.Fatalf("StartNode: the shared store has no workspace yet (start the first node with Start): %v", err)
	}
	return &Env{URL: hs.URL, Server: srv, HTTP: hs, Owner: owner}
}
