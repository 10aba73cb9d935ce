package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	fauth "foundry/internal/auth"
)

// TestGoSDKClient: the go-sdk's client-side OAuth, as a real MCP client,
// follows a 401 from a bearer-protected MCP endpoint to this server's
// metadata, authorizes with PKCE (signing in and consenting through the
// real form), exchanges the code (checking iss), and calls a tool. After
// the connection is revoked the next call is refused and the client
// authorizes again.
func TestGoSDKClient(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	ctx := context.Background()

	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct {
		User string `json:"user"`
	}, error) {
		out := struct {
			User string `json:"user"`
		}{}
		if ti := req.Extra.TokenInfo; ti != nil {
			out.User = ti.UserID
		}
		return nil, out, nil
	})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		p, err := e.srv.Verify(ctx, token)
		if errors.Is(err, fauth.ErrInvalidToken) {
			return nil, auth.ErrInvalidToken
		}
		if err != nil {
			return nil, err
		}
		return &auth.TokenInfo{Scopes: p.Scopes, UserID: p.User, Expiration: time.Now().Add(time.Minute)}, nil
	}
	prm := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: e.resource, AuthorizationServers: []string{e.url}, ScopesSupported: []string{fauth.ScopeRead, fauth.ScopeWrite},
	})
	e.mux.Handle("/.well-known/oauth-protected-resource/mcp", prm)
	e.mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: e.url + "/.well-known/oauth-protected-resource/mcp",
	})(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))

	var fetched atomic.Int32
	fetcher := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		fetched.Add(1)
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, err
		}
		if u.Host != e.http.Listener.Addr().String() || u.Path != "/authorize" {
			t.Errorf("authorization URL %s is not this server's /authorize", u)
		}
		loc := e.submit(e.consent(u.Query()), "approve")
		q := loc.Query()
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      &oauthex.ClientCredentials{ClientID: e.client.ID},
		RedirectURL:              e.client.RedirectURIs[0],
		AuthorizationCodeFetcher: fetcher,
	})
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.resource, OAuthHandler: h}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil || res.IsError {
		t.Fatalf("tool call: %+v %v", res, err)
	}
	if m, _ := res.StructuredContent.(map[string]any); m["user"] != e.user.ID {
		t.Fatalf("tool saw %v, want user %s", res.StructuredContent, e.user.ID)
	}
	if n := fetched.Load(); n != 1 {
		t.Fatalf("authorized %d times", n)
	}
	conns, err := e.st.Connections(ctx, e.ws)
	if err != nil || len(conns) != 1 {
		t.Fatalf("connections %+v %v", conns, err)
	}
	if err := e.st.RevokeConnection(ctx, e.ws, conns[0].ID); err != nil {
		t.Fatal(err)
	}
	// The revoked token is refused (401); the client authorizes again.
	cs2, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.resource, OAuthHandler: h}, nil)
	if err == nil {
		defer cs2.Close()
		_, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	}
	if n := fetched.Load(); n != 2 {
		t.Fatalf("after revocation the client authorized %d times in all (err %v), want 2", n, err)
	}
}
