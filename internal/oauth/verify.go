package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ory/fosite"

	"foundry/internal/auth"
	"foundry/internal/store"
)

// touchEvery is how often a connection's last use is recorded.
const touchEvery = time.Minute

// Verify is an auth.Verifier for both kinds of bearer token: personal
// access tokens (auth.TokenPrefix) and OAuth access tokens
// (AccessTokenPrefix). An OAuth token is valid while its HMAC checks, it is
// active and unexpired, its audience is the MCP endpoint and its connection
// is live; anything else is auth.ErrInvalidToken. The principal's scopes
// are the token's granted scopes that the connection still has, and its
// Notes and Rooms are the connection's grant.
func (s *Server) Verify(ctx context.Context, secret string) (auth.Principal, error) {
	return s.verify(ctx, secret, s.opts.Resource, s.resource)
}

// VerifyAPI is the auth.Verifier of the REST API: Verify, for tokens whose
// audience is the API (APIResource). An OAuth access token for the MCP
// endpoint is refused with an *auth.AudienceError: a token a person granted
// an MCP client reaches only what that client was granted it for.
func (s *Server) VerifyAPI(ctx context.Context, secret string) (auth.Principal, error) {
	return s.verify(ctx, secret, s.opts.APIResource, s.apiResource)
}

// verify checks secret for the resource want (as given, and normalized).
func (s *Server) verify(ctx context.Context, secret, want, wantNorm string) (auth.Principal, error) {
	if strings.HasPrefix(secret, auth.TokenPrefix) {
		p, err := auth.Verify(ctx, s.st, secret)
		if err == nil {
			s.touch(ctx, p.TokenID, s.now(), s.st.TouchToken)
		}
		return p, err
	}
	if !strings.HasPrefix(secret, AccessTokenPrefix) || len(secret) > 512 {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	if err := s.strategy.Enigma.Validate(ctx, strings.TrimPrefix(secret, AccessTokenPrefix)); err != nil {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	sig := s.strategy.AccessTokenSignature(ctx, secret)
	if sig == "" {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	g, err := s.st.Grant(ctx, store.GrantAccess, auth.HashToken(sig))
	if errors.Is(err, store.ErrNotFound) {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	if err != nil {
		return auth.Principal{}, err
	}
	now := s.now()
	if g.State != store.GrantActive || !now.Before(g.ExpiresAt) || g.Connection == "" {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	var rec record
	if err := json.Unmarshal(g.Data, &rec); err != nil {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	if exp := rec.Session.GetExpiresAt(fosite.AccessToken); !exp.IsZero() && !now.Before(exp) {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	if !slices.ContainsFunc(rec.GrantedAudience, func(a string) bool { return normalizeResource(a) == wantNorm }) {
		if len(rec.GrantedAudience) == 0 {
			return auth.Principal{}, auth.ErrInvalidToken
		}
		return auth.Principal{}, &auth.AudienceError{Audience: rec.GrantedAudience, Want: want}
	}
	conn, err := s.st.Connection(ctx, g.Connection)
	if errors.Is(err, store.ErrNotFound) {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	if err != nil {
		return auth.Principal{}, err
	}
	if conn.RevokedAt != nil || conn.Workspace != rec.Session.Workspace || conn.User != rec.Session.User {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	scopes := []string{}
	for _, sc := range rec.GrantedScopes {
		if slices.Contains(conn.Scopes, sc) && !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	s.touch(ctx, conn.ID, now, s.st.TouchConnection)
	return auth.Principal{
		Workspace: conn.Workspace, User: conn.User, TokenID: conn.ID,
		Scopes: scopes, Notes: conn.Notes, Rooms: conn.Rooms,
	}, nil
}

// touch records a use of a connection or a personal access token (record)
// at most once a minute per ID and node.
func (s *Server) touch(ctx context.Context, id string, now time.Time, record func(context.Context, string, time.Time) error) {
	s.touchMu.Lock()
	last, ok := s.touched[id]
	due := !ok || now.Sub(last) >= touchEvery || now.Before(last)
	if due {
		if len(s.touched) > 10000 {
			for k, t := range s.touched {
				if now.Sub(t) >= touchEvery {
					delete(s.touched, k)
				}
			}
		}
		s.touched[id] = now
	}
	s.touchMu.Unlock()
	if due {
		if err := record(ctx, id, now.UTC()); err != nil {
			s.log.WarnContext(ctx, "oauth: record last use", "id", id, "err", err)
		}
	}
}
