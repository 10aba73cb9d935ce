package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"foundry/internal/auth"
	"foundry/internal/oauth"
	"foundry/internal/store"
	"foundry/internal/store/storetest"
)

// TestFullFlow: a client walks the whole flow with golang.org/x/oauth2:
// authorization with PKCE and consent, code for tokens, a verified access
// token, a refresh that omits resource and keeps the audience, and a
// revocation after which the access token no longer verifies.
func TestFullFlow(t *testing.T) {
	bothStores(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st, nil)
		ctx := context.Background()
		cfg := &oauth2.Config{
			ClientID:    e.client.ID,
			Endpoint:    oauth2.Endpoint{AuthURL: e.url + "/authorize", TokenURL: e.url + "/token", AuthStyle: oauth2.AuthStyleInParams},
			RedirectURL: e.client.RedirectURIs[0],
			Scopes:      []string{auth.ScopeRead, auth.ScopeWrite},
		}
		verifier := oauth2.GenerateVerifier()
		au, err := url.Parse(cfg.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", e.resource)))
		if err != nil {
			t.Fatal(err)
		}
		loc := e.submit(e.consent(au.Query()), "approve")
		q := loc.Query()
		if loc.Host != "127.0.0.1" || loc.Path != "/callback" || q.Get("iss") != e.url || q.Get("state") != "state-0123456789" || !strings.HasPrefix(q.Get("code"), oauth.CodePrefix) {
			t.Fatalf("redirect %s", loc)
		}
		tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", e.resource))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tok.AccessToken, oauth.AccessTokenPrefix) || !strings.HasPrefix(tok.RefreshToken, oauth.RefreshTokenPrefix) || tok.Expiry.IsZero() {
			t.Fatalf("tokens %+v", tok)
		}
		p, err := e.verify(tok.AccessToken)
		if err != nil {
			t.Fatal(err)
		}
		conns, err := st.Connections(ctx, e.ws)
		if err != nil || len(conns) != 1 {
			t.Fatalf("connections %+v %v", conns, err)
		}
		c := conns[0]
		if p.Workspace != e.ws || p.User != e.user.ID || p.TokenID != c.ID || !p.Has(auth.ScopeRead) || !p.Has(auth.ScopeWrite) || p.Notes != nil || p.Rooms != nil {
			t.Fatalf("principal %+v, connection %+v", p, c)
		}
		if c.Client != e.client.ID || c.User != e.user.ID {
			t.Fatalf("connection %+v", c)
		}
		if c, _ := st.Connection(ctx, c.ID); c.LastUsed == nil {
			t.Fatal("a verified call did not record the connection's last use")
		}
		// Stored as hashes only: the access token's signature is found under
		// its hash, and no token appears in any stored grant.
		sig := tok.AccessToken[strings.LastIndex(tok.AccessToken, ".")+1:]
		g, err := st.Grant(ctx, store.GrantAccess, auth.HashToken(sig))
		if err != nil {
			t.Fatalf("access grant by hash: %v", err)
		}
		for _, secret := range []string{tok.AccessToken, tok.RefreshToken, sig, q.Get("code")} {
			if strings.Contains(string(g.Data), secret) || g.Hash == secret {
				t.Fatalf("grant stores a secret: %s", g.Data)
			}
		}

		// Refresh through x/oauth2 (no resource parameter).
		tok.Expiry = time.Now().Add(-time.Minute)
		tok2, err := cfg.TokenSource(ctx, tok).Token()
		if err != nil {
			t.Fatal(err)
		}
		if tok2.AccessToken == tok.AccessToken || tok2.RefreshToken == tok.RefreshToken {
			t.Fatal("refresh did not rotate")
		}
		if p2, err := e.verify(tok2.AccessToken); err != nil || p2.TokenID != c.ID || !p2.Has(auth.ScopeWrite) {
			t.Fatalf("refreshed access token (audience kept?): %+v %v", p2, err)
		}
		if _, err := e.verify(tok.AccessToken); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("the access token of a rotated refresh token still verifies: %v", err)
		}

		// Revoke (RFC 7009) the refresh token: the family goes.
		resp := e.postForm("/revoke", url.Values{"token": {tok2.RefreshToken}, "client_id": {e.client.ID}}, false)
		if body := readBody(t, resp); resp.StatusCode != http.StatusOK {
			t.Fatalf("revoke: %d %s", resp.StatusCode, body)
		}
		if _, err := e.verify(tok2.AccessToken); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("after revocation: %v", err)
		}
		if tr := e.refresh(tok2.RefreshToken, nil); tr.Status != http.StatusBadRequest || tr.Error != "invalid_grant" {
			t.Fatalf("refresh after revocation: %+v", tr)
		}
	})
}

