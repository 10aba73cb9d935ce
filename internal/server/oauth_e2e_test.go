package server_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"foundry/internal/account"
	"foundry/internal/auth"
	"foundry/internal/oauth/clients"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

const ownerPassword = "correct horse battery staple"

// oauthEnv is a running server whose owner has a password, and a person at
// a browser who signs in and consents when a client sends them to
// /authorize.
type oauthEnv struct {
	*servertest.Env
	dir     string
	browser *browser
	// consent is what the person ticks on each consent page, in turn (the
	// last one repeats); nil fields keep the page's defaults.
	consents []map[string]string
	asked    atomic.Int32 // consent pages answered
	pages    []string     // the consent pages' HTML, in order
	mu       sync.Mutex
}

func startOAuth(t *testing.T, c server.Config) *oauthEnv {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := servertest.Start(t, servertest.Options{Store: st, Config: c})
	if err := account.SetPassword(context.Background(), e.Server.Store, e.Owner.User, "password", ownerPassword); err != nil {
		t.Fatal(err)
	}
	return &oauthEnv{Env: e, dir: dir}
}

// reopen is a second handle on the server's data folder, for another node.
func reopen(t *testing.T, o *oauthEnv) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), o.dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// fetcher is the client's AuthorizationCodeFetcher: the person opens the
// URL, signs in on the real form if asked, consents on the real form, and
// the code comes back on the redirect to the client.
func (o *oauthEnv) fetcher(t *testing.T, redirect string) sdkauth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
		if o.browser == nil {
			o.browser = newBrowser(t, redirect)
		}
		b := o.browser
		p := b.get(args.URL)
		if strings.Contains(p.URL.Path, "/signin") {
			p = b.submit(p, "", map[string]string{"email": o.Owner.User.Email, "password": ownerPassword})
		}
		if p.Status != http.StatusOK || !strings.Contains(p.Body, "consent_decision") {
			return nil, fmt.Errorf("expected the consent page, got %d at %s:\n%s", p.Status, p.URL, p.Body)
		}
		o.mu.Lock()
		o.pages = append(o.pages, p.Body)
		choice := map[string]string{"consent_decision": "approve"}
		if len(o.consents) > 0 {
			i := min(int(o.asked.Load()), len(o.consents)-1)
			for k, v := range o.consents[i] {
				choice[k] = v
			}
		}
		o.mu.Unlock()
		o.asked.Add(1)
		done := b.submit(p, "approve", choice)
		if done.Location == "" {
			return nil, fmt.Errorf("consent did not redirect to the client: %d\n%s", done.Status, done.Body)
		}
		u, err := url.Parse(done.Location)
		if err != nil {
			return nil, err
		}
		q := u.Query()
		if q.Get("error") != "" {
			return nil, fmt.Errorf("authorization refused: %s: %s", q.Get("error"), q.Get("error_description"))
		}
		return &sdkauth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// grantCounter counts the token endpoint's grants by type.
type grantCounter struct {
	base   http.RoundTripper
	mu     sync.Mutex
	grants map[string]int
}

func (c *grantCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/token") && r.Body != nil {
		raw, _ := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(strings.NewReader(string(raw)))
		v, _ := url.ParseQuery(string(raw))
		c.mu.Lock()
		c.grants[v.Get("grant_type")]++
		c.mu.Unlock()
	}
	return c.base.RoundTrip(r)
}

func (c *grantCounter) count(grant string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.grants[grant]
}

func connectOAuth(t *testing.T, o *oauthEnv, cfg *sdkauth.AuthorizationCodeHandlerConfig) (*mcp.ClientSession, *sdkauth.AuthorizationCodeHandler) {
	t.Helper()
	h, err := sdkauth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "oauth-e2e", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: o.URL + "/mcp", OAuthHandler: h, HTTPClient: cfg.Client}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, h
}

func callTool(cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
}

