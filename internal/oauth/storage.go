package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ory/fosite"
	foauth2 "github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/pkce"
	fstorage "github.com/ory/fosite/storage"

	"foundry/internal/auth"
	"foundry/internal/oauth/clients"
	"foundry/internal/store"
)

// session is what fosite carries from consent to every token of the
// authorization: who consented, in which workspace, under which connection,
// and when each artefact expires.
type session struct {
	Workspace  string                         `json:"workspace"`
	User       string                         `json:"user"`
	Connection string                         `json:"connection"`
	ExpiresAt  map[fosite.TokenType]time.Time `json:"expires_at,omitempty"`
}

var _ fosite.Session = (*session)(nil)

func (s *session) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.ExpiresAt == nil {
		s.ExpiresAt = map[fosite.TokenType]time.Time{}
	}
	s.ExpiresAt[key] = exp
}

func (s *session) GetExpiresAt(key fosite.TokenType) time.Time {
	if s.ExpiresAt == nil {
		return time.Time{}
	}
	return s.ExpiresAt[key]
}

func (s *session) GetUsername() string { return s.User }
func (s *session) GetSubject() string  { return s.User }

func (s *session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	c.ExpiresAt = make(map[fosite.TokenType]time.Time, len(s.ExpiresAt))
	for k, v := range s.ExpiresAt {
		c.ExpiresAt[k] = v
	}
	return &c
}

// record is a fosite request as stored in store.Grant.Data. It holds no
// secret: tokens are stored only as the hash of their signature.
type record struct {
	ID              string              `json:"id"`
	RequestedAt     time.Time           `json:"requested_at"`
	Client          string              `json:"client_id"`
	Scopes          []string            `json:"scopes,omitempty"`
	GrantedScopes   []string            `json:"granted_scopes,omitempty"`
	Audience        []string            `json:"audience,omitempty"`
	GrantedAudience []string            `json:"granted_audience,omitempty"`
	Form            map[string][]string `json:"form,omitempty"`
	Session         session             `json:"session"`
}

// storedForm is every request parameter a later step reads back: the token
// endpoint compares redirect_uri, PKCE reads the challenge.
var storedForm = []string{"redirect_uri", "code_challenge", "code_challenge_method", "resource"}

// storage implements fosite's storage interfaces on store.Identity.
type storage struct {
	st     store.Store
	lookup func(ctx context.Context, id string) (store.Client, error)
	scopes []string // every scope a client may ask for
	aud    []string // the audience every client may be granted
	grace  time.Duration
	now    func() time.Time
}

var (
	_ fosite.Storage                 = (*storage)(nil)
	_ foauth2.CoreStorage            = (*storage)(nil)
	_ foauth2.TokenRevocationStorage = (*storage)(nil)
	_ pkce.PKCERequestStorage        = (*storage)(nil)
	_ fstorage.Transactional         = (*storage)(nil)
)

type redirectKey struct{}

// withRequestedRedirect lets GetClient accept a localhost redirect on the
// port the client asked for (RFC 8252 §7.3): fosite matches loopback IP
// literals on any port itself, not the name localhost.
func withRequestedRedirect(ctx context.Context, uri string) context.Context {
	return context.WithValue(ctx, redirectKey{}, uri)
}

// loopbackMatch reports whether requested is a loopback redirect (http,
// host 127.0.0.1, [::1] or localhost) that equals registered but for the
// port.
func loopbackMatch(requested, registered string) bool {
	q, err := url.Parse(requested)
	if err != nil {
		return false
	}
	r, err := url.Parse(registered)
	if err != nil {
		return false
	}
	h := q.Hostname()
	if q.Scheme != "http" || r.Scheme != "http" || (h != "localhost" && h != "127.0.0.1" && h != "::1") {
		return false
	}
	return h == r.Hostname() && q.Path == r.Path && q.RawQuery == r.RawQuery && q.User == nil && r.User == nil && q.Fragment == ""
}

