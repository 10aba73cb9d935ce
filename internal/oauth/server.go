// Package oauth is Foundry's OAuth 2.1 authorization server for MCP clients
// (the MCP authorization spec): RFC 8414 metadata, the authorization code
// flow with PKCE S256 only, RFC 8707 resource indicators, RFC 9207 iss,
// refresh rotation with a grace period and reuse detection, and RFC 7009
// revocation. The protocol is ory/fosite's; this package stores its
// artefacts in store.Identity (hashes only), shows the consent page, and
// turns access tokens into auth.Principal.
package oauth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/token/hmac"

	"foundry/internal/auth"
	"foundry/internal/reqlog"
	"foundry/internal/store"
)

// Options configure the authorization server.
type Options struct {
	// Issuer is the public URL of this server, with no trailing slash.
	Issuer string
	// Resource is the MCP endpoint's URL: the only audience tokens get.
	// Default Issuer + "/mcp".
	Resource string
	// APIResource is the REST API's URL (default Issuer + "/api"). No
	// token is issued for it; VerifyAPI refuses every token whose audience
	// does not name it.
	APIResource string
	// People signs people in and checks their forms' CSRF tokens.
	People auth.People
	// LookupClient finds a client by ID (default st.Client); the client
	// registration layer passes one that also resolves client ID metadata
	// documents.
	LookupClient func(ctx context.Context, id string) (store.Client, error)
	Logger       *slog.Logger

	AccessTokenLifespan  time.Duration // default 1 h
	RefreshTokenLifespan time.Duration // default 30 days
	CodeLifespan         time.Duration // default 5 min
	// RefreshGrace is how long a rotated refresh token still works, so
	// concurrent refreshes do not look like reuse. Default 10 s.
	RefreshGrace time.Duration
	// Now is the clock for expiry and grace checks (default time.Now).
	Now func() time.Time
}

// Server is the authorization server.
type Server struct {
	st       store.Store
	opts     Options
	issuer   string
	resource string // normalized
	// apiResource is Options.APIResource, normalized.
	apiResource string
	provider    fosite.OAuth2Provider
	strategy    strategy
	storage     *storage
	log         *slog.Logger
	now         func() time.Time

	touchMu sync.Mutex
	touched map[string]time.Time
}

// Supported scopes.
var supportedScopes = []string{auth.ScopeRead, auth.ScopeWrite}

// maxForm bounds every request body this server reads.
const maxForm = 64 << 10