// TestOAuthConnectByURL is a real client connecting by URL alone: the
// go-sdk's client-side OAuth follows the 401 to the protected resource
// metadata and the authorization server metadata, registers itself
// (RFC 7591), sends the person to sign in and consent (real forms, CSRF
// tokens included), exchanges the code with PKCE, calls tools, refreshes
// its short-lived access token, writes, and is refused once the person
// revokes the connection.
func TestOAuthConnectByURL(t *testing.T) {
	t.Parallel()
	o := startOAuth(t, server.Config{AccessTokenLifespan: 5 * time.Second})
	redirect := "http://127.0.0.1:1/callback"
	ct := &grantCounter{base: http.DefaultTransport, grants: map[string]int{}}
	cs, h := connectOAuth(t, o, &sdkauth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &sdkauth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "E2E client", RedirectURIs: []string{redirect},
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: o.fetcher(t, redirect),
		Client:                   &http.Client{Transport: ct},
	})

	res, err := callTool(cs, "list_notes", map[string]any{})
	if err != nil || res.IsError {
		t.Fatalf("list_notes over OAuth: %v %+v", err, res)
	}
	if !strings.Contains(fmt.Sprint(res.StructuredContent), o.NoteID) {
		t.Fatalf("list_notes does not list the demo Note %s: %+v", o.NoteID, res.StructuredContent)
	}
	if !strings.Contains(o.pages[0], "E2E client") {
		t.Errorf("the consent page does not name the client")
	}
	if ct.count("authorization_code") != 1 {
		t.Fatalf("code exchanges = %d, want 1", ct.count("authorization_code"))
	}

	// The access token lives 5 s, inside the oauth2 library's 10 s expiry
	// margin: every call refreshes it, with rotation.
	for i := range 3 {
		if res, err := callTool(cs, "list_note_tabs", map[string]any{"note_id": o.NoteID}); err != nil || res.IsError {
			t.Fatalf("call %d after refresh: %v %+v", i, err, res)
		}
	}
	if n := ct.count("refresh_token"); n < 2 {
		t.Fatalf("refreshes = %d, want at least 2", n)
	}

	res, err = callTool(cs, "create_note_tab", map[string]any{"note_id": o.NoteID, "tab_type": "sheet", "label": "By OAuth", "expected_version": noteVersion(t, cs, o.NoteID), "idempotency_key": "oauth-write-1"})
	if err != nil || res.IsError {
		t.Fatalf("create_note_tab over OAuth: %v %+v", err, res)
	}

	// The person revokes the connection: the client's token is refused.
	ts, err := h.TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("token source: %v", err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	// The MCP client's token is for /mcp: the REST API refuses it and says
	// why; a personal access token still reaches the API.
	if status, challenge, body := apiBearer(t, o.URL+"/api/notes", tok.AccessToken); status != http.StatusUnauthorized ||
		!strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, o.URL+"/mcp") || !strings.Contains(body, "personal access token") {
		t.Fatalf("an OAuth token for /mcp at /api/notes: %d %q %s, want 401 naming its audience", status, challenge, body)
	}
	if status, _, body := apiBearer(t, o.URL+"/api/notes", o.Token(t, nil, auth.ScopeRead)); status != http.StatusOK {
		t.Fatalf("a personal access token at /api/notes: %d %s", status, body)
	}
	conns := apiJSON(t, o, http.MethodGet, "/api/connections")
	var live []string
	for _, c := range conns["connections"].([]any) {
		m := c.(map[string]any)
		if m["kind"] == "oauth" && m["revoked_at"] == nil {
			live = append(live, m["id"].(string))
		}
	}
	if len(live) != 1 {
		t.Fatalf("live OAuth connections in /api/connections: %d, want 1: %v", len(live), conns)
	}
	apiJSON(t, o, http.MethodDelete, "/api/connections/"+live[0])
	status, challenge := rawCall(t, o.URL, tok.AccessToken)
	if status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, "resource_metadata=") {
		t.Fatalf("revoked token: %d %q, want 401 invalid_token with resource_metadata", status, challenge)
	}
}

