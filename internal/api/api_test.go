package api_test

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/sqlite"
)

// people is a stand-in for the account layer: it finds the person of a
// request from the session cookie, through the store's sessions, as the
// real one does.
type people struct{ st store.Store }

func (p people) Current(r *http.Request) (auth.Person, bool) {
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil {
		return auth.Person{}, false
	}
	s, err := p.st.SessionByHash(r.Context(), auth.HashToken(c.Value), time.Now())
	if err != nil {
		return auth.Person{}, false
	}
	u, err := p.st.UserByID(r.Context(), s.User)
	if err != nil {
		return auth.Person{}, false
	}
	return auth.Person{User: u, Session: s}, true
}

func (people) SignInURL(returnTo string) string {
	return "/signin?return_to=" + url.QueryEscape(returnTo)
}

func (people) CheckCSRF(r *http.Request, p auth.Person) bool {
	v := r.Header.Get(auth.CSRFHeader)
	return v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(p.Session.CSRF)) == 1
}

func openSQLite(t *testing.T) store.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return store.WithTokenCache(s)
}

// browser is a signed-in person: their session's cookie secret and CSRF.
type browser struct {
	user         store.User
	secret, csrf string
}

type fixture struct {
	st            store.Store
	srv           *httptest.Server
	ws            store.Workspace
	owner, member browser
}

func newFixture(t *testing.T, st store.Store) *fixture {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	f := &fixture{st: st, ws: store.Workspace{ID: store.NewID("ws"), Name: "Atelier ✓", CreatedAt: now}}
	own := store.User{ID: store.NewID("usr"), Workspace: f.ws.ID, Email: "owner-" + f.ws.ID + "@example.com", Name: "Owner", Role: "owner", CreatedAt: now}
	if err := st.CreateWorkspace(ctx, f.ws, own); err != nil {
		t.Fatal(err)
	}
	mem := store.User{ID: store.NewID("usr"), Workspace: f.ws.ID, Email: "member-" + f.ws.ID + "@example.com", Name: "Member", Role: "member", CreatedAt: now}
	if err := st.CreateUser(ctx, mem); err != nil {
		t.Fatal(err)
	}
	f.owner, f.member = signIn(t, st, own), signIn(t, st, mem)
	f.srv = httptest.NewServer(api.New(service.New(st), people{st}, api.Options{}))
	t.Cleanup(f.srv.Close)
	return f
}

func signIn(t *testing.T, st store.Store, u store.User) browser {
	t.Helper()
	b := browser{user: u, secret: store.NewID("secret"), csrf: store.NewID("csrf")}
	now := time.Now().UTC()
	if err := st.CreateSession(context.Background(), store.Session{Hash: auth.HashToken(b.secret), Workspace: u.Workspace, User: u.ID, CSRF: b.csrf, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return b
}

// call sends a request as b (nil: nobody signed in) with the CSRF header
// csrf ("" : none) and answers the status and the decoded JSON body.
func (f *fixture) call(t *testing.T, b *browser, method, path, csrf string, body io.Reader) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if b != nil {
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: b.secret})
	}
	if csrf != "" {
		req.Header.Set(auth.CSRFHeader, csrf)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if len(raw) > 0 {
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !(res.StatusCode >= 400 && ct == api.ProblemContentType) {
			t.Fatalf("%s %s answered %d with Content-Type %q: %s", method, path, res.StatusCode, ct, raw)
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s answered %d with a body that is not a JSON object: %s", method, path, res.StatusCode, raw)
		}
	}
	return res.StatusCode, out, res.Header
}