func TestRevokeAccessTokenAndConnection(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	v, c := pkcePair()
	tr := e.mustTokens(e.exchange(e.code(c), v))
	resp := e.postForm("/revoke", url.Values{"token": {tr.AccessToken}, "token_type_hint": {"access_token"}, "client_id": {e.client.ID}}, false)
	if body := readBody(t, resp); resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("revoke: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	if _, err := e.verify(tr.AccessToken); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("revoked access token: %v", err)
	}
	// Revoking the connection (what the person does from the connections
	// list) ends a fresh authorization's tokens too.
	tr = e.mustTokens(e.exchange(e.code(c2(t, e, &v)), v))
	p, err := e.verify(tr.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.RevokeConnection(context.Background(), e.ws, p.TokenID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.verify(tr.AccessToken); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("token of a revoked connection: %v", err)
	}
	if r := e.refresh(tr.RefreshToken, nil); r.Error != "invalid_grant" {
		t.Fatalf("refresh of a revoked connection: %+v", r)
	}
}

// c2 makes a fresh PKCE pair, storing the verifier in *v.
func c2(t *testing.T, e *env, v *string) string {
	var c string
	*v, c = pkcePair()
	return c
}

func TestPersonalAccessTokensStillVerify(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	secret, tok, err := auth.CreateToken(context.Background(), e.st, auth.NewTokenSpec{Workspace: e.ws, User: e.user.ID, Name: "ci", Scopes: []string{auth.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.verify(secret)
	if err != nil || p.TokenID != tok.ID || p.Has(auth.ScopeWrite) {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{"", "fdyat_", "fdyat_a.b", oauth.RefreshTokenPrefix + "x.y", "Bearer x", strings.Repeat("fdyat_", 200)} {
		if _, err := e.verify(bad); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("Verify(%.20q) = %v", bad, err)
		}
	}
}

func TestWrongPKCEVerifier(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	_, c := pkcePair()
	other, _ := pkcePair()
	tr := e.exchange(e.code(c), other)
	if tr.Status != http.StatusBadRequest || tr.Error != "invalid_grant" || tr.AccessToken != "" {
		t.Fatalf("wrong verifier: %+v", tr)
	}
}

func TestReusedCodeRevokesItsTokens(t *testing.T) {
	bothStores(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st, nil)
		v, c := pkcePair()
		code := e.code(c)
		first := e.mustTokens(e.exchange(code, v))
		if _, err := e.verify(first.AccessToken); err != nil {
			t.Fatal(err)
		}
		again := e.exchange(code, v)
		if again.Status != http.StatusBadRequest || again.Error != "invalid_grant" || again.AccessToken != "" {
			t.Fatalf("reused code: %+v", again)
		}
		if _, err := e.verify(first.AccessToken); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("access token of a reused code still verifies: %v", err)
		}
		if r := e.refresh(first.RefreshToken, nil); r.Error != "invalid_grant" {
			t.Fatalf("refresh token of a reused code: %+v", r)
		}
	})
}

// TestConcurrentCodeExchange: of exchanges racing with one code, exactly
// one gets tokens; every other is refused as invalid_grant, never a 500.
func TestConcurrentCodeExchange(t *testing.T) {
	bothStores(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st, nil)
		v, c := pkcePair()
		code := e.code(c)
		const n = 6
		results := make([]tokenResp, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); results[i] = e.exchange(code, v) }()
		}
		wg.Wait()
		won := 0
		for _, r := range results {
			switch {
			case r.Status == http.StatusOK && r.AccessToken != "":
				won++
			case r.Status == http.StatusBadRequest && r.Error == "invalid_grant":
			default:
				t.Fatalf("a racing exchange answered %+v, want 200 or 400 invalid_grant", r)
			}
		}
		if won != 1 {
			t.Fatalf("%d exchanges of one code got tokens, want 1", won)
		}
	})
}

// TestUnregisteredRedirectURI: an error page, never a redirect.
func TestUnregisteredRedirectURI(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	_, c := pkcePair()
	for _, uri := range []string{"https://evil.example.com/callback", "http://127.0.0.1/other", "http://localhost:8080/callback", "http://127.0.0.1.example.com/callback"} {
		p := e.authParams(c)
		p.Set("redirect_uri", uri)
		for _, signed := range []bool{false, true} {
			resp := e.get("/authorize?"+p.Encode(), signed)
			body := readBody(t, resp)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(body, "invalid_request") {
				t.Fatalf("%s: %d %v %s", uri, resp.StatusCode, resp.Header, body)
			}
		}
	}
	p := e.authParams(c)
	p.Set("client_id", "no-such-client")
	resp := e.get("/authorize?"+p.Encode(), true)
	if body := readBody(t, resp); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Location") != "" || !strings.Contains(body, "client_id is not registered") {
		t.Fatalf("unknown client: %d %s", resp.StatusCode, body)
	}
}