// TestOAuthStepUp: a client granted read only meets 403 insufficient_scope
// on a write tool; it asks again, the person sees write marked new on a
// second consent and grants it, and the call succeeds. Scopes never grow
// without that consent.
func TestOAuthStepUp(t *testing.T) {
	t.Parallel()
	o := startOAuth(t, server.Config{})
	o.consents = []map[string]string{{"consent_scope": auth.ScopeRead}, {}}
	redirect := "http://localhost:1/callback"
	c, _, err := clients.Add(context.Background(), o.Server.Store, clients.Spec{Name: "Step-up client", RedirectURIs: []string{"http://localhost/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := connectOAuth(t, o, &sdkauth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      &oauthex.ClientCredentials{ClientID: c.ID},
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: o.fetcher(t, redirect),
	})
	if res, err := callTool(cs, "list_notes", map[string]any{}); err != nil || res.IsError {
		t.Fatalf("list_notes: %v %+v", err, res)
	}
	if strings.Contains(o.pages[0], `class="new"`) {
		t.Errorf("the first consent marks a scope as new")
	}
	res, err := callTool(cs, "create_note_tab", map[string]any{"note_id": o.NoteID, "tab_type": "sheet", "label": "Step-up", "expected_version": noteVersion(t, cs, o.NoteID), "idempotency_key": "oauth-step-up-1"})
	if err != nil || res.IsError {
		t.Fatalf("create_note_tab after step-up: %v %+v", err, res)
	}
	if o.asked.Load() != 2 {
		t.Fatalf("consent pages = %d, want 2 (the first, and the step-up)", o.asked.Load())
	}
	if !strings.Contains(o.pages[1], `<span class="new">new</span>`) {
		t.Errorf("the step-up consent does not mark the write scope as new:\n%s", o.pages[1])
	}
	conns, err := o.Server.Store.Connections(context.Background(), o.Owner.Workspace.ID)
	if err != nil || len(conns) != 1 || len(conns[0].Scopes) != 2 {
		t.Fatalf("connections after step-up: %+v %v, want one with both scopes", conns, err)
	}
}

func noteVersion(t *testing.T, cs *mcp.ClientSession, note string) int64 {
	t.Helper()
	res, err := callTool(cs, "list_note_tabs", map[string]any{"note_id": note})
	if err != nil || res.IsError {
		t.Fatalf("list_note_tabs: %v %+v", err, res)
	}
	v, _ := res.StructuredContent.(map[string]any)["version"].(float64)
	return int64(v)
}

// apiJSON calls the people's REST API as the signed-in browser (its
// session cookie, and the CSRF token /api/me gives).
func apiJSON(t *testing.T, o *oauthEnv, method, path string) map[string]any {
	t.Helper()
	do := func(method, path, csrf string) (int, map[string]any) {
		req, _ := http.NewRequest(method, o.URL+path, nil)
		if csrf != "" {
			req.Header.Set(auth.CSRFHeader, csrf)
			req.Header.Set("Origin", o.URL)
		}
		res, err := o.browser.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	_, me := do(http.MethodGet, "/api/me", "")
	csrf, _ := me["csrf_token"].(string)
	if method == http.MethodGet {
		csrf = ""
	}
	status, out := do(method, path, csrf)
	if status/100 != 2 {
		t.Fatalf("%s %s: %d %v", method, path, status, out)
	}
	return out
}

// rawCall is tools/call with a bearer token: its status and challenge.
// apiBearer GETs a REST URL with a bearer token: the status, the
// WWW-Authenticate challenge and the body.
func apiBearer(t *testing.T, u, token string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

func rawCall(t *testing.T, base, token string) (int, string) {
	t.Helper()
	return rawCallHost(t, base, "", token)
}

// TestOAuthClientIDMetadataDocument: a client whose ID is the https URL of
// its metadata document connects without registering; the consent page
// names it from the document.
func TestOAuthClientIDMetadataDocument(t *testing.T) {
	t.Parallel()
	redirect := "http://localhost:1/cb"
	docURL, fetch := serveClientDocument(t, "Document client", redirect)

	o := startOAuth(t, server.Config{ClientMetadataHTTP: fetch})
	cs, _ := connectOAuth(t, o, &sdkauth.AuthorizationCodeHandlerConfig{
		ClientIDMetadataDocumentConfig: &sdkauth.ClientIDMetadataDocumentConfig{URL: docURL},
		RedirectURL:                    redirect,
		AuthorizationCodeFetcher:       o.fetcher(t, redirect),
	})
	if res, err := callTool(cs, "list_notes", map[string]any{}); err != nil || res.IsError {
		t.Fatalf("list_notes: %v %+v", err, res)
	}
	if !strings.Contains(o.pages[0], "Document client") {
		t.Errorf("the consent page does not name the client from its document")
	}
	cl, err := o.Server.Store.Clients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cl) != 0 {
		t.Errorf("a metadata-document client was stored: %+v", cl)
	}
}

// serveClientDocument publishes a client ID metadata document (client
// name, one redirect URI) on an https server on 127.0.0.1, and answers its
// URL (the client ID) and the guarded client that may fetch it: the guard
// lets that one address through, as no server's guard ever does.
func serveClientDocument(t *testing.T, name, redirect string) (docURL string, fetch *http.Client) {
	t.Helper()
	doc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"client_id": docURL, "client_name": name, "redirect_uris": []string{redirect},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "token_endpoint_auth_method": "none",
		})
	}))
	t.Cleanup(doc.Close)
	docURL = doc.URL + "/client.json"
	pool := x509.NewCertPool()
	pool.AddCert(doc.Certificate())
	docAddr := netip.MustParseAddrPort(strings.TrimPrefix(doc.URL, "https://"))
	return docURL, clients.NewHTTPClient(clients.Guard{RootCAs: pool, Allow: func(a netip.AddrPort) bool { return a == docAddr }})
}

