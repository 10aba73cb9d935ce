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
	"unicode"

	"foundry/internal/problem"
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
	// Notes and Rooms: nil = all, now and later; an empty non-nil list =
	// none. Every ID listed must exist in the workspace.
	Notes, Rooms []string
}

// GrantAll and GrantNone are how a grant is spelt for everything and for
// nothing. Only GrantAll grants everything: an empty value grants nothing, so
// an unset shell variable can never mint an all-Notes token.
const (
	GrantAll  = "all"
	GrantNone = "none"
)

// ParseGrant reads the value of a grant flag (field names it in refusals):
// "all" is nil (everything, now and later); "none", "" or a value with only
// commas and spaces is an empty non-nil list (nothing); otherwise a
// comma-separated list of IDs, trimmed, duplicates dropped. "all" or "none"
// mixed with IDs is refused: the meaning would be a guess.
func ParseGrant(field, value string) ([]string, error) {
	v := strings.TrimSpace(value)
	switch strings.ToLower(v) {
	case GrantAll:
		return nil, nil
	case GrantNone:
		return []string{}, nil
	}
	out := []string{}
	for _, id := range strings.Split(v, ",") {
		id = strings.TrimSpace(id)
		if id == "" || slices.Contains(out, id) {
			continue
		}
		if l := strings.ToLower(id); l == GrantAll || l == GrantNone {
			return nil, problem.New(problem.Invalid, field, "%q cannot be mixed with IDs: give %s alone, %s alone, or a comma-separated list of IDs", id, GrantAll, GrantNone)
		}
		out = append(out, id)
	}
	return out, nil
}

// CreateToken stores a new token and returns its secret, shown once.
func CreateToken(ctx context.Context, s store.Store, spec NewTokenSpec) (secret string, tok store.Token, err error) {
	for _, sc := range spec.Scopes {
		if sc != ScopeRead && sc != ScopeWrite {
			return "", store.Token{}, problem.New(problem.Invalid, "scopes", "%q is not a scope; use %s and/or %s", sc, ScopeRead, ScopeWrite)
		}
	}
	if len(spec.Scopes) == 0 {
		return "", store.Token{}, problem.New(problem.Invalid, "scopes", "give at least one of %s, %s", ScopeRead, ScopeWrite)
	}
	if err := checkGrant(ctx, s, spec.Workspace, "notes", store.TypeNote, spec.Notes); err != nil {
		return "", store.Token{}, err
	}
	if err := checkGrant(ctx, s, spec.Workspace, "rooms", store.TypeRoom, spec.Rooms); err != nil {
		return "", store.Token{}, err
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

// checkGrant refuses a grant that names a resource the workspace does not
// have: a typo would otherwise mint a token that silently reaches nothing, or
// later reaches a resource created under that ID.
func checkGrant(ctx context.Context, s store.Store, ws, field, typ string, ids []string) error {
	what := map[string]string{store.TypeNote: "Note", store.TypeRoom: "Room"}[typ]
	for i, id := range ids {
		f := fmt.Sprintf("%s[%d]", field, i)
		if len(id) > 200 {
			return problem.New(problem.Invalid, f, "is %d bytes long, which no %s ID is", len(id), what)
		}
		if id == "" || strings.ContainsFunc(id, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) {
			return problem.New(problem.Invalid, f, "%q is not a %s ID: IDs are not empty and have no spaces or control characters", id, what)
		}
		r, err := s.Head(ctx, typ, id)
		if err == nil && typ == store.TypeRoom {
			// A deleted Room keeps its row, marked by an object.
			if _, gone := s.GetObject(ctx, store.KindRoomDeleted, id); gone == nil {
				err = store.ErrNotFound
			} else if !errors.Is(gone, store.ErrNotFound) {
				err = gone
			}
		}
		if errors.Is(err, store.ErrNotFound) || (err == nil && r.Workspace != ws) {
			return problem.New(problem.NotFound, f, "%s %s does not exist in this workspace: give existing %s IDs, or %s for every %s", what, id, what, GrantAll, what)
		}
		if err != nil {
			return fmt.Errorf("%s: look up %s %s: %w", field, what, id, err)
		}
	}
	return nil
}

// ErrInvalidToken covers unknown, malformed and revoked tokens alike, so a
// caller learns nothing about which.
var ErrInvalidToken = errors.New("the bearer token is not valid: create one with `foundry token create` or reconnect")

// AudienceError is an ErrInvalidToken that says why: a valid OAuth access
// token whose audience is another resource of this server (a token for the
// MCP endpoint presented to the REST API). The holder learns only what the
// token was issued for.
type AudienceError struct {
	Audience []string // the token's audience
	Want     string   // the resource it was presented to
}

func (e *AudienceError) Error() string {
	return fmt.Sprintf("this OAuth access token is for %s, not %s: use it there, or use a personal access token here (foundry token create)", strings.Join(e.Audience, " "), e.Want)
}

// Is makes an AudienceError an ErrInvalidToken.
func (e *AudienceError) Is(target error) bool { return target == ErrInvalidToken }

// Verifier resolves a presented bearer secret to its principal, answering
// ErrInvalidToken for one that is not valid here.
type Verifier func(ctx context.Context, secret string) (Principal, error)

// Verify resolves a personal access token to its principal.
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