func (f *fixture) connect(t *testing.T, u store.User, client store.Client, scopes []string, notes, rooms []string) store.Connection {
	t.Helper()
	c, err := f.st.PutConnection(context.Background(), store.Connection{ID: store.NewID("conn"), Workspace: f.ws.ID, User: u.ID, Client: client.ID,
		Scopes: scopes, Notes: notes, Rooms: rooms, CreatedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fixture) client(t *testing.T, id, name, kind string) store.Client {
	t.Helper()
	c := store.Client{ID: id, Name: name, Kind: kind, RedirectURIs: []string{"http://127.0.0.1/cb"}, CreatedAt: time.Now().UTC()}
	if err := f.st.CreateClient(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fixture) token(t *testing.T, u store.User, name string) (string, store.Token) {
	t.Helper()
	secret, tok, err := auth.CreateToken(context.Background(), f.st, auth.NewTokenSpec{Workspace: f.ws.ID, User: u.ID, Name: name, Scopes: []string{auth.ScopeRead}, Notes: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return secret, tok
}

// tick waits until the store's microsecond clock has moved, so that rows
// made before and after have distinct creation times.
func tick() {
	mark := time.Now().UnixMicro()
	for i := 0; i < 1_000_000 && time.Now().UnixMicro() <= mark; i++ {
	}
}

func TestUnauthenticatedIs401JSON(t *testing.T) {
	f := newFixture(t, openSQLite(t))
	stranger := browser{secret: "not-a-session"}
	for _, c := range []struct {
		b            *browser
		method, path string
	}{
		{nil, "GET", "/api/me"},
		{nil, "GET", "/api/connections"},
		{nil, "DELETE", "/api/connections/conn_x"},
		{&stranger, "GET", "/api/connections"},
	} {
		code, body, _ := f.call(t, c.b, c.method, c.path, "", nil)
		if code != http.StatusUnauthorized || body["error"] != "unauthenticated" || body["message"] != "Sign in at /signin" {
			t.Errorf("%s %s without a session: %d %v; want 401 unauthenticated, Sign in at /signin", c.method, c.path, code, body)
		}
	}
	// An expired session is no session.
	ctx := context.Background()
	old := browser{secret: store.NewID("secret")}
	now := time.Now().UTC()
	if err := f.st.CreateSession(ctx, store.Session{Hash: auth.HashToken(old.secret), Workspace: f.ws.ID, User: f.owner.user.ID, CSRF: "c", CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := f.call(t, &old, "GET", "/api/me", "", nil); code != http.StatusUnauthorized {
		t.Errorf("an expired session: %d, want 401", code)
	}
}

func TestMe(t *testing.T) {
	f := newFixture(t, openSQLite(t))
	code, body, h := f.call(t, &f.member, "GET", "/api/me", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /api/me: %d %v", code, body)
	}
	user, _ := body["user"].(map[string]any)
	ws, _ := body["workspace"].(map[string]any)
	if user["id"] != f.member.user.ID || user["email"] != f.member.user.Email || user["role"] != "member" ||
		ws["id"] != f.ws.ID || ws["name"] != "Atelier ✓" || body["csrf_token"] != f.member.csrf {
		t.Fatalf("GET /api/me = %v; want the member, the workspace and the session's CSRF token", body)
	}
	if h.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q: an answer carrying a CSRF token must not be cached", h.Get("Cache-Control"))
	}
}

type entry struct {
	ID         string  `json:"id"`
	Kind       string  `json:"kind"`
	Name       string  `json:"name"`
	ClientID   *string `json:"client_id"`
	ClientHost string  `json:"client_host"`
	User       struct{ ID, Email string }
	Scopes     []string   `json:"scopes"`
	Notes      []string   `json:"notes"`
	Rooms      []string   `json:"rooms"`
	Created    time.Time  `json:"created_at"`
	LastUsed   *time.Time `json:"last_used_at"`
	Revoked    *time.Time `json:"revoked_at"`
}

func (f *fixture) list(t *testing.T, b *browser) []entry {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+"/api/connections", nil)
	req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: b.secret})
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/connections: %d", res.StatusCode)
	}
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	var out []entry
	if err := json.Unmarshal(raw["connections"], &out); err != nil || out == nil {
		t.Fatalf("connections = %s (%v); want a JSON array", raw["connections"], err)
	}
	return out
}

func ids(es []entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func TestListConnections(t *testing.T) {
	f := newFixture(t, openSQLite(t))
	ctx := context.Background()
	claude := f.client(t, "https://claude.example.com/.well-known/client.json", "Claude", store.ClientMetadata)
	inspector := f.client(t, store.NewID("client"), "MCP Inspector", store.ClientDynamic)

	c1 := f.connect(t, f.owner.user, claude, []string{auth.ScopeRead, auth.ScopeWrite}, nil, []string{})
	tick()
	_, t1 := f.token(t, f.owner.user, "ci")
	tick()
	c2 := f.connect(t, f.member.user, inspector, []string{auth.ScopeRead}, []string{"note_a"}, nil)
	tick()
	_, t2 := f.token(t, f.member.user, "laptop")
	tick()
	c3 := f.connect(t, f.owner.user, inspector, []string{auth.ScopeRead}, nil, nil)
	if err := f.st.RevokeConnection(ctx, f.ws.ID, c3.ID); err != nil {
		t.Fatal(err)
	}
	used := time.Now().UTC().Truncate(time.Microsecond)
	if err := f.st.TouchConnection(ctx, c1.ID, used); err != nil {
		t.Fatal(err)
	}
	// Another workspace's rows are never listed.
	other := newFixture(t, f.st)
	other.connect(t, other.owner.user, inspector, []string{auth.ScopeRead}, nil, nil)
	other.token(t, other.owner.user, "theirs")

	all := f.list(t, &f.owner)
	if want := []string{c3.ID, t2.ID, c2.ID, t1.ID, c1.ID}; fmt.Sprint(ids(all)) != fmt.Sprint(want) {
		t.Fatalf("the owner sees %v, want every connection and token of the workspace, newest first: %v", ids(all), want)
	}
	byID := map[string]entry{}
	for _, e := range all {
		byID[e.ID] = e
	}
	e := byID[c1.ID]
	if e.Kind != "oauth" || e.Name != "Claude" || e.ClientID == nil || *e.ClientID != claude.ID || e.ClientHost != "claude.example.com" ||
		e.User.ID != f.owner.user.ID || e.User.Email != f.owner.user.Email || fmt.Sprint(e.Scopes) != "[osfoundry:read osfoundry:write]" ||
		e.Notes != nil || e.Rooms == nil || len(e.Rooms) != 0 || e.LastUsed == nil || !e.LastUsed.Equal(used) || e.Revoked != nil {
		t.Errorf("Claude's connection listed as %+v", e)
	}
	e = byID[c2.ID]
	if e.Kind != "oauth" || e.Name != "MCP Inspector" || e.ClientHost != "" || fmt.Sprint(e.Notes) != "[note_a]" || e.Rooms != nil || e.User.Email != f.member.user.Email {
		t.Errorf("the member's connection listed as %+v", e)
	}
	if e := byID[c3.ID]; e.Revoked == nil {
		t.Errorf("a revoked connection is not flagged: %+v", e)
	}
	e = byID[t1.ID]
	if e.Kind != "token" || e.Name != "ci" || e.ClientID != nil || fmt.Sprint(e.Scopes) != "[osfoundry:read]" || e.Notes == nil || len(e.Notes) != 0 || e.Rooms != nil || e.Revoked != nil {
		t.Errorf("the owner's token listed as %+v", e)
	}

	mine := f.list(t, &f.member)
	if want := []string{t2.ID, c2.ID}; fmt.Sprint(ids(mine)) != fmt.Sprint(want) {
		t.Fatalf("the member sees %v, want only their own: %v", ids(mine), want)
	}
}

func TestRevoke(t *testing.T) {
	f := newFixture(t, openSQLite(t))
	ctx := context.Background()
	cl := f.client(t, store.NewID("client"), "Client", store.ClientDynamic)
	ownConn := f.connect(t, f.owner.user, cl, []string{auth.ScopeRead}, nil, nil)
	memConn := f.connect(t, f.member.user, cl, []string{auth.ScopeRead}, nil, nil)
	req := store.NewID("req")
	now := time.Now().UTC()
	access := store.Grant{Kind: store.GrantAccess, Hash: store.NewID("h"), RequestID: req, Client: cl.ID, Connection: ownConn.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := f.st.PutGrant(ctx, access); err != nil {
		t.Fatal(err)
	}
	secret, ownTok := f.token(t, f.owner.user, "ci")
	_, memTok := f.token(t, f.member.user, "laptop")
	other := newFixture(t, f.st)
	_, theirTok := other.token(t, other.owner.user, "theirs")

	live := func(id string) bool {
		t.Helper()
		if c, err := f.st.Connection(ctx, id); err == nil {
			return c.RevokedAt == nil
		}
		for _, fx := range []*fixture{f, other} {
			toks, _ := f.st.Tokens(ctx, fx.ws.ID)
			for _, tk := range toks {
				if tk.ID == id {
					return tk.RevokedAt == nil
				}
			}
		}
		t.Fatalf("%s is neither a connection nor a token", id)
		return false
	}
	path := func(id string) string { return "/api/connections/" + url.PathEscape(id) }

	// Refused before anything is looked at: no CSRF header, a wrong one, a
	// cross-origin request even with the right one.
	if code, body, _ := f.call(t, &f.owner, "DELETE", path(ownConn.ID), "", nil); code != http.StatusForbidden || body["error"] != "csrf_missing" || body["field"] != auth.CSRFHeader {
		t.Errorf("DELETE without the CSRF header: %d %v; want 403 csrf_missing naming the header", code, body)
	}
	if code, body, _ := f.call(t, &f.owner, "DELETE", path(ownConn.ID), f.member.csrf, nil); code != http.StatusForbidden || body["error"] != "csrf_invalid" {
		t.Errorf("DELETE with another session's CSRF token: %d %v; want 403 csrf_invalid", code, body)
	}
	xo, _ := http.NewRequest("DELETE", f.srv.URL+path(ownConn.ID), nil)
	xo.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: f.owner.secret})
	xo.Header.Set(auth.CSRFHeader, f.owner.csrf)
	xo.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, err := http.DefaultClient.Do(xo); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site DELETE: %v %v; want 403", res.Status, err)
	} else {
		res.Body.Close()
	}
	if !live(ownConn.ID) {
		t.Fatal("a refused DELETE revoked the connection")
	}

	// A member cannot reach another's connection or token: not found.
	for _, id := range []string{ownConn.ID, ownTok.ID} {
		if code, body, _ := f.call(t, &f.member, "DELETE", path(id), f.member.csrf, nil); code != http.StatusNotFound || body["error"] != "not_found" || body["field"] != "id" {
			t.Errorf("a member revoking the owner's %s: %d %v; want 404", id, code, body)
		}
		if !live(id) {
			t.Fatalf("a member revoked the owner's %s", id)
		}
	}
	// Another workspace's token, an unknown ID: not found.
	for _, id := range []string{theirTok.ID, "conn_unknown", "tok_unknown"} {
		if code, body, _ := f.call(t, &f.owner, "DELETE", path(id), f.owner.csrf, nil); code != http.StatusNotFound || body["error"] != "not_found" {
			t.Errorf("revoking %s: %d %v; want 404", id, code, body)
		}
	}
	if !live(theirTok.ID) {
		t.Fatal("another workspace's token was revoked")
	}
	// Malformed IDs name the field.
	for _, id := range []string{"conn_\x00", "conn_\u202e", strings.Repeat("x", 300)} {
		if code, body, _ := f.call(t, &f.owner, "DELETE", path(id), f.owner.csrf, nil); code != http.StatusBadRequest || body["field"] != "id" {
			t.Errorf("revoking %q: %d %v; want 400 naming id", id, code, body)
		}
	}

	// The owner revokes a connection (and its grants) and a token.
	if code, body, _ := f.call(t, &f.owner, "DELETE", path(ownConn.ID), f.owner.csrf, nil); code != http.StatusNoContent || body != nil {
		t.Fatalf("revoking the owner's connection: %d %v; want 204", code, body)
	}
	if g, err := f.st.Grant(ctx, store.GrantAccess, access.Hash); err != nil || g.State != store.GrantRevoked {
		t.Fatalf("the connection's access token after the revocation: %+v, %v; want revoked", g, err)
	}
	if _, err := auth.Verify(ctx, f.st, secret); err != nil {
		t.Fatalf("the token before its revocation: %v", err)
	}
	if code, _, _ := f.call(t, &f.owner, "DELETE", path(ownTok.ID), f.owner.csrf, nil); code != http.StatusNoContent {
		t.Fatalf("revoking the owner's token: %d; want 204", code)
	}
	if _, err := auth.Verify(ctx, f.st, secret); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("the revoked token on the revoking node: %v; want ErrInvalidToken at once", err)
	}
	// The owner revokes the member's; the member their own.
	if code, _, _ := f.call(t, &f.owner, "DELETE", path(memConn.ID), f.owner.csrf, nil); code != http.StatusNoContent {
		t.Fatalf("the owner revoking the member's connection: %d; want 204", code)
	}
	if code, _, _ := f.call(t, &f.member, "DELETE", path(memTok.ID), f.member.csrf, nil); code != http.StatusNoContent {
		t.Fatalf("the member revoking their own token: %d; want 204", code)
	}
	for _, id := range []string{ownConn.ID, ownTok.ID, memConn.ID, memTok.ID} {
		if live(id) {
			t.Fatalf("%s is live after its revocation", id)
		}
		// Again: a conflict that says when.
		if code, body, _ := f.call(t, &f.owner, "DELETE", path(id), f.owner.csrf, nil); code != http.StatusConflict || body["revoked_at"] == nil {
			t.Errorf("revoking %s again: %d %v; want 409 with revoked_at", id, code, body)
		}
	}
	// The listing flags them.
	for _, e := range f.list(t, &f.owner) {
		if e.Revoked == nil {
			t.Errorf("%s is not flagged revoked in the listing", e.ID)
		}
	}
}

