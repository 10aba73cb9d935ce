package service

import (
	"context"
	"errors"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// TokenSpec is what a person asks for when minting a token for a client.
type TokenSpec struct {
	Name   string
	Scopes []string
	// Notes and Rooms: nil = all, now and later; an empty non-nil list =
	// none. Every ID listed must exist in the workspace.
	Notes, Rooms []string
}

// CreateToken mints a token of user in workspace ws. The secret is returned
// once; only its hash is stored.
func (s *Service) CreateToken(ctx context.Context, ws, user string, spec TokenSpec) (secret string, tok store.Token, err error) {
	return auth.CreateToken(ctx, s.Store, auth.NewTokenSpec{
		Workspace: ws, User: user, Name: spec.Name,
		Scopes: spec.Scopes, Notes: spec.Notes, Rooms: spec.Rooms,
	})
}

// ListTokens lists the workspace's tokens, revoked ones included.
func (s *Service) ListTokens(ctx context.Context, ws string) ([]store.Token, error) {
	return s.Store.Tokens(ctx, ws)
}

// RevokeToken stops a token: at once on the node (or process) it runs on
// when its store is the server's (store.WithTokenCache), and within
// store.TokenRecheck on every other. Revoking a token that is already
// revoked, or that the workspace does not have, is refused with the reason.
func (s *Service) RevokeToken(ctx context.Context, ws, id string) error {
	if err := CheckID("token_id", id); err != nil {
		return err
	}
	err := s.Store.RevokeToken(ctx, ws, id)
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	toks, lerr := s.Store.Tokens(ctx, ws)
	if lerr != nil {
		return lerr
	}
	for _, t := range toks {
		if t.ID == id && t.RevokedAt != nil {
			return problem.New(problem.Invalid, "token_id", "token %s was already revoked at %s", id, t.RevokedAt.UTC().Format("2006-01-02 15:04 UTC")).With("revoked_at", t.RevokedAt.UTC())
		}
	}
	return problem.New(problem.NotFound, "token_id", "token %q is not in this workspace", problem.Excerpt(id))
}
