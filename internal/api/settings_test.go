package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"foundry/internal/auth"
)

// as is e acting as another person of its workspace, signed in.
func (e *notesEnv) as(t *testing.T, userID string) *notesEnv {
	t.Helper()
	u, err := e.Server.Store.UserByID(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return &notesEnv{Env: e.Env, owner: signIn(t, e.Server.Store, u)}
}

// TestSettingsActs: the people, the workspace and the tokens, as an owner
// and as a member, with every refusal naming what is wrong.
func TestSettingsActs(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		inv := e.do(t, req{method: "POST", path: "/api/people", body: map[string]any{"email": "Ada@Example.com", "role": "member"}})
		inv.want(t, "invite", http.StatusCreated, "")
		person := inv.body["person"].(map[string]any)
		if link, _ := inv.body["link"].(string); !strings.Contains(link, "/setup?token=") || person["status"] != "invited" || person["email"] != "ada@example.com" {
			t.Fatalf("invitation: %s", inv.raw)
		}
		adaID := person["id"].(string)
		e.do(t, req{method: "POST", path: "/api/people", body: map[string]any{"email": "ada@example.com"}}).want(t, "invite twice", http.StatusConflict, "already_exists")
		bad := e.do(t, req{method: "POST", path: "/api/people", body: map[string]any{"email": "not-an-email"}})
		bad.want(t, "a bad email", http.StatusBadRequest, "invalid_argument")
		if bad.body["field"] != "email" {
			t.Errorf("a bad email names %v", bad.body["field"])
		}
		e.do(t, req{method: "POST", path: "/api/people", body: map[string]any{"email": "x@example.com", "role": "admin"}}).want(t, "a bad role", http.StatusBadRequest, "invalid_argument")

		ada := e.as(t, adaID)
		for _, q := range []req{
			{method: "POST", path: "/api/people", body: map[string]any{"email": "eve@example.com"}},
			{method: "PATCH", path: "/api/people/" + adaID, body: map[string]any{"role": "owner"}},
			{method: "DELETE", path: "/api/people/" + e.Owner.User.ID},
			{method: "PATCH", path: "/api/workspace", body: map[string]any{"name": "Mine"}},
		} {
			r := ada.do(t, q)
			r.want(t, "a member's "+q.method+" "+q.path, http.StatusForbidden, "owner_only")
			if !strings.Contains(r.body["detail"].(string), "owner") {
				t.Errorf("the refusal does not name the act: %s", r.raw)
			}
		}
		if r := ada.do(t, req{method: "GET", path: "/api/people"}); r.status != http.StatusOK || len(r.body["people"].([]any)) != 2 {
			t.Fatalf("a member's people list: %d %s", r.status, r.raw)
		}

		last := e.do(t, req{method: "PATCH", path: "/api/people/" + e.Owner.User.ID, body: map[string]any{"role": "member"}})
		last.want(t, "demoting the last owner", http.StatusConflict, "last_owner")
		e.do(t, req{method: "DELETE", path: "/api/people/" + e.Owner.User.ID}).want(t, "removing the last owner", http.StatusConflict, "last_owner")
		e.do(t, req{method: "PATCH", path: "/api/people/usr_nope", body: map[string]any{"role": "owner"}}).want(t, "an unknown person", http.StatusNotFound, "not_found")
		if r := e.do(t, req{method: "PATCH", path: "/api/people/" + adaID, body: map[string]any{"role": "owner"}}); r.status != http.StatusOK || r.body["role"] != "owner" {
			t.Fatalf("promoting: %d %s", r.status, r.raw)
		}
		e.do(t, req{method: "PATCH", path: "/api/people/" + adaID, body: map[string]any{"role": "member"}}).want(t, "demoting", http.StatusOK, "")

		// Tokens: made shown once, listed, working until revoked.
		e.do(t, req{method: "POST", path: "/api/tokens", body: map[string]any{"scopes": []string{"osfoundry:admin"}}}).want(t, "a bad scope", http.StatusBadRequest, "invalid_argument")
		e.do(t, req{method: "POST", path: "/api/tokens", body: map[string]any{"name": "x"}}).want(t, "no scopes", http.StatusBadRequest, "invalid_argument")
		made := e.do(t, req{method: "POST", path: "/api/tokens", body: map[string]any{"scopes": []string{auth.ScopeRead}}})
		made.want(t, "create a token", http.StatusCreated, "")
		secret := made.body["secret"].(string)
		tok := made.body["token"].(map[string]any)
		if !strings.HasPrefix(secret, auth.TokenPrefix) || !strings.HasPrefix(tok["name"].(string), "Personal token ") {
			t.Fatalf("created token: %s", made.raw)
		}
		e.do(t, req{method: "GET", path: "/api/notes", bearer: secret}).want(t, "the new token", http.StatusOK, "")
		e.do(t, req{method: "GET", path: "/api/people", bearer: secret}).want(t, "a token listing people", http.StatusForbidden, "person_only")
		list := e.do(t, req{method: "GET", path: "/api/tokens"})
		list.want(t, "list tokens", http.StatusOK, "")
		found := false
		for _, x := range list.body["tokens"].([]any) {
			if x.(map[string]any)["id"] == tok["id"] {
				found = x.(map[string]any)["last_used_at"] != nil
			}
		}
		if !found {
			t.Errorf("the token list has no used token %v: %s", tok["id"], list.raw)
		}
		if r := ada.do(t, req{method: "GET", path: "/api/tokens"}); r.status != http.StatusOK || len(r.body["tokens"].([]any)) != 0 {
			t.Errorf("a member sees others' tokens: %s", r.raw)
		}
		ada.do(t, req{method: "DELETE", path: "/api/tokens/" + tok["id"].(string)}).want(t, "a member revoking the owner's token", http.StatusNotFound, "not_found")
		e.do(t, req{method: "DELETE", path: "/api/tokens/" + tok["id"].(string)}).want(t, "revoke", http.StatusNoContent, "")
		e.do(t, req{method: "DELETE", path: "/api/tokens/" + tok["id"].(string)}).want(t, "revoke again", http.StatusConflict, "invalid_argument")
		e.do(t, req{method: "GET", path: "/api/notes", bearer: secret}).want(t, "the revoked token", http.StatusUnauthorized, "unauthenticated")

		// The workspace.
		e.do(t, req{method: "PATCH", path: "/api/workspace", body: map[string]any{"name": "  "}}).want(t, "an empty name", http.StatusBadRequest, "invalid_argument")
		ws := e.do(t, req{method: "PATCH", path: "/api/workspace", body: map[string]any{"name": "Acme"}})
		ws.want(t, "rename", http.StatusOK, "")
		if ws.body["name"] != "Acme" || !strings.HasSuffix(ws.body["mcp_url"].(string), "/mcp") {
			t.Errorf("renamed workspace: %s", ws.raw)
		}
		if me := e.do(t, req{method: "GET", path: "/api/me"}); me.body["workspace"].(map[string]any)["name"] != "Acme" {
			t.Errorf("/api/me after the rename: %s", me.raw)
		}

		e.do(t, req{method: "DELETE", path: "/api/people/" + adaID}).want(t, "remove", http.StatusNoContent, "")
		ada.do(t, req{method: "GET", path: "/api/people"}).want(t, "the removed person's session", http.StatusUnauthorized, "unauthenticated")
	})
}