// authorizeRefusal asks for authorization with params and expects an
// error redirected to the client, with iss.
func authorizeRefusal(t *testing.T, e *env, p url.Values, want string) url.Values {
	t.Helper()
	resp := e.get("/authorize?"+p.Encode(), true)
	readBody(t, resp)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || err != nil || loc.Host != "127.0.0.1" {
		t.Fatalf("want a redirect to the client, got %d %v", resp.StatusCode, resp.Header)
	}
	q := loc.Query()
	if q.Get("error") != want || q.Get("iss") != e.url || q.Get("state") != p.Get("state") || q.Get("code") != "" {
		t.Fatalf("refusal %s: want error=%s with iss and state", loc, want)
	}
	return q
}

func TestPlainPKCERefused(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	v, _ := pkcePair()
	p := e.authParams(v)
	p.Set("code_challenge_method", "plain")
	q := authorizeRefusal(t, e, p, "invalid_request")
	if !strings.Contains(q.Get("error_description"), "S256") {
		t.Fatalf("description %q does not say S256", q.Get("error_description"))
	}
	p.Del("code_challenge_method")
	authorizeRefusal(t, e, p, "invalid_request")
}

func TestNoPKCERefused(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	p := e.authParams("")
	p.Del("code_challenge")
	q := authorizeRefusal(t, e, p, "invalid_request")
	if !strings.Contains(q.Get("error_description"), "code_challenge") {
		t.Fatalf("description %q does not name code_challenge", q.Get("error_description"))
	}
}

func TestWrongResourceAtAuthorize(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	_, c := pkcePair()
	for _, res := range []string{"https://other.example.com/mcp", e.url + "/api", "not a url"} {
		p := e.authParams(c)
		p.Set("resource", res)
		authorizeRefusal(t, e, p, "invalid_target")
	}
	p := e.authParams(c)
	p.Del("resource")
	authorizeRefusal(t, e, p, "invalid_target")
	// A trailing slash is the same resource.
	p = e.authParams(c)
	p.Set("resource", e.resource+"/")
	if f := e.consent(p); f.values.Get("resource") != e.resource+"/" {
		t.Fatalf("the consent form lost the resource: %v", f.values)
	}
}

func TestWrongResourceAtToken(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	v, c := pkcePair()
	code := e.code(c)
	tr := e.token(url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {v},
		"client_id": {e.client.ID}, "redirect_uri": {e.client.RedirectURIs[0]}, "resource": {"https://other.example.com/mcp"},
	})
	if tr.Status != http.StatusBadRequest || tr.Error != "invalid_target" || tr.AccessToken != "" {
		t.Fatalf("wrong resource at token: %+v", tr)
	}
	good := e.mustTokens(e.exchange(code, v))
	if r := e.refresh(good.RefreshToken, url.Values{"resource": {"https://other.example.com/mcp"}}); r.Error != "invalid_target" {
		t.Fatalf("refresh with another resource: %+v", r)
	}
	// The refused refresh consumed nothing; one naming the right
	// resource, or none, works.
	r := e.mustTokens(e.refresh(good.RefreshToken, url.Values{"resource": {e.resource}}))
	if _, err := e.verify(r.AccessToken); err != nil {
		t.Fatal(err)
	}
}

// TestAudienceIsTheResource: a server whose MCP URL is another one does not
// take this server's tokens.
func TestAudienceIsTheResource(t *testing.T) {
	st := openSQLite(t)
	e := newEnv(t, st, nil)
	v, c := pkcePair()
	tr := e.mustTokens(e.exchange(e.code(c), v))
	other, err := oauth.New(st, oauth.Options{Issuer: e.url, Resource: e.url + "/other-mcp", People: e.people})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Verify(context.Background(), tr.AccessToken); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("token for %s accepted by a server for /other-mcp: %v", e.resource, err)
	}
	if _, err := e.verify(tr.AccessToken); err != nil {
		t.Fatal(err)
	}
}

func TestExpiredAccessToken(t *testing.T) {
	e := newEnv(t, openSQLite(t), func(o *oauth.Options) { o.AccessTokenLifespan = 10 * time.Minute })
	v, c := pkcePair()
	tr := e.mustTokens(e.exchange(e.code(c), v))
	if _, err := e.verify(tr.AccessToken); err != nil {
		t.Fatal(err)
	}
	e.offset.Store(int64(11 * time.Minute))
	if _, err := e.verify(tr.AccessToken); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("expired access token: %v", err)
	}
}

