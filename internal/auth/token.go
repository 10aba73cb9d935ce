// Package auth turns a bearer token into a Principal: who is calling, in which
// workspace, with which scopes and which Notes and Rooms. Tokens are stored
// only as SHA-256 hashes of a 256-bit random secret (a fast hash is right for
// high-entropy secrets; passwords, which are not, get argon2id).
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"foundry/internal/store"
)

// Scopes.
const (
	ScopeRead  = "osfoundry:read"
	ScopeWrite = "osfoundry:write"
)

// TokenPrefix marks Foundry personal access tokens so secret scanners can
// find a leaked one.
const TokenPrefix = "fdy_"

// Principal is the caller of a tool.
type Principal struct {
	Workspace string
	User      string
	TokenID   string
	Scopes    []string
	Notes     []string // nil: every approved Note
	Rooms     []string // nil: every cloud Room
}

// Has reports whether the principal carries scope.
func (p Principal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

// CanNote reports whether the grant includes the Note.
func (p Principal) CanNote(id string) bool { return p.Notes == nil || slices.Contains(p.Notes, id) }

// CanRoom reports whether the grant includes the Room.
func (p Principal) CanRoom(id string) bool { return p.Rooms == nil || slices.Contains(p.Rooms, id) }

// HashToken is how a secret is looked up.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// NewTokenSpec is what `foundry token create` asks for.
type NewTokenSpec struct {
	Workspace, User, Name string
	Scopes                []string
	Notes, Rooms          []string // nil = all
}

// CreateToken stores a new token and returns its secret, shown once.
func CreateToken(ctx context.Context, s store.Store, spec NewTokenSpec) (secret string, tok store.Token, err error) {
	for _, sc := range spec.Scopes {
		if sc != ScopeRead && sc != ScopeWrite {
			return "", store.Token{}, fmt.Errorf("scopes: %q is not a scope; use %s and/or %s", sc, ScopeRead, ScopeWrite)
		}
	}
	if len(spec.Scopes) == 0 {
		return "", store.Token{}, fmt.Errorf("scopes: give at least one of %s, %s", ScopeRead, ScopeWrite)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", store.Token{}, err
	}
	secret = TokenPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
	tok = store.Token{
		ID: store.NewID("tok"), Workspace: spec.Workspace, User: spec.User, Name: spec.Name,
		Hash: HashToken(secret), Scopes: spec.Scopes, Notes: spec.Notes, Rooms: spec.Rooms, CreatedAt: time.Now().UTC(),
	}
	if err := s.CreateToken(ctx, tok); err != nil {
		return "", store.Token{}, err
	}
	return secret, tok, nil
}

// ErrInvalidToken covers unknown, malformed and revoked tokens alike, so a
// caller learns nothing about which.
var ErrInvalidToken = errors.New("the bearer token is not valid: create one with `foundry token create` or reconnect")

// Verify resolves a secret to its principal.
func Verify(ctx context.Context, s store.Store, secret string) (Principal, error) {
	if !strings.HasPrefix(secret, TokenPrefix) {
		return Principal{}, ErrInvalidToken
	}
	t, err := s.TokenByHash(ctx, HashToken(secret))
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.RevokedAt != nil) {
		return Principal{}, ErrInvalidToken
	}
	if err != nil {
		return Principal{}, err
	}
	return Principal{Workspace: t.Workspace, User: t.User, TokenID: t.ID, Scopes: t.Scopes, Notes: t.Notes, Rooms: t.Rooms}, nil
}
