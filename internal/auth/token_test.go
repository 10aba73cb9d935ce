package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

func TestTokensAreStoredAsHashesAndRevocable(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws := storetest.Seed(t, s)
	users, _ := s.Users(ctx, ws)

	if _, _, err := auth.CreateToken(ctx, s, auth.NewTokenSpec{Workspace: ws, User: users[0].ID, Scopes: []string{"admin"}}); err == nil || !strings.Contains(err.Error(), "scopes") {
		t.Fatalf("unknown scope: %v", err)
	}
	secret, tok, err := auth.CreateToken(ctx, s, auth.NewTokenSpec{Workspace: ws, User: users[0].ID, Name: "t",
		Scopes: []string{auth.ScopeRead}, Notes: []string{"note_a"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, auth.TokenPrefix) || tok.Hash == secret || strings.Contains(tok.Hash, secret) || tok.Hash != auth.HashToken(secret) {
		t.Fatalf("token %q stored as %q", secret, tok.Hash)
	}
	p, err := auth.Verify(ctx, s, secret)
	if err != nil || p.Workspace != ws || !p.Has(auth.ScopeRead) || p.Has(auth.ScopeWrite) || !p.CanNote("note_a") || p.CanNote("note_b") || !p.CanRoom("any") {
		t.Fatalf("principal %+v, %v", p, err)
	}
	for _, bad := range []string{"", "fdy_", "not-a-token", secret + "x"} {
		if _, err := auth.Verify(ctx, s, bad); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("Verify(%q) = %v, want ErrInvalidToken", bad, err)
		}
	}
	if err := s.RevokeToken(ctx, ws, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Verify(ctx, s, secret); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("revoked token verified: %v", err)
	}
}