func TestHostileRequests(t *testing.T) {
	f := newFixture(t, openSQLite(t))
	for _, c := range []struct {
		method, path string
		want         int
		code         string
	}{
		{"GET", "/api/", 404, "not_found"},
		{"GET", "/api/nope", 404, "not_found"},
		{"GET", "/api/connections/", 404, "not_found"},
		{"GET", "/api/connections/a/b", 404, "not_found"},
		{"POST", "/api/connections", 405, "method_not_allowed"},
		{"PUT", "/api/me", 405, "method_not_allowed"},
		{"GET", "/api/connections/conn_x", 405, "method_not_allowed"},
	} {
		code, body, h := f.call(t, &f.owner, c.method, c.path, f.owner.csrf, nil)
		if code != c.want || body["error"] != c.code || body["message"] == "" {
			t.Errorf("%s %s: %d %v; want %d %s with a message", c.method, c.path, code, body, c.want, c.code)
		}
		if code == 405 && h.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", c.method, c.path)
		}
	}
	// A huge body is cut off, not read whole.
	body := strings.NewReader(strings.Repeat("x", 10<<20))
	if code, resp, _ := f.call(t, &f.owner, "DELETE", "/api/connections/tok_x", f.owner.csrf, body); code != http.StatusRequestEntityTooLarge || resp["error"] != "limit_exceeded" {
		t.Errorf("DELETE with a 10 MiB body: %d %v; want 413", code, resp)
	}
}

// panicky is a store whose listing panics.
type panicky struct{ store.Store }

func (panicky) Connections(context.Context, string) ([]store.Connection, error) { panic("boom") }

func TestAPanicIsA500(t *testing.T) {
	st := openSQLite(t)
	f := newFixture(t, st)
	srv := httptest.NewServer(api.New(service.New(panicky{st}), people{st}, api.Options{}))
	defer srv.Close()
	f.srv = srv
	code, body, _ := f.call(t, &f.owner, "GET", "/api/connections", "", nil)
	if code != http.StatusInternalServerError || body["error"] != "internal_error" {
		t.Fatalf("a panicking handler: %d %v; want 500 internal_error", code, body)
	}
	if code, _, _ := f.call(t, &f.owner, "GET", "/api/me", "", nil); code != http.StatusOK {
		t.Fatalf("after the panic: %d; the server must keep answering", code)
	}
}
