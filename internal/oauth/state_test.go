package oauth_test

import (
	"net/http"
	"strings"
	"testing"

	"foundry/internal/oauth"
)

// TestNoStateWithPKCE: OAuth 2.1 makes state optional when PKCE protects
// the flow (the TypeScript SDK sends none when its provider has none). A
// request without state but with PKCE S256 gets the consent page, a code
// without any state in the redirect, and tokens for that code; a refusal
// redirected to it carries no state either.
func TestNoStateWithPKCE(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	v, c := pkcePair()
	p := e.authParams(c)
	p.Del("state")
	f := e.consent(p)
	if f.values.Has("state") {
		t.Fatalf("the consent form carries a state the client never sent: %v", f.values)
	}
	loc := e.submit(f, "approve")
	q := loc.Query()
	if !strings.HasPrefix(q.Get("code"), oauth.CodePrefix) || q.Get("iss") != e.url || q.Has("state") {
		t.Fatalf("redirect %s: want a code and iss, and no state", loc)
	}
	tr := e.mustTokens(e.exchange(q.Get("code"), v))
	if _, err := e.verify(tr.AccessToken); err != nil {
		t.Fatalf("the access token of a flow without state: %v", err)
	}

	p = e.authParams(c)
	p.Del("state")
	loc = e.submit(e.consent(p), "deny")
	if q := loc.Query(); q.Get("error") != "access_denied" || q.Has("state") || q.Get("iss") != e.url {
		t.Fatalf("denied without state: %s", loc)
	}
	p.Set("resource", "https://other.example.com/mcp")
	if q := authorizeRefusal(t, e, p, "invalid_target"); q.Has("state") {
		t.Fatalf("refusal without state carries one: %v", q)
	}
}

// TestNoStateNoPKCE: without state and without PKCE S256 nothing protects
// the flow: the person sees why on Foundry's page, and the client is not
// redirected to.
func TestNoStateNoPKCE(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	_, c := pkcePair()
	for name, drop := range map[string][]string{
		"no challenge": {"code_challenge", "code_challenge_method"},
		"no method":    {"code_challenge_method"},
	} {
		p := e.authParams(c)
		p.Del("state")
		for _, k := range drop {
			p.Del(k)
		}
		for _, signed := range []bool{true, false} {
			resp := e.get("/authorize?"+p.Encode(), signed)
			body := readBody(t, resp)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" ||
				!strings.Contains(body, "invalid_state") || !strings.Contains(body, "PKCE") {
				t.Fatalf("%s (signed in %v): %d %v %s", name, signed, resp.StatusCode, resp.Header, body)
			}
		}
	}
	p := e.authParams(c)
	p.Del("state")
	p.Set("code_challenge_method", "plain")
	resp := e.get("/authorize?"+p.Encode(), true)
	if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(body, "S256") {
		t.Fatalf("plain PKCE without state: %d %s", resp.StatusCode, body)
	}
}
