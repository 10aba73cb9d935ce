package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// TokenSpec is what a person asks for when minting a token for a client.
type TokenSpec struct {
	// Name is what the token is recognised by in the token list; empty:
	// "Personal token N", N one more than the person's tokens.
	Name   string
	Scopes []string
	// Notes and Rooms: nil = all, now and later; an empty non-nil list =
	// none. Every ID listed must exist in the workspace.
	Notes, Rooms []string
}

// MaxTokenNameBytes bounds a token's name.
const MaxTokenNameBytes = 100

// DefaultTokenName is the name of a person's n-th token given none.
func DefaultTokenName(n int) string { return fmt.Sprintf("Personal token %d", n) }

// CreateToken mints a token of the person c for a client. The secret is returned
// once; only its hash is stored.
func (s *Service) CreateToken(ctx context.Context, c Caller, spec TokenSpec) (secret string, tok Entry, err error) {
	if err := c.personOnly("creating a token"); err != nil {
		return "", Entry{}, err
	}
	tokName := strings.TrimSpace(spec.Name)
	switch {
	case !utf8.ValidString(tokName):
		return "", Entry{}, problem.New(problem.Invalid, "name", "is not valid UTF-8 text")
	case len(tokName) > MaxTokenNameBytes:
		return "", Entry{}, problem.New(problem.Invalid, "name", "is %d bytes long; a token's name has at most %d bytes", len(tokName), MaxTokenNameBytes)
	case strings.ContainsFunc(tokName, unicode.IsControl):
		return "", Entry{}, problem.New(problem.Invalid, "name", "has a control character; give a name on one line")
	}
	if tokName == "" {
		toks, err := s.Store.Tokens(ctx, c.Workspace)
		if err != nil {
			return "", Entry{}, fmt.Errorf("list tokens: %w", err)
		}
		n := 1
		for _, t := range toks {
			if t.User == c.User {
				n++
			}
		}
		tokName = DefaultTokenName(n)
	}
	secret, t, err := auth.CreateToken(ctx, s.Store, auth.NewTokenSpec{
		Workspace: c.Workspace, User: c.User, Name: tokName,
		Scopes: spec.Scopes, Notes: spec.Notes, Rooms: spec.Rooms,
	})
	if err != nil {
		return "", Entry{}, err
	}
	u, err := s.Store.UserByID(ctx, c.User)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", Entry{}, err
	}
	out := []Entry{tokenEntry(t, u.Email)}
	if err := name(ctx, s.Store, c.Workspace, out); err != nil {
		return "", Entry{}, err
	}
	return secret, out[0], nil
}

// ListTokens lists the personal access tokens c may see, oldest first,
// revoked ones included, with their last use: a workspace owner (and the
// operator) the workspace's, a member their own.
func (s *Service) ListTokens(ctx context.Context, c Caller) ([]Entry, error) {
	if err := c.personOnly("listing tokens"); err != nil {
		return nil, err
	}
	all, err := listConnections(ctx, s.Store, c.Workspace, c.ownEntries())
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	for i := len(all) - 1; i >= 0; i-- { // all is newest first
		if all[i].Kind == KindToken {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// RevokeToken stops a token c may see (see ListTokens): at once on the
// node (or process) it runs on when its store is the server's
// (store.WithTokenCache), and within store.TokenRecheck on every other.
// Revoking a token that is already revoked, or that c cannot see, is
// refused with the reason.
func (s *Service) RevokeToken(ctx context.Context, c Caller, id string) error {
	if err := c.personOnly("revoking a token"); err != nil {
		return err
	}
	ws, user := c.Workspace, c.ownEntries()
	if err := CheckID("token_id", id); err != nil {
		return err
	}
	toks, err := s.Store.Tokens(ctx, ws)
	if err != nil {
		return fmt.Errorf("list tokens: %w", err)
	}
	for _, t := range toks {
		if t.ID != id || (user != "" && t.User != user) {
			continue
		}
		if t.RevokedAt == nil {
			err = s.Store.RevokeToken(ctx, ws, id)
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			now := s.Now() // revoked meanwhile
			t.RevokedAt = &now
		}
		return problem.New(problem.Invalid, "token_id", "token %s was already revoked at %s", id, t.RevokedAt.UTC().Format("2006-01-02 15:04 UTC")).With("revoked_at", t.RevokedAt.UTC())
	}
	return problem.New(problem.NotFound, "token_id", "token %q is not in this workspace", problem.Excerpt(id))
}

// tokenEntry is a token as the lists show it (Names not filled).
func tokenEntry(t store.Token, email string) Entry {
	return Entry{
		ID: t.ID, Kind: KindToken, Name: t.Name,
		User:   UserRef{ID: t.User, Email: email},
		Scopes: nonNilIDs(t.Scopes), Notes: t.Notes, Rooms: t.Rooms,
		CreatedAt: t.CreatedAt.UTC(), LastUsedAt: t.LastUsed, RevokedAt: t.RevokedAt, Revoked: t.RevokedAt != nil,
	}
}

// VerifyToken resolves a personal access token's secret to its principal
// (auth.ErrInvalidToken for one that is unknown or revoked).
func (s *Service) VerifyToken(ctx context.Context, secret string) (auth.Principal, error) {
	return auth.Verify(ctx, s.Store, secret)
}
