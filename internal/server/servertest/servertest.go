// Package servertest starts a real Foundry server on a loopback port for
// tests, benchmarks and simulations, and connects real MCP clients to it.
package servertest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
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

// BearerTransport adds a bearer token to every request.
type BearerTransport struct {
	Token string
	Base  http.RoundTripper
}

func (b BearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.Token != "" {
		r.Header.Set("Authorization", "Bearer "+b.Token)
	}
	base := b.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
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
	c := mcp.NewClient(&mcp.Implementation{Name: "foundry-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: BearerTransport{Token: token, Base: base}}, DisableStandaloneSSE: true, MaxRetries: -1}
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(context.Background(), tr, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Result is a tool result decoded for assertions.
type Result struct {
	IsError bool
	Data    map[string]any
	Text    string
}

// Call calls a tool and decodes its structured content. A protocol or HTTP
// error is returned as err.
func Call(ctx context.Context, cs *mcp.ClientSession, tool string, args any) (Result, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return Result{}, err
	}
	r := Result{IsError: res.IsError}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r.Data)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	r.Text = strings.Join(texts, "\n")
	return r, nil
}

// MustCall is Call that fails the test on a protocol error.
func MustCall(t testing.TB, cs *mcp.ClientSession, tool string, args any) Result {
	t.Helper()
	r, err := Call(context.Background(), cs, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return r
}

// Int reads a JSON number field.
func (r Result) Int(k string) int64 {
	f, _ := r.Data[k].(float64)
	return int64(f)
}

// Str reads a string field.
func (r Result) Str(k string) string {
	s, _ := r.Data[k].(string)
	return s
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