// GetClient turns the looked-up store.Client into a fosite client: public
// (PKCE only, token_endpoint_auth_method none) when it has no secret,
// confidential otherwise (client_secret_basic or client_secret_post,
// checked against the stored hash).
func (s *storage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	if id == "" || len(id) > 2048 {
		return nil, fosite.ErrNotFound
	}
	c, err := s.lookup(ctx, id)
	var doc *clients.DocumentError
	if errors.As(err, &doc) {
		return nil, fmt.Errorf("%w: %w", fosite.ErrNotFound, doc) // the error page says why
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("look up client: %w", err)
	}
	redirects := slices.Clone(c.RedirectURIs)
	if req, _ := ctx.Value(redirectKey{}).(string); req != "" && !slices.Contains(redirects, req) {
		for _, r := range c.RedirectURIs {
			if loopbackMatch(req, r) {
				redirects = append(redirects, req)
				break
			}
		}
	}
	scopes := []string{}
	for _, sc := range c.Scopes {
		if slices.Contains(s.scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	if len(scopes) == 0 {
		scopes = slices.Clone(s.scopes)
	}
	// offline_access may be asked for (some clients always do); refresh
	// tokens need no scope here, so it is accepted and never granted.
	scopes = append(scopes, "offline_access")
	return &fosite.DefaultClient{
		ID:            c.ID,
		Secret:        []byte(c.SecretHash),
		RedirectURIs:  redirects,
		GrantTypes:    []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"},
		Scopes:        scopes,
		Audience:      slices.Clone(s.aud),
		Public:        c.SecretHash == "",
	}, nil
}

func (s *storage) ClientAssertionJWTValid(context.Context, string) error { return nil }

func (s *storage) SetClientAssertionJWT(context.Context, string, time.Time) error {
	return fosite.ErrUnsupportedGrantType.WithHint("JWT client assertions are not supported.")
}

func toRecord(r fosite.Requester) record {
	rec := record{
		ID: r.GetID(), RequestedAt: r.GetRequestedAt(),
		Scopes: r.GetRequestedScopes(), GrantedScopes: r.GetGrantedScopes(),
		Audience: r.GetRequestedAudience(), GrantedAudience: r.GetGrantedAudience(),
		Form: map[string][]string{},
	}
	if c := r.GetClient(); c != nil {
		rec.Client = c.GetID()
	}
	for _, k := range storedForm {
		if v, ok := r.GetRequestForm()[k]; ok {
			rec.Form[k] = v
		}
	}
	if sess, ok := r.GetSession().(*session); ok && sess != nil {
		rec.Session = *sess
	}
	return rec
}

func (s *storage) grantOf(kind, signature string, r fosite.Requester, tt fosite.TokenType) (store.Grant, error) {
	rec := toRecord(r)
	data, err := json.Marshal(rec)
	if err != nil {
		return store.Grant{}, err
	}
	now := s.now().UTC()
	exp := rec.Session.GetExpiresAt(tt)
	if exp.IsZero() {
		exp = now.Add(24 * time.Hour)
	}
	return store.Grant{
		Kind: kind, Hash: auth.HashToken(signature), RequestID: rec.ID, Client: rec.Client,
		Connection: rec.Session.Connection, State: store.GrantActive, Data: data,
		CreatedAt: now, ExpiresAt: exp,
	}, nil
}

// requester rebuilds the stored request. Its client is looked up again, so
// a client removed since is a token that no longer works.
func (s *storage) requester(ctx context.Context, g store.Grant) (fosite.Requester, error) {
	var rec record
	if err := json.Unmarshal(g.Data, &rec); err != nil {
		return nil, fmt.Errorf("grant %s: stored request is not readable: %w", g.Kind, err)
	}
	client, err := s.GetClient(ctx, rec.Client)
	if err != nil {
		return nil, err
	}
	form := url.Values{}
	for k, v := range rec.Form {
		form[k] = v
	}
	sess := rec.Session
	return &fosite.Request{
		ID: rec.ID, RequestedAt: rec.RequestedAt, Client: client,
		RequestedScope: rec.Scopes, GrantedScope: rec.GrantedScopes,
		RequestedAudience: rec.Audience, GrantedAudience: rec.GrantedAudience,
		Form: form, Session: &sess,
	}, nil
}

func (s *storage) get(ctx context.Context, kind, signature string) (store.Grant, fosite.Requester, error) {
	if signature == "" {
		return store.Grant{}, nil, fosite.ErrNotFound
	}
	g, err := s.st.Grant(ctx, kind, auth.HashToken(signature))
	if errors.Is(err, store.ErrNotFound) {
		return store.Grant{}, nil, fosite.ErrNotFound
	}
	if err != nil {
		return store.Grant{}, nil, err
	}
	r, err := s.requester(ctx, g)
	if err != nil {
		return g, nil, err
	}
	return g, r, nil
}

// Authorization codes.

func (s *storage) CreateAuthorizeCodeSession(ctx context.Context, code string, r fosite.Requester) error {
	g, err := s.grantOf(store.GrantCode, code, r, fosite.AuthorizeCode)
	if err != nil {
		return err
	}
	return s.st.PutGrant(ctx, g)
}

// GetAuthorizeCodeSession answers ErrInvalidatedAuthorizeCode, with the
// request, for a code used before: fosite then revokes every token issued
// from it.
func (s *storage) GetAuthorizeCodeSession(ctx context.Context, code string, _ fosite.Session) (fosite.Requester, error) {
	g, r, err := s.get(ctx, store.GrantCode, code)
	if err != nil {
		return nil, err
	}
	switch g.State {
	case store.GrantActive:
		return r, nil
	case store.GrantUsed:
		return r, fosite.ErrInvalidatedAuthorizeCode
	default:
		return nil, fosite.ErrNotFound
	}
}

// InvalidateAuthorizeCodeSession marks the code used, atomically: of two
// exchanges racing with one code, one fails here.
func (s *storage) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	ok, err := s.st.SetGrantState(ctx, store.GrantCode, auth.HashToken(code), []string{store.GrantActive}, store.GrantUsed)
	if err != nil {
		return err
	}
	if !ok {
		return fosite.ErrInvalidatedAuthorizeCode
	}
	return nil
}

// PKCE.

func (s *storage) CreatePKCERequestSession(ctx context.Context, signature string, r fosite.Requester) error {
	g, err := s.grantOf(store.GrantPKCE, signature, r, fosite.AuthorizeCode)
	if err != nil {
		return err
	}
	return s.st.PutGrant(ctx, g)
}

func (s *storage) GetPKCERequestSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	g, r, err := s.get(ctx, store.GrantPKCE, signature)
	if err != nil {
		return nil, err
	}
	if g.State != store.GrantActive {
		return nil, fosite.ErrNotFound
	}
	return r, nil
}

