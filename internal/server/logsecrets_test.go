package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"foundry/internal/logtest"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
)

// secretTap records every secret that crosses it: Authorization headers
// sent, cookies set, and the tokens the token endpoint answers.
type secretTap struct {
	base    http.RoundTripper
	mu      sync.Mutex
	secrets map[string]bool
}

func (s *secretTap) add(v string) {
	if len(v) < 8 {
		return
	}
	s.mu.Lock()
	s.secrets[v] = true
	s.mu.Unlock()
}

func (s *secretTap) RoundTrip(r *http.Request) (*http.Response, error) {
	if a := r.Header.Get("Authorization"); a != "" {
		s.add(a)
		_, secret, _ := strings.Cut(a, " ")
		s.add(secret)
	}
	resp, err := s.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	for _, c := range resp.Cookies() {
		s.add(c.Value)
	}
	if strings.HasSuffix(r.URL.Path, "/token") || strings.HasSuffix(r.URL.Path, "/register") {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		var m map[string]any
		json.Unmarshal(raw, &m)
		for _, k := range []string{"access_token", "refresh_token", "client_secret"} {
			if v, ok := m[k].(string); ok {
				s.add(v)
			}
		}
	}
	return resp, nil
}

// tokenShaped is anything that looks like one of Foundry's secrets: a
// personal access token, an OAuth access or refresh token, a code.
var tokenShaped = regexp.MustCompile(`fdy(at|rt|ac)?_[A-Za-z0-9_-]{12,}`)

// TestNoSecretInLogs runs sign-ins (wrong password, right one), personal
// access token calls over MCP and REST, and a whole OAuth connection
// (registration, sign-in, consent, code exchange, calls) with
// the server logging at debug level, and finds no password, token,
// cookie or Authorization value in any log line.
func TestNoSecretInLogs(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	o := startOAuth(t, server.Config{Logger: jsonLogs(&logs), AccessTokenLifespan: 5e9})
	tap := &secretTap{base: http.DefaultTransport, secrets: map[string]bool{}}

	// Sign-ins on the real form.
	wrong := "wrong-password-that-is-long"
	b := newBrowser(t, "")
	b.c.Transport = tap
	if p := b.submit(b.get(o.URL+"/signin"), "", map[string]string{"email": o.Owner.User.Email, "password": wrong}); p.Status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", p.Status)
	}
	if p := b.submit(b.get(o.URL+"/signin"), "", map[string]string{"email": o.Owner.User.Email, "password": ownerPassword}); p.Status != http.StatusOK {
		t.Fatalf("sign-in: %d", p.Status)
	}

	// A personal access token over MCP and REST, and a forged one.
	pat := o.WriteToken(t)
	tap.add(pat)
	cs := servertest.Connect(t, o.URL+"/mcp", pat, "", tap)
	if r := servertest.MustCall(t, cs, "list_notes", map[string]any{}); r.IsError {
		t.Fatal(r.Text)
	}
	for _, secret := range []string{pat, pat[:len(pat)-2] + "zz"} {
		tap.add(secret)
		req, _ := http.NewRequest(http.MethodGet, o.URL+"/api/notes", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := (&http.Client{Transport: tap}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	// An OAuth client, connected by URL alone.
	redirect := "http://127.0.0.1:1/callback"
	o.browser = newBrowser(t, redirect)
	o.browser.c.Transport = tap
	ocs, _ := connectOAuth(t, o, &sdkauth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &sdkauth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Log check", RedirectURIs: []string{redirect},
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: o.fetcher(t, redirect),
		Client:                   &http.Client{Transport: tap},
	})
	if res, err := callTool(ocs, "list_notes", map[string]any{}); err != nil || res.IsError {
		t.Fatalf("list_notes over OAuth: %v %+v", err, res)
	}

	s := logs.String()
	lines := logLines(t, &logs)
	if len(lines) == 0 || !strings.Contains(s, "sign-in refused") || !strings.Contains(s, "signed in") {
		t.Fatalf("the log does not hold the sign-ins:\n%s", s)
	}
	tap.mu.Lock()
	secrets := append([]string{ownerPassword, wrong}, mapKeys(tap.secrets)...)
	tap.mu.Unlock()
	if len(secrets) < 6 {
		t.Fatalf("only %d secrets seen crossing the wire; the test saw too little", len(secrets))
	}
	for _, secret := range secrets {
		if strings.Contains(s, secret) {
			t.Errorf("the log holds a secret (%d bytes, starting %q)", len(secret), secret[:4])
		}
	}
	if m := tokenShaped.FindString(s); m != "" {
		t.Errorf("the log holds something token-shaped (%d bytes, starting %q)", len(m), m[:4])
	}
	for _, word := range []string{"Bearer ", "password=", "Cookie"} {
		if strings.Contains(s, word) {
			t.Errorf("the log holds %q", word)
		}
	}
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