// settingsSamples are the settings routes' answers the OpenAPI document
// must describe.
func settingsSamples(t *testing.T, e *notesEnv, v *validator) {
	v.check("GET", "/api/people", e.do(t, req{method: "GET", path: "/api/people"}))
	inv := e.do(t, req{method: "POST", path: "/api/people", body: map[string]any{"email": "sample@example.com", "name": "Sam"}})
	v.check("POST", "/api/people", inv)
	v.check("POST", "/api/people", e.do(t, req{method: "POST", path: "/api/people", body: map[string]any{"email": "sample@example.com"}}))
	id := inv.body["person"].(map[string]any)["id"].(string)
	v.check("PATCH", "/api/people/{id}", e.do(t, req{method: "PATCH", path: "/api/people/" + id, body: map[string]any{"role": "owner"}}))
	v.check("PATCH", "/api/people/{id}", e.do(t, req{method: "PATCH", path: "/api/people/" + id, body: map[string]any{"role": "admin"}}))
	v.check("DELETE", "/api/people/{id}", e.do(t, req{method: "DELETE", path: "/api/people/" + id}))
	v.check("DELETE", "/api/people/{id}", e.do(t, req{method: "DELETE", path: "/api/people/" + e.Owner.User.ID}))
	v.check("GET", "/api/workspace", e.do(t, req{method: "GET", path: "/api/workspace"}))
	v.check("PATCH", "/api/workspace", e.do(t, req{method: "PATCH", path: "/api/workspace", body: map[string]any{"name": "Sample"}}))
	tok := e.do(t, req{method: "POST", path: "/api/tokens", body: map[string]any{"name": "Sample", "scopes": []string{auth.ScopeRead}, "notes": []string{}}})
	v.check("POST", "/api/tokens", tok)
	v.check("POST", "/api/tokens", e.do(t, req{method: "POST", path: "/api/tokens", body: map[string]any{"scopes": []string{}}}))
	v.check("GET", "/api/tokens", e.do(t, req{method: "GET", path: "/api/tokens"}))
	tid := tok.body["token"].(map[string]any)["id"].(string)
	v.check("DELETE", "/api/tokens/{id}", e.do(t, req{method: "DELETE", path: "/api/tokens/" + tid}))
	v.check("DELETE", "/api/tokens/{id}", e.do(t, req{method: "DELETE", path: "/api/tokens/" + tid}))
}