func (s *storage) DeletePKCERequestSession(ctx context.Context, signature string) error {
	return s.st.DeleteGrant(ctx, store.GrantPKCE, auth.HashToken(signature))
}

// Access tokens.

func (s *storage) CreateAccessTokenSession(ctx context.Context, signature string, r fosite.Requester) error {
	g, err := s.grantOf(store.GrantAccess, signature, r, fosite.AccessToken)
	if err != nil {
		return err
	}
	if t := txOf(ctx); t != nil && t.rotate != "" {
		t.puts = append(t.puts, g)
		return nil
	}
	return s.st.PutGrant(ctx, g)
}

func (s *storage) GetAccessTokenSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	g, r, err := s.get(ctx, store.GrantAccess, signature)
	if err != nil {
		return nil, err
	}
	if g.State != store.GrantActive {
		return r, fosite.ErrInactiveToken
	}
	return r, nil
}

func (s *storage) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	_, err := s.st.SetGrantState(ctx, store.GrantAccess, auth.HashToken(signature), []string{store.GrantActive}, store.GrantRevoked)
	return err
}

// Refresh tokens.

func (s *storage) CreateRefreshTokenSession(ctx context.Context, signature, accessSignature string, r fosite.Requester) error {
	g, err := s.grantOf(store.GrantRefresh, signature, r, fosite.RefreshToken)
	if err != nil {
		return err
	}
	if accessSignature != "" {
		g.AccessHash = auth.HashToken(accessSignature)
	}
	if t := txOf(ctx); t != nil && t.rotate != "" {
		t.puts = append(t.puts, g)
		return nil
	}
	return s.st.PutGrant(ctx, g)
}

