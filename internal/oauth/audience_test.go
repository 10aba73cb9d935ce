package oauth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"foundry/internal/auth"
)

// TestVerifyAPIAudience: an access token issued for the MCP endpoint
// verifies for MCP and is refused for the REST API with an AudienceError
// (an ErrInvalidToken) that names its audience; a personal access token
// verifies for both.
func TestVerifyAPIAudience(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	ctx := context.Background()
	v, c := pkcePair()
	tr := e.mustTokens(e.exchange(e.code(c), v))
	if _, err := e.srv.Verify(ctx, tr.AccessToken); err != nil {
		t.Fatalf("for MCP: %v", err)
	}
	_, err := e.srv.VerifyAPI(ctx, tr.AccessToken)
	var ae *auth.AudienceError
	if !errors.As(err, &ae) || !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("for the API: %v, want an AudienceError", err)
	}
	if len(ae.Audience) != 1 || ae.Audience[0] != e.resource || ae.Want != e.url+"/api" || !strings.Contains(err.Error(), e.resource) {
		t.Fatalf("audience error %+v: %v", ae, err)
	}
	if _, err := e.srv.VerifyAPI(ctx, "fdyat_not.a.token"); err == nil || errors.As(err, &ae) {
		t.Fatalf("a forged token: %v, want a plain ErrInvalidToken", err)
	}
	secret, _, err := auth.CreateToken(ctx, e.st, auth.NewTokenSpec{Workspace: e.ws, User: e.user.ID, Name: "script", Scopes: []string{auth.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	for name, verify := range map[string]auth.Verifier{"MCP": e.srv.Verify, "API": e.srv.VerifyAPI} {
		if p, err := verify(ctx, secret); err != nil || p.User != e.user.ID {
			t.Fatalf("a personal access token for %s: %+v %v", name, p, err)
		}
	}
}