func TestConsentWithoutCSRF(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	_, c := pkcePair()
	f := e.consent(e.authParams(c))
	for _, token := range []string{"", "wrong"} {
		v := url.Values{}
		for k, vals := range f.values {
			v[k] = vals
		}
		v.Set("consent_decision", "approve")
		if token == "" {
			v.Del(auth.CSRFField)
		} else {
			v.Set(auth.CSRFField, token)
		}
		resp := e.postForm(f.action, v, true)
		body := readBody(t, resp)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
			t.Fatalf("consent with CSRF %q: %d %s", token, resp.StatusCode, body)
		}
	}
	if conns, err := e.st.Connections(context.Background(), e.ws); err != nil || len(conns) != 0 {
		t.Fatalf("a refused consent made connections: %+v %v", conns, err)
	}
}

func TestSignInFirst(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	_, c := pkcePair()
	p := e.authParams(c)
	resp := e.get("/authorize?"+p.Encode(), false)
	readBody(t, resp)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/signin?") {
		t.Fatalf("not signed in: %d %q", resp.StatusCode, loc)
	}
	u, _ := url.Parse(loc)
	back, err := url.Parse(u.Query().Get("return_to"))
	if err != nil || back.Path != "/authorize" || back.Query().Get("code_challenge") != c || back.Query().Get("state") != p.Get("state") {
		t.Fatalf("return_to %q", u.Query().Get("return_to"))
	}
}

func TestDenyRedirectsWithIss(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	_, c := pkcePair()
	loc := e.submit(e.consent(e.authParams(c)), "deny")
	q := loc.Query()
	if q.Get("error") != "access_denied" || q.Get("iss") != e.url || q.Get("state") != "state-0123456789" || q.Get("code") != "" {
		t.Fatalf("deny: %s", loc)
	}
	if conns, _ := e.st.Connections(context.Background(), e.ws); len(conns) != 0 {
		t.Fatalf("deny made a connection: %+v", conns)
	}
}

// TestGrantChosenNotesAndRooms: a Note outside the grant is not in the
// principal's grant, and a Note of another workspace cannot be granted.
func TestGrantChosenNotesAndRooms(t *testing.T) {
	st := openSQLite(t)
	e := newEnv(t, st, nil)
	ctx := context.Background()
	noteA, noteB := approvedNote(t, st, e.ws, "Alpha"), approvedNote(t, st, e.ws, "Beta")
	foreign := approvedNote(t, st, storetest.Seed(t, st), "Foreign")
	v, c := pkcePair()
	f := e.consent(e.authParams(c))
	if !strings.Contains(f.page, "Alpha") || !strings.Contains(f.page, "Beta") || strings.Contains(f.page, "Foreign") {
		t.Fatalf("consent lists the wrong Notes:\n%s", f.page)
	}
	f.values.Set("consent_notes_mode", "list")
	f.values.Set("consent_notes", foreign)
	f.values.Set("consent_decision", "approve")
	resp := e.postForm(f.action, f.values, true)
	if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, foreign) {
		t.Fatalf("granting a foreign Note: %d %s", resp.StatusCode, body)
	}
	if conns, _ := st.Connections(ctx, e.ws); len(conns) != 0 {
		t.Fatalf("refused grant made a connection: %+v", conns)
	}
	f.values.Set("consent_notes", noteA)
	f.values.Set("consent_rooms_mode", "list")
	f.values.Del("consent_rooms")
	loc := e.submit(f, "approve")
	tr := e.mustTokens(e.exchange(loc.Query().Get("code"), v))
	p, err := e.verify(tr.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if !p.CanNote(noteA) || p.CanNote(noteB) || p.CanNote(foreign) || p.Rooms == nil || len(p.Rooms) != 0 || p.CanRoom("room_any") {
		t.Fatalf("principal grant notes %v rooms %v", p.Notes, p.Rooms)
	}
	// The next consent is prefilled with this grant.
	f = e.consent(e.authParams(c))
	if f.values.Get("consent_notes_mode") != "list" || !slices.Equal(f.values["consent_notes"], []string{noteA}) || f.values.Get("consent_rooms_mode") != "list" {
		t.Fatalf("consent not prefilled with the live grant: %v", f.values)
	}
}