// TestOAuthRefusalsOverMCP: what a client meets at /mcp with a token that
// is not for it: another audience's, a read grant on a write tool, and a
// Note outside its grant.
func TestOAuthRefusalsOverMCP(t *testing.T) {
	t.Parallel()
	o := startOAuth(t, server.Config{})
	// Consent: read only, and no Note at all.
	o.consents = []map[string]string{{"consent_scope": auth.ScopeRead, "consent_notes_mode": "list", "consent_notes": "\x00"}}
	redirect := "http://127.0.0.1:1/callback"
	failAgain := errors.New("no second consent in this test")
	fetch := o.fetcher(t, redirect)
	cs, h := connectOAuth(t, o, &sdkauth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &sdkauth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Narrow", RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none",
		}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, a *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
			if o.asked.Load() > 0 {
				return nil, failAgain
			}
			return fetch(ctx, a)
		},
	})
	res, err := callTool(cs, "read_note_tab", map[string]any{"note_id": o.NoteID, "tab_id": "markdown"})
	if err != nil {
		t.Fatalf("read_note_tab: %v", err)
	}
	if !res.IsError || !strings.Contains(strings.ToLower(textOf(res)), "not found") {
		t.Fatalf("a Note outside the grant: %+v, want a not-found tool error", textOf(res))
	}
	ts, _ := h.TokenSource(context.Background())
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	// A write tool: 403 insufficient_scope naming the scope.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_note_source","arguments":{"note_id":"x","title":"t","url":"https://example.com","expected_version":1,"idempotency_key":"abcdefgh"}}}`
	req, _ := http.NewRequest(http.MethodPost, o.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if c := r.Header.Get("WWW-Authenticate"); r.StatusCode != http.StatusForbidden || !strings.Contains(c, `error="insufficient_scope"`) || !strings.Contains(c, `scope="osfoundry:write"`) {
		t.Fatalf("read grant on a write tool: %d %q", r.StatusCode, c)
	}
	// The same token presented to another node whose resource URL differs
	// (another public URL): wrong audience, 401.
	other := servertest.StartNode(t, reopen(t, o), server.Config{})
	if status, c := rawCall(t, other.URL, tok.AccessToken); status != http.StatusUnauthorized || !strings.Contains(c, `error="invalid_token"`) {
		t.Fatalf("token for another resource: %d %q, want 401 invalid_token", status, c)
	}
	// The token still works where it belongs.
	if status, _ := rawCall(t, o.URL, tok.AccessToken); status != http.StatusOK {
		t.Fatalf("the token at its own resource: %d", status)
	}
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// TestOAuthAcrossNodes: two nodes on one PostgreSQL database behind a
// round-robin balancer, with one public URL. Sign-in, consent, code
// exchange, refresh and tool calls land on either node; a revocation made
// through one node is refused by both within a second.
func TestOAuthAcrossNodes(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	ctx := context.Background()
	var backends [2]*url.URL
	var next atomic.Uint64
	var hits [2]atomic.Int64
	lb := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := next.Add(1) % 2
		hits[i].Add(1)
		r.SetURL(backends[i])
		r.Out.Host = r.In.Host // the public host, as a balancer passes it on
	}})
	t.Cleanup(lb.Close)
	var envs [2]*servertest.Env
	for i := range 2 {
		st, err := postgres.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		srv := server.New(st, server.Config{PublicURL: lb.URL, AccessTokenLifespan: 5 * time.Second})
		if srv.OAuthErr != nil {
			t.Fatal(srv.OAuthErr)
		}
		hs := httptest.NewServer(srv.Handler)
		t.Cleanup(func() { hs.Close(); st.Close() })
		backends[i], _ = url.Parse(hs.URL)
		envs[i] = &servertest.Env{URL: lb.URL, Server: srv, HTTP: hs}
	}
	owner, _, err := envs[0].Server.Service.Bootstrap(ctx, "Test", "owner@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if envs[0].NoteID, err = envs[0].Server.Service.Demo(ctx, owner); err != nil {
		t.Fatal(err)
	}
	envs[0].Owner = owner
	if err := account.SetPassword(ctx, envs[0].Server.Store, owner.User, "password", ownerPassword); err != nil {
		t.Fatal(err)
	}
	o := &oauthEnv{Env: envs[0]}
	redirect := "http://127.0.0.1:1/callback"
	ct := &grantCounter{base: http.DefaultTransport, grants: map[string]int{}}
	cs, h := connectOAuth(t, o, &sdkauth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &sdkauth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Balanced", RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: o.fetcher(t, redirect),
		Client:                   &http.Client{Transport: ct},
	})
	for i := range 4 {
		if res, err := callTool(cs, "list_note_tabs", map[string]any{"note_id": o.NoteID}); err != nil || res.IsError {
			t.Fatalf("call %d through the balancer: %v %+v", i, err, res)
		}
	}
	if hits[0].Load() == 0 || hits[1].Load() == 0 {
		t.Fatalf("the balancer did not reach both nodes: %d, %d", hits[0].Load(), hits[1].Load())
	}
	if ct.count("refresh_token") == 0 {
		t.Fatalf("no refresh happened")
	}
	ts, _ := h.TokenSource(ctx)
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	conns := apiJSON(t, o, http.MethodGet, "/api/connections")
	var id string
	for _, c := range conns["connections"].([]any) {
		if m := c.(map[string]any); m["kind"] == "oauth" {
			id = m["id"].(string)
		}
	}
	apiJSON(t, o, http.MethodDelete, "/api/connections/"+id)
	// Both nodes, each asked directly, refuse the token within a second.
	deadline := time.Now().Add(time.Second)
	for _, b := range backends {
		for {
			status, _ := rawCallHost(t, b.String(), lb.URL, tok.AccessToken)
			if status == http.StatusUnauthorized {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s still answers %d a second after the revocation", b, status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// rawCallHost is rawCall sent to a node directly, with the Host of public
// ("": the node's own).
func rawCallHost(t *testing.T, node, public, token string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`
	req, _ := http.NewRequest(http.MethodPost, node+"/mcp", strings.NewReader(body))
	if public != "" {
		pu, _ := url.Parse(public)
		req.Host = pu.Host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("WWW-Authenticate")
}

// TestMetadataDocumentOnPrivateAddressRefused: a client ID that points at
// a private or loopback address is refused on an error page that says why,
// and no connection reaches the address.
func TestMetadataDocumentOnPrivateAddressRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	o := startOAuth(t, server.Config{})
	for _, id := range []string{"https://" + ln.Addr().String() + "/client.json", "https://localhost/client.json", "https://10.0.0.1/client.json"} {
		q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {"http://127.0.0.1/cb"}, "state": {"state-0123456789"},
			"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGlSstw-cM"}, "code_challenge_method": {"S256"}, "resource": {o.URL + "/mcp"}}
		res, err := http.Get(o.URL + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.Header.Get("Location") != "" || !strings.Contains(string(body), "metadata document cannot be used") {
			t.Fatalf("%s: %d %s %s", id, res.StatusCode, res.Header.Get("Location"), body)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the guard let %d connections reach a loopback listener", n)
	}
}