// GetRefreshTokenSession answers a refresh token as active when it is, or
// when it was rotated within the grace period: a client that refreshed twice
// at once (two tabs, a retry) gets two working token pairs instead of a
// reuse alarm that would log the person out. Later, ErrInactiveToken makes
// fosite treat it as reuse and revoke the whole family.
func (s *storage) GetRefreshTokenSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	g, r, err := s.get(ctx, store.GrantRefresh, signature)
	if err != nil {
		return nil, err
	}
	switch {
	case g.State == store.GrantActive:
		return r, nil
	case g.State == store.GrantRotated && !g.Change.Before(s.graceSince()):
		return r, nil
	default:
		return r, fosite.ErrInactiveToken
	}
}

func (s *storage) graceSince() time.Time { return s.now().Add(-s.grace) }

func (s *storage) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	_, err := s.st.SetGrantState(ctx, store.GrantRefresh, auth.HashToken(signature), []string{store.GrantActive, store.GrantRotated}, store.GrantRevoked)
	return err
}

// RotateRefreshToken, inside fosite's transaction, only notes the token:
// Commit exchanges it and stores the new pair in one store.RotateRefresh.
func (s *storage) RotateRefreshToken(ctx context.Context, _ string, signature string) error {
	if t := txOf(ctx); t != nil {
		t.rotate = auth.HashToken(signature)
		return nil
	}
	return s.rotate(ctx, auth.HashToken(signature), nil)
}

func (s *storage) rotate(ctx context.Context, oldHash string, puts []store.Grant) error {
	err := s.st.RotateRefresh(ctx, oldHash, s.graceSince(), puts)
	if errors.Is(err, store.ErrNotFound) {
		return fosite.ErrInactiveToken.WithHint("The refresh token was used before.")
	}
	return err
}

func (s *storage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.st.RevokeGrants(ctx, requestID, store.GrantRefresh)
}

func (s *storage) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.st.RevokeGrants(ctx, requestID, store.GrantAccess)
}

// Transactions: fosite brackets a refresh with BeginTX and Commit. Writes
// are buffered from RotateRefreshToken on, and Commit makes them one store
// transaction; writes of other flows go straight to the store.

type txKey struct{}

type tx struct {
	rotate string // hash of the refresh token being exchanged
	puts   []store.Grant
	done   bool
}

func txOf(ctx context.Context) *tx {
	t, _ := ctx.Value(txKey{}).(*tx)
	if t == nil || t.done {
		return nil
	}
	return t
}

func (s *storage) BeginTX(ctx context.Context) (context.Context, error) {
	return context.WithValue(ctx, txKey{}, &tx{}), nil
}

func (s *storage) Commit(ctx context.Context) error {
	t := txOf(ctx)
	if t == nil {
		return nil
	}
	t.done = true
	if t.rotate == "" {
		return nil
	}
	return s.rotate(ctx, t.rotate, t.puts)
}

func (s *storage) Rollback(ctx context.Context) error {
	if t := txOf(ctx); t != nil {
		t.done, t.puts = true, nil
	}
	return nil
}

// normalizeResource compares resource URIs: scheme and host are
// case-insensitive, and a trailing slash does not make another resource.
func normalizeResource(v string) string {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" {
		return ""
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String()
}