func approvedNote(t *testing.T, st store.Store, ws, title string) string {
	t.Helper()
	id := store.NewID("note")
	approved := true
	_, err := st.Guarded(context.Background(), store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Actor: "test",
		Create: &store.Resource{Owner: "o", Title: title, Doc: json.RawMessage(`{}`)},
		Apply: func(*store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "created", Approved: &approved, Result: json.RawMessage(`{}`)}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestStepUpAskingOnlyTheMissingScope: a client granted read that asks
// only for write is offered both, read still ticked, so approving gives a
// token with both instead of trading read for write.
func TestStepUpAskingOnlyTheMissingScope(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	v, c := pkcePair()
	f := e.consent(e.authParams(c))
	f.values["consent_scope"] = []string{auth.ScopeRead}
	e.mustTokens(e.exchange(e.submit(f, "approve").Query().Get("code"), v))
	v2, c2 := pkcePair()
	p := e.authParams(c2)
	p.Set("scope", auth.ScopeWrite)
	f = e.consent(p)
	if got := f.values["consent_scope"]; !slices.Contains(got, auth.ScopeRead) || !slices.Contains(got, auth.ScopeWrite) {
		t.Fatalf("step-up consent ticks %v, want read (already granted) and write (asked)", got)
	}
	tr := e.mustTokens(e.exchange(e.submit(f, "approve").Query().Get("code"), v2))
	pr, err := e.verify(tr.AccessToken)
	if err != nil || !pr.Has(auth.ScopeRead) || !pr.Has(auth.ScopeWrite) {
		t.Fatalf("after a write-only step-up: %+v %v, want read and write", pr, err)
	}
}

// TestReadOnlyGrantAndStepUp: unticking write gives a principal without
// write; asking again shows consent with write marked new, and only that
// consent adds it.
func TestReadOnlyGrantAndStepUp(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	v, c := pkcePair()
	f := e.consent(e.authParams(c))
	f.values["consent_scope"] = []string{auth.ScopeRead}
	tr := e.mustTokens(e.exchange(e.submit(f, "approve").Query().Get("code"), v))
	p, err := e.verify(tr.AccessToken)
	if err != nil || !p.Has(auth.ScopeRead) || p.Has(auth.ScopeWrite) {
		t.Fatalf("read-only grant: %+v %v", p, err)
	}
	if tr.Scope != auth.ScopeRead {
		t.Fatalf("token scope %q", tr.Scope)
	}
	f = e.consent(e.authParams(c))
	if !strings.Contains(f.page, `class="new"`) {
		t.Fatalf("step-up consent does not mark write as new:\n%s", f.page)
	}
	v2, c2 := pkcePair()
	f = e.consent(e.authParams(c2))
	tr2 := e.mustTokens(e.exchange(e.submit(f, "approve").Query().Get("code"), v2))
	p2, err := e.verify(tr2.AccessToken)
	if err != nil || !p2.Has(auth.ScopeWrite) || p2.TokenID != p.TokenID {
		t.Fatalf("after step-up: %+v %v (first %s)", p2, err, p.TokenID)
	}
	// The first token keeps what it was granted.
	if p, err := e.verify(tr.AccessToken); err != nil || p.Has(auth.ScopeWrite) {
		t.Fatalf("old token after step-up: %+v %v", p, err)
	}
	// Consent with no scope ticked is refused, not granted empty.
	_, c3 := pkcePair()
	f = e.consent(e.authParams(c3))
	delete(f.values, "consent_scope")
	f.values.Set("consent_decision", "approve")
	resp := e.postForm(f.action, f.values, true)
	if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "scopes") {
		t.Fatalf("no scope: %d %s", resp.StatusCode, body)
	}
}

func TestRefreshWithoutResourceKeepsAudience(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	v, c := pkcePair()
	tr := e.mustTokens(e.exchange(e.code(c), v))
	for i := 0; i < 3; i++ {
		tr = e.mustTokens(e.refresh(tr.RefreshToken, nil))
		p, err := e.verify(tr.AccessToken)
		if err != nil || p.Workspace != e.ws {
			t.Fatalf("refresh %d: %+v %v", i, p, err)
		}
	}
}

// TestConcurrentRefresh: two refreshes of one token at once both succeed,
// and both new refresh tokens work.
func TestConcurrentRefresh(t *testing.T) {
	bothStores(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st, nil)
		// A few rounds, so both interleavings (both read the token before
		// either rotates it, or one after the other's rotation) are likely.
		for round := 0; round < 4; round++ {
			concurrentRefresh(t, e)
		}
	})
}

func concurrentRefresh(t *testing.T, e *env) {
	t.Helper()
	v, c := pkcePair()
	tr := e.mustTokens(e.exchange(e.code(c), v))
	var wg sync.WaitGroup
	out := make([]tokenResp, 2)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.PostForm(e.url+"/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tr.RefreshToken}, "client_id": {e.client.ID}})
			if err != nil {
				out[i].Error = err.Error()
				return
			}
			defer resp.Body.Close()
			out[i].Status = resp.StatusCode
			json.NewDecoder(resp.Body).Decode(&out[i])
		}()
	}
	wg.Wait()
	for i, r := range out {
		if r.Status != http.StatusOK || r.RefreshToken == "" {
			t.Fatalf("concurrent refresh %d: %+v", i, r)
		}
	}
	if out[0].RefreshToken == out[1].RefreshToken {
		t.Fatal("both refreshes answered the same refresh token")
	}
	for i, r := range out {
		if _, err := e.verify(r.AccessToken); err != nil {
			t.Fatalf("access token %d: %v", i, err)
		}
		n := e.mustTokens(e.refresh(r.RefreshToken, nil))
		if _, err := e.verify(n.AccessToken); err != nil {
			t.Fatalf("refreshed again %d: %v", i, err)
		}
	}
}