// New builds the server. The HMAC secret is the store's "oauth-hmac"
// server secret, so every node issues and checks the same tokens.
func New(st store.Store, opts Options) (*Server, error) {
	if opts.Issuer == "" {
		return nil, errors.New("oauth: Options.Issuer is required: give the public URL, e.g. https://foundry.example.com")
	}
	iss, err := url.Parse(opts.Issuer)
	if err != nil || (iss.Scheme != "https" && iss.Scheme != "http") || iss.Host == "" || iss.RawQuery != "" || iss.Fragment != "" {
		return nil, fmt.Errorf("oauth: Options.Issuer %q is not an http(s) URL without query or fragment", opts.Issuer)
	}
	opts.Issuer = strings.TrimRight(opts.Issuer, "/")
	if opts.Resource == "" {
		opts.Resource = opts.Issuer + "/mcp"
	}
	res := normalizeResource(opts.Resource)
	if res == "" {
		return nil, fmt.Errorf("oauth: Options.Resource %q is not an absolute URL", opts.Resource)
	}
	if opts.APIResource == "" {
		opts.APIResource = opts.Issuer + "/api"
	}
	apiRes := normalizeResource(opts.APIResource)
	if apiRes == "" {
		return nil, fmt.Errorf("oauth: Options.APIResource %q is not an absolute URL", opts.APIResource)
	}
	if opts.People == nil {
		return nil, errors.New("oauth: Options.People is required (the sign-in layer)")
	}
	if opts.LookupClient == nil {
		opts.LookupClient = st.Client
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.AccessTokenLifespan <= 0 {
		opts.AccessTokenLifespan = time.Hour
	}
	if opts.RefreshTokenLifespan <= 0 {
		opts.RefreshTokenLifespan = 30 * 24 * time.Hour
	}
	if opts.CodeLifespan <= 0 {
		opts.CodeLifespan = 5 * time.Minute
	}
	if opts.RefreshGrace <= 0 {
		opts.RefreshGrace = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// The secret is stored hex-encoded: server secrets are text.
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	stored, err := st.ServerSecret(context.Background(), "oauth-hmac", []byte(hex.EncodeToString(raw)))
	if err != nil {
		return nil, fmt.Errorf("oauth: server secret: %w", err)
	}
	secret, err := hex.DecodeString(string(stored))
	if err != nil || len(secret) < 32 {
		return nil, fmt.Errorf("oauth: the stored oauth-hmac server secret is not 32 hex-encoded bytes")
	}
	cfg := &fosite.Config{
		AccessTokenLifespan:   opts.AccessTokenLifespan,
		RefreshTokenLifespan:  opts.RefreshTokenLifespan,
		AuthorizeCodeLifespan: opts.CodeLifespan,
		GlobalSecret:          secret[:32],
		// PKCE S256 for every client; plain is refused.
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		// Refresh tokens without demanding offline_access.
		RefreshTokenScopes:  []string{},
		ScopeStrategy:       fosite.ExactScopeStrategy,
		ClientSecretsHasher: secretHasher{},
		SanitationWhiteList: storedForm,
		TokenURL:            opts.Issuer + "/token",
		AccessTokenIssuer:   opts.Issuer,
	}
	s := &Server{
		st: st, opts: opts, issuer: opts.Issuer, resource: res, apiResource: apiRes, log: opts.Logger, now: opts.Now,
		touched: map[string]time.Time{},
	}
	s.storage = &storage{st: st, lookup: opts.LookupClient, scopes: supportedScopes, aud: []string{opts.Resource, res}, grace: opts.RefreshGrace, now: opts.Now}
	s.strategy = newStrategy(&hmac.HMACStrategy{Config: cfg}, cfg)
	s.provider = compose.Compose(cfg, s.storage, s.strategy,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2PKCEFactory,
	)
	return s, nil
}

// Issuer is the server's issuer identifier (its public URL): what the
// protected resource metadata names in authorization_servers.
func (s *Server) Issuer() string { return s.issuer }

// Resource is the MCP endpoint's URL, the audience of every access token.
func (s *Server) Resource() string { return s.opts.Resource }

// Mount registers the server's routes on mux.
func (s *Server) Mount(mux *http.ServeMux) {
	meta := s.cors(http.HandlerFunc(s.metadata))
	paths := []string{"/.well-known/oauth-authorization-server"}
	for _, raw := range []string{s.opts.Resource, s.issuer} {
		if u, err := url.Parse(raw); err == nil {
			if p := strings.TrimRight(u.EscapedPath(), "/"); p != "" {
				paths = append(paths, paths[0]+p)
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		mux.Handle("GET "+p, meta)
		mux.Handle("OPTIONS "+p, meta)
	}
	mux.Handle("GET /authorize", s.safe(http.HandlerFunc(s.authorize)))
	mux.Handle("POST /authorize", s.safe(http.NewCrossOriginProtection().Handler(http.HandlerFunc(s.authorize))))
	mux.Handle("POST /token", s.safe(s.cors(http.HandlerFunc(s.token))))
	mux.Handle("OPTIONS /token", s.cors(http.NotFoundHandler()))
	mux.Handle("POST /revoke", s.safe(s.cors(http.HandlerFunc(s.revoke))))
	mux.Handle("OPTIONS /revoke", s.cors(http.NotFoundHandler()))
}

// safe turns a panic into a 500 for this request only.
func (s *Server) safe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "oauth: panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
				http.Error(w, "internal error", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// cors lets browser-based clients (the MCP Inspector) read metadata and
// call /token and /revoke: any origin, never with credentials.
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
		h.Set("Access-Control-Max-Age", "86400")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Metadata is the RFC 8414 document.
type Metadata struct {
	Issuer                                 string   `json:"issuer"`
	AuthorizationEndpoint                  string   `json:"authorization_endpoint"`
	TokenEndpoint                          string   `json:"token_endpoint"`
	RevocationEndpoint                     string   `json:"revocation_endpoint"`
	RegistrationEndpoint                   string   `json:"registration_endpoint"`
	ScopesSupported                        []string `json:"scopes_supported"`
	ResponseTypesSupported                 []string `json:"response_types_supported"`
	ResponseModesSupported                 []string `json:"response_modes_supported"`
	GrantTypesSupported                    []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported      []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported          []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseIssParameter      bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported      bool     `json:"client_id_metadata_document_supported"`
}

// Metadata answers the server's RFC 8414 metadata.
func (s *Server) Metadata() Metadata {
	methods := []string{"none", "client_secret_basic", "client_secret_post"}
	return Metadata{
		Issuer:                                 s.issuer,
		AuthorizationEndpoint:                  s.issuer + "/authorize",
		TokenEndpoint:                          s.issuer + "/token",
		RevocationEndpoint:                     s.issuer + "/revoke",
		RegistrationEndpoint:                   s.issuer + "/register",
		ScopesSupported:                        supportedScopes,
		ResponseTypesSupported:                 []string{"code"},
		ResponseModesSupported:                 []string{"query"},
		GrantTypesSupported:                    []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:      methods,
		RevocationEndpointAuthMethodsSupported: methods,
		CodeChallengeMethodsSupported:          []string{"S256"},
		AuthorizationResponseIssParameter:      true,
		ClientIDMetadataDocumentSupported:      true,
	}
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_ = json.NewEncoder(w).Encode(s.Metadata())
}

// errInvalidTarget is RFC 8707's refusal of a resource this server does
// not issue tokens for.
func errInvalidTarget(hint string) *fosite.RFC6749Error {
	return &fosite.RFC6749Error{
		ErrorField:       "invalid_target",
		DescriptionField: "The requested resource is invalid, missing, unknown, or malformed.",
		HintField:        hint,
		CodeField:        http.StatusBadRequest,
	}
}

// checkResource checks the resource parameters of a request: at most one
// (required when required), equal to the MCP endpoint's URL.
func (s *Server) checkResource(form url.Values, required bool) error {
	vals := form["resource"]
	switch {
	case len(vals) == 0 && required:
		return errInvalidTarget(fmt.Sprintf("resource: add resource=%s (RFC 8707), the MCP endpoint these tokens are for.", s.opts.Resource))
	case len(vals) > 1:
		return errInvalidTarget(fmt.Sprintf("resource: give it once, as %s.", s.opts.Resource))
	case len(vals) == 1 && normalizeResource(vals[0]) != s.resource:
		return errInvalidTarget(fmt.Sprintf("resource: this server issues tokens only for %s.", s.opts.Resource))
	}
	return nil
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	ctx := r.Context()
	if err := r.ParseForm(); err != nil {
		s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(&session{}), fosite.ErrInvalidRequest.WithHint("The body is not a form of at most 64 KiB."))
		return
	}
	// RFC 8707: tokens are only ever for the MCP endpoint, so a resource
	// other than it can never be the granted one. Checked first, so a
	// refused request consumes nothing.
	if err := s.checkResource(r.PostForm, false); err != nil {
		s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(&session{}), err)
		return
	}
	ar, err := s.provider.NewAccessRequest(ctx, r, &session{})
	if err != nil {
		s.accessError(ctx, w, ar, err)
		return
	}
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if errors.Is(err, fosite.ErrInvalidatedAuthorizeCode) {
		// Two exchanges raced with one code and this one lost: it is told
		// what a reused code is told, not that the server failed.
		err = fosite.ErrInvalidGrant.WithHint("The authorization code has already been used.")
	}
	if err != nil {
		s.accessError(ctx, w, ar, err)
		return
	}
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
}

func (s *Server) accessError(ctx context.Context, w http.ResponseWriter, ar fosite.AccessRequester, err error) {
	if rfc := fosite.ErrorToRFC6749Error(err); rfc.CodeField >= 500 {
		s.log.ErrorContext(ctx, "oauth: token endpoint", "err", err, "debug", rfc.DebugField)
	} else {
		reqlog.NoteRefusal(w, reqlog.DoorOAuth, rfc.ErrorField)
	}
	if ar == nil {
		ar = fosite.NewAccessRequest(&session{})
	}
	s.provider.WriteAccessError(ctx, w, ar, err)
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	ctx := r.Context()
	err := s.provider.NewRevocationRequest(ctx, r)
	if err != nil {
		if rfc := fosite.ErrorToRFC6749Error(err); rfc.CodeField >= 500 {
			s.log.ErrorContext(r.Context(), "oauth: revocation", "err", err, "debug", rfc.DebugField)
		}
	}
	s.provider.WriteRevocationResponse(ctx, w, err)
}

// issWriter adds RFC 9207's iss to the query of an authorization response
// redirected to the client (fosite writes it; this is the one place every
// success and error redirect passes).
type issWriter struct {
	http.ResponseWriter
	iss string
}

func (w issWriter) WriteHeader(code int) {
	if code >= 300 && code < 400 {
		if loc := w.Header().Get("Location"); loc != "" {
			if u, err := url.Parse(loc); err == nil {
				// The response is in the fragment when fosite answers a
				// fragment response mode (only to refuse it).
				// A request without state gets no state back (fosite
				// writes an empty one).
				if frag, err := url.ParseQuery(u.Fragment); err == nil && u.Fragment != "" {
					frag.Set("iss", w.iss)
					if frag.Get("state") == "" {
						frag.Del("state")
					}
					u.Fragment = frag.Encode()
				} else {
					q := u.Query()
					q.Set("iss", w.iss)
					if q.Get("state") == "" {
						q.Del("state")
					}
					u.RawQuery = q.Encode()
				}
				w.Header().Set("Location", u.String())
			}
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w issWriter) Write(b []byte) (int, error) { return w.ResponseWriter.Write(b) }
