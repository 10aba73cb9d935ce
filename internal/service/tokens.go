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

// CreateToken mints a token of the person c for a client. The secret is returned
// once; only its hash is stored.
func (s *Service) CreateToken(ctx context.Context, c Caller, spec TokenSpec) (secret string, tok store.Token, err error) {
	if err := c.personOnly("creating a token"); err != nil {
		return "", store.Token{}, err
	}
	return auth.CreateToken(ctx, s.Store, auth.NewTokenSpec{
		Workspace: c.Workspace, User: c.User, Name: spec.Name,
		Scopes: spec.Scopes, Notes: spec.Notes, Rooms: spec.Rooms,
	})
}

// ListTokens lists the workspace's tokens, revoked ones included.
func (s *Service) ListTokens(ctx context.Context, c Caller) ([]store.Token, error) {
	if err := c.personOnly("listing tokens"); err != nil {
		return nil, err
	}
	return s.Store.Tokens(ctx, c.Workspace)
}

// RevokeToken stops a token: at once on the node (or process) it runs on
// when its store is the server's (store.WithTokenCache), and within
// store.TokenRecheck on every other. Revoking a token that is already
// revoked, or that the workspace does not have, is refused with the reason.
func (s *Service) RevokeToken(ctx context.Context, c Caller, id string) error {
	if err := c.personOnly("revoking a token"); err != nil {
		return err
	}
	ws := c.Workspace
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

// VerifyToken resolves a personal access token's secret to its principal
// (auth.ErrInvalidToken for one that is unknown or revoked).
func (s *Service) VerifyToken(ctx context.Context, secret string) (auth.Principal, error) {
	return auth.Verify(ctx, s.Store, secret)
}