// TestRefreshAfterGrace: a rotated refresh token used after the grace
// period is reuse: invalid_grant, and every token of the authorization is
// revoked.
func TestRefreshAfterGrace(t *testing.T) {
	bothStores(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st, nil)
		v, c := pkcePair()
		first := e.mustTokens(e.exchange(e.code(c), v))
		second := e.mustTokens(e.refresh(first.RefreshToken, nil))
		// Within the grace the old token still works.
		third := e.mustTokens(e.refresh(first.RefreshToken, nil))
		e.offset.Store(int64(time.Minute))
		if r := e.refresh(first.RefreshToken, nil); r.Status != http.StatusBadRequest || r.Error != "invalid_grant" {
			t.Fatalf("reuse after grace: %+v", r)
		}
		for _, tr := range []tokenResp{second, third} {
			if _, err := e.verify(tr.AccessToken); !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("after reuse an access token of the family verifies: %v", err)
			}
			if r := e.refresh(tr.RefreshToken, nil); r.Error != "invalid_grant" {
				t.Fatalf("after reuse a refresh token of the family works: %+v", r)
			}
		}
	})
}

// TestLoopbackAnyPort: registered loopback redirects match on any port,
// for 127.0.0.1, [::1] and localhost; the path must still match.
func TestLoopbackAnyPort(t *testing.T) {
	st := openSQLite(t)
	e := newEnv(t, st, nil)
	cl := store.Client{ID: "cli_loop", Name: "Loop", Kind: store.ClientDynamic, CreatedAt: time.Now(),
		RedirectURIs: []string{"http://127.0.0.1/cb", "http://localhost/cb", "http://[::1]/cb", "https://app.example.com/cb"}}
	if err := st.CreateClient(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	e.client = cl
	v, c := pkcePair()
	for _, uri := range []string{"http://127.0.0.1:53111/cb", "http://localhost:40000/cb", "http://[::1]:9999/cb", "http://localhost/cb"} {
		p := e.authParams(c)
		p.Set("redirect_uri", uri)
		loc := e.submit(e.consent(p), "approve")
		if got := loc.Scheme + "://" + loc.Host + loc.Path; got != uri {
			t.Fatalf("redirected to %s, want %s", got, uri)
		}
		tr := e.token(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "code_verifier": {v},
			"client_id": {cl.ID}, "redirect_uri": {uri}})
		if tr.Status != http.StatusOK {
			t.Fatalf("%s: %+v", uri, tr)
		}
	}
	for _, uri := range []string{"http://localhost:40000/other", "https://app.example.com:8443/cb", "http://localhost.example.com:40000/cb", "https://localhost:40000/cb"} {
		p := e.authParams(c)
		p.Set("redirect_uri", uri)
		resp := e.get("/authorize?"+p.Encode(), true)
		if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Fatalf("%s accepted: %d %s", uri, resp.StatusCode, body)
		}
	}
}

// TestMetadataClientHostWarning: a client whose ID is an https URL and
// whose redirect is on another host is flagged on the consent page.
func TestMetadataClientHostWarning(t *testing.T) {
	st := openSQLite(t)
	e := newEnv(t, st, nil)
	for _, tc := range []struct {
		redirect string
		warn     bool
	}{{"https://client.example.com/cb", false}, {"https://elsewhere.example.com/cb", true}} {
		cl := store.Client{ID: "https://client.example.com/meta-" + store.NewID("x") + ".json", Name: "Doc Client", Kind: store.ClientMetadata,
			RedirectURIs: []string{tc.redirect}, CreatedAt: time.Now()}
		if err := st.CreateClient(context.Background(), cl); err != nil {
			t.Fatal(err)
		}
		e.client = cl
		_, c := pkcePair()
		f := e.consent(e.authParams(c))
		if got := strings.Contains(f.page, `class="warn"`); got != tc.warn || !strings.Contains(f.page, "Doc Client") {
			t.Fatalf("redirect %s: warning %v, want %v\n%s", tc.redirect, got, tc.warn, f.page)
		}
	}
}

func TestConfidentialClient(t *testing.T) {
	st := openSQLite(t)
	e := newEnv(t, st, nil)
	cl := store.Client{ID: "cli_conf", SecretHash: auth.HashToken("s3cret"), Name: "Conf", Kind: store.ClientRegistered,
		RedirectURIs: []string{"https://app.example.com/cb"}, CreatedAt: time.Now()}
	if err := st.CreateClient(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	e.client = cl
	v, c := pkcePair()
	code := func() string {
		loc := e.submit(e.consent(e.authParams(c)), "approve")
		return loc.Query().Get("code")
	}
	form := func(code string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {v}, "redirect_uri": {cl.RedirectURIs[0]}}
	}
	f := form(code())
	f.Set("client_id", cl.ID)
	if tr := e.token(f); tr.Error != "invalid_client" {
		t.Fatalf("no secret: %+v", tr)
	}
	f = form(code())
	f.Set("client_id", cl.ID)
	f.Set("client_secret", "wrong")
	if tr := e.token(f); tr.Error != "invalid_client" {
		t.Fatalf("wrong secret: %+v", tr)
	}
	f.Set("client_secret", "s3cret")
	f.Set("code", code())
	e.mustTokens(e.token(f))
	// client_secret_basic
	req, _ := http.NewRequest(http.MethodPost, e.url+"/token", strings.NewReader(form(code()).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(cl.ID, "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("basic auth: %d %s", resp.StatusCode, body)
	}
}

func TestMetadata(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/mcp"} {
		resp := e.get(path, false)
		body := readBody(t, resp)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, resp.Header)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"issuer": e.url, "authorization_endpoint": e.url + "/authorize", "token_endpoint": e.url + "/token",
			"revocation_endpoint": e.url + "/revoke", "registration_endpoint": e.url + "/register",
			"scopes_supported": []any{auth.ScopeRead, auth.ScopeWrite}, "response_types_supported": []any{"code"},
			"response_modes_supported": []any{"query"}, "grant_types_supported": []any{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported":          []any{"none", "client_secret_basic", "client_secret_post"},
			"revocation_endpoint_auth_methods_supported":     []any{"none", "client_secret_basic", "client_secret_post"},
			"code_challenge_methods_supported":               []any{"S256"},
			"authorization_response_iss_parameter_supported": true, "client_id_metadata_document_supported": true,
		}
		for k, w := range want {
			g, _ := json.Marshal(m[k])
			wj, _ := json.Marshal(w)
			if string(g) != string(wj) {
				t.Errorf("%s %s = %s, want %s", path, k, g, wj)
			}
		}
	}
	for _, path := range []string{"/token", "/revoke", "/.well-known/oauth-authorization-server"} {
		req, _ := http.NewRequest(http.MethodOptions, e.url+path, nil)
		req.Header.Set("Origin", "http://localhost:6274")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
			t.Fatalf("preflight %s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
}

// TestHostileInput: oversized and malformed requests are refused with an
// answer, never a crash or a redirect.
func TestHostileInput(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	big := url.Values{"grant_type": {"authorization_code"}, "code": {strings.Repeat("a", 100<<10)}}
	if tr := e.token(big); tr.Status != http.StatusBadRequest || tr.Error != "invalid_request" {
		t.Fatalf("huge token body: %+v", tr)
	}
	if tr := e.token(url.Values{"grant_type": {"password"}, "client_id": {e.client.ID}}); tr.Status < 400 || tr.AccessToken != "" {
		t.Fatalf("password grant: %+v", tr)
	}
	if tr := e.token(url.Values{"grant_type": {"authorization_code"}, "code": {"fdyac_\u00e9\u0000.x"}, "client_id": {e.client.ID}, "code_verifier": {"x"}}); tr.Status != http.StatusBadRequest {
		t.Fatalf("garbage code: %+v", tr)
	}
	resp := e.postForm("/authorize", url.Values{"x": {strings.Repeat("b", 100<<10)}}, true)
	if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Fatalf("huge authorize body: %d %s", resp.StatusCode, body)
	}
	resp = e.get("/authorize?client_id=%zz", true)
	if body := readBody(t, resp); resp.StatusCode < 400 || resp.Header.Get("Location") != "" {
		t.Fatalf("malformed query: %d %s", resp.StatusCode, body)
	}
	_, c := pkcePair()
	p := e.authParams(c)
	p.Set("response_mode", "fragment")
	resp = e.get("/authorize?"+p.Encode(), true)
	readBody(t, resp)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	frag, _ := url.ParseQuery(loc.Fragment)
	if resp.StatusCode != http.StatusSeeOther || frag.Get("error") != "unsupported_response_mode" || frag.Get("iss") != e.url || loc.Query().Get("iss") != "" {
		t.Fatalf("fragment response mode: %d %s", resp.StatusCode, loc)
	}
	p = e.authParams(c)
	p.Set("scope", "admin")
	authorizeRefusal(t, e, p, "invalid_scope")
}

// TestLastUseRecordedAtMostOnceAMinute: verifying records the connection's
// last use, but not again within a minute.
func TestLastUseRecordedAtMostOnceAMinute(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	ctx := context.Background()
	v, c := pkcePair()
	tr := e.mustTokens(e.exchange(e.code(c), v))
	p, err := e.verify(tr.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := e.st.Connection(ctx, p.TokenID)
	if first.LastUsed == nil {
		t.Fatal("no last use recorded")
	}
	e.offset.Store(int64(30 * time.Second))
	e.verify(tr.AccessToken)
	if again, _ := e.st.Connection(ctx, p.TokenID); !again.LastUsed.Equal(*first.LastUsed) {
		t.Fatalf("last use rewritten within a minute: %v then %v", first.LastUsed, again.LastUsed)
	}
	e.offset.Store(int64(2 * time.Minute))
	if _, err := e.verify(tr.AccessToken); err != nil {
		t.Fatal(err)
	}
	if later, _ := e.st.Connection(ctx, p.TokenID); !later.LastUsed.After(*first.LastUsed) {
		t.Fatalf("last use not recorded after a minute: %v then %v", first.LastUsed, later.LastUsed)
	}
}

// TestTokenLastUseRecorded: a personal access token verified through the
// same verifier gets its last use recorded too, at most once a minute.
func TestTokenLastUseRecorded(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	ctx := context.Background()
	secret, tok, err := auth.CreateToken(ctx, e.st, auth.NewTokenSpec{Workspace: e.ws, User: e.user.ID, Name: "ci", Scopes: []string{auth.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	lastUse := func() *time.Time {
		ts, err := e.st.Tokens(ctx, e.ws)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ts {
			if x.ID == tok.ID {
				return x.LastUsed
			}
		}
		t.Fatalf("token %s not listed", tok.ID)
		return nil
	}
	if lastUse() != nil {
		t.Fatal("a new token has a last use")
	}
	if _, err := e.verify(secret); err != nil {
		t.Fatal(err)
	}
	first := lastUse()
	if first == nil {
		t.Fatal("no last use recorded for a personal access token")
	}
	e.offset.Store(int64(2 * time.Minute))
	if _, err := e.verify(secret); err != nil {
		t.Fatal(err)
	}
	if later := lastUse(); later == nil || !later.After(*first) {
		t.Fatalf("last use not recorded after a minute: %v then %v", first, later)
	}
}

// TestAuthorizationRequestByPost: a client may send the authorization
// request as a form POST; it gets the consent page, and nothing is granted
// until the person decides.
func TestAuthorizationRequestByPost(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	_, c := pkcePair()
	resp := e.postForm("/authorize", e.authParams(c), true)
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Approve") {
		t.Fatalf("POST authorization request: %d %s", resp.StatusCode, body)
	}
	if conns, _ := e.st.Connections(context.Background(), e.ws); len(conns) != 0 {
		t.Fatalf("connections before a decision: %+v", conns)
	}
	loc := e.submit(parseConsent(t, body), "approve")
	if loc.Query().Get("code") == "" {
		t.Fatalf("no code: %s", loc)
	}
}

// TestConsentLeavesDeletedRoomsOut: a deleted Room keeps its row, marked
// by an object; the consent page offers only the Rooms that exist.
func TestConsentLeavesDeletedRoomsOut(t *testing.T) {
	st := openSQLite(t)
	e := newEnv(t, st, nil)
	room := func(title string, deleted bool) {
		t.Helper()
		id := store.NewID("room")
		_, err := st.Guarded(context.Background(), store.Mutation{
			Workspace: e.ws, Type: store.TypeRoom, ID: id, Actor: "test",
			Create: &store.Resource{Owner: "o", Title: title, Approved: true, Doc: json.RawMessage(`{}`)},
			Apply: func(*store.Resource) (*store.Change, error) {
				ch := &store.Change{Kind: "room_created", Result: json.RawMessage(`{}`)}
				if deleted {
					ch.Objects = []store.Object{{Workspace: e.ws, Kind: store.KindRoomDeleted, ID: id, Parent: id, Doc: json.RawMessage(`{}`)}}
				}
				return ch, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	room("Standing room", false)
	room("Deleted room", true)
	_, c := pkcePair()
	f := e.consent(e.authParams(c))
	if !strings.Contains(f.page, "Standing room") || strings.Contains(f.page, "Deleted room") {
		t.Fatalf("consent lists the wrong Rooms:\n%s", f.page)
	}
}
