package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/oauth/clients"
	"foundry/internal/store"
	"foundry/internal/store/storetest"
)

// registerServer serves the registry's routes on a real 127.0.0.1 server.
func registerServer(t *testing.T, reg *clients.Registry) string {
	t.Helper()
	mux := http.NewServeMux()
	reg.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func post(t *testing.T, url, contentType string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/register", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a.body); err != nil {
			t.Fatalf("%s answered %d with a body that is not a JSON object: %q", req.URL, resp.StatusCode, raw)
		}
	}
	return a
}

func registerJSON(t *testing.T, url string, v any) answer {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return post(t, url, "application/json", b)
}

var inspector = map[string]any{
	"redirect_uris":              []string{"http://localhost:6274/oauth/callback", "http://localhost:6274/oauth/callback/debug"},
	"token_endpoint_auth_method": "none",
	"grant_types":                []string{"authorization_code", "refresh_token"},
	"response_types":             []string{"code"},
	"client_name":                "MCP Inspector",
	"client_uri":                 "https://github.com/modelcontextprotocol/inspector",
	"contacts":                   []string{"someone@example.com"}, // unknown here: ignored, not stored
}

// TestInspectorRegistrationIsStoredAndLookedUp: the registration the MCP
// Inspector sends is accepted (201, the metadata echoed with a client_id
// and no secret), and Lookup finds the stored public client, with only the
// known metadata kept.
func TestInspectorRegistrationIsStoredAndLookedUp(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		reg := clients.New(st, clients.Options{})
		url := registerServer(t, reg)
		a := registerJSON(t, url, inspector)
		if a.status != http.StatusCreated {
			t.Fatalf("status %d, body %s", a.status, a.raw)
		}
		if got := a.header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Errorf("Access-Control-Allow-Origin %q, want *", got)
		}
		if ct := a.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		id, _ := a.body["client_id"].(string)
		if !strings.HasPrefix(id, "client_") {
			t.Fatalf("client_id %q", id)
		}
		if _, ok := a.body["client_secret"]; ok {
			t.Errorf("a public client got a secret: %s", a.raw)
		}
		if issued, _ := a.body["client_id_issued_at"].(float64); time.Since(time.Unix(int64(issued), 0)).Abs() > time.Hour {
			t.Errorf("client_id_issued_at %v", a.body["client_id_issued_at"])
		}
		for k, want := range map[string]any{
			"client_name": "MCP Inspector", "token_endpoint_auth_method": "none",
			"client_uri": "https://github.com/modelcontextprotocol/inspector",
		} {
			if a.body[k] != want {
				t.Errorf("%s = %v, want %v", k, a.body[k], want)
			}
		}
		c, err := reg.Lookup(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if c.ID != id || c.Kind != store.ClientDynamic || c.SecretHash != "" || c.Name != "MCP Inspector" {
			t.Errorf("looked up %+v", c)
		}
		if !slices.Equal(c.RedirectURIs, inspector["redirect_uris"].([]string)) {
			t.Errorf("redirect URIs %v", c.RedirectURIs)
		}
		if !slices.Equal(c.GrantTypes, []string{"authorization_code", "refresh_token"}) {
			t.Errorf("grant types %v", c.GrantTypes)
		}
		if !slices.Equal(c.Scopes, []string{auth.ScopeRead, auth.ScopeWrite}) {
			t.Errorf("scopes %v: a client that names none may ask for each", c.Scopes)
		}
		var meta map[string]any
		if err := json.Unmarshal(c.Metadata, &meta); err != nil {
			t.Fatal(err)
		}
		if _, ok := meta["contacts"]; ok {
			t.Errorf("an unknown field was stored: %s", c.Metadata)
		}
		if meta["client_uri"] != inspector["client_uri"] {
			t.Errorf("stored metadata %s lacks client_uri", c.Metadata)
		}
		if _, err := reg.Lookup(context.Background(), "cli_unknown"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an unknown client ID: %v, want store.ErrNotFound", err)
		}
	})
}

// TestConfidentialRegistrationStoresOnlyTheSecretsHash: a client that asks
// for client_secret_basic (or _post) gets a secret once; the store holds
// its hash and nowhere the secret.
func TestConfidentialRegistrationStoresOnlyTheSecretsHash(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		reg := clients.New(st, clients.Options{})
		url := registerServer(t, reg)
		for _, method := range []string{"client_secret_basic", "client_secret_post"} {
			a := registerJSON(t, url, map[string]any{
				"redirect_uris": []string{"https://app.example.com/callback"}, "token_endpoint_auth_method": method, "scope": "osfoundry:read",
			})
			if a.status != http.StatusCreated {
				t.Fatalf("%s: status %d %s", method, a.status, a.raw)
			}
			secret, _ := a.body["client_secret"].(string)
			if !strings.HasPrefix(secret, clients.SecretPrefix) || len(secret) < 40 {
				t.Fatalf("%s: secret %q", method, secret)
			}
			if exp, ok := a.body["client_secret_expires_at"].(float64); !ok || exp != 0 {
				t.Errorf("%s: client_secret_expires_at %v, want 0", method, a.body["client_secret_expires_at"])
			}
			c, err := st.Client(context.Background(), a.body["client_id"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if c.SecretHash != auth.HashToken(secret) {
				t.Errorf("%s: stored hash %q is not the secret's", method, c.SecretHash)
			}
			if strings.Contains(c.SecretHash+string(c.Metadata)+c.Name, secret) {
				t.Errorf("%s: the secret itself is stored", method)
			}
			if !slices.Equal(c.Scopes, []string{auth.ScopeRead}) {
				t.Errorf("%s: scopes %v, want only read", method, c.Scopes)
			}
			if c.Name != "app.example.com" {
				t.Errorf("%s: an unnamed client is listed as %q, want its redirect host", method, c.Name)
			}
		}
	})
}

// TestRegistrationRefusalsNameTheField: each malformed registration is a
// 400 with the RFC 7591 error code, and error_description names the field;
// nothing is stored.
func TestRegistrationRefusalsNameTheField(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		reg := clients.New(st, clients.Options{RegisterRate: -1})
		url := registerServer(t, reg)
		good := []string{"http://127.0.0.1/cb"}
		with := func(kv ...any) map[string]any {
			m := map[string]any{"redirect_uris": good}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}
		many := make([]string, 21)
		for i := range many {
			many[i] = "https://app.example.com/cb/" + strconv.Itoa(i)
		}
		cases := []struct {
			name  string
			body  any
			code  string
			field string
		}{
			{"no redirect_uris", map[string]any{"client_name": "x"}, "invalid_redirect_uri", "redirect_uris"},
			{"empty redirect_uris", with("redirect_uris", []string{}), "invalid_redirect_uri", "redirect_uris"},
			{"redirect_uris not a list", with("redirect_uris", "https://app.example.com/cb"), "invalid_redirect_uri", "redirect_uris"},
			{"too many redirect_uris", with("redirect_uris", many), "invalid_redirect_uri", "redirect_uris"},
			{"relative redirect", with("redirect_uris", []string{"http://127.0.0.1/ok", "/callback"}), "invalid_redirect_uri", "redirect_uris[1]"},
			{"fragment", with("redirect_uris", []string{"https://app.example.com/cb#x"}), "invalid_redirect_uri", "redirect_uris[0]"},
			{"http not loopback", with("redirect_uris", []string{"http://app.example.com/cb"}), "invalid_redirect_uri", "redirect_uris[0]"},
			{"http on a loopback look-alike", with("redirect_uris", []string{"http://127.0.0.1.example.com/cb"}), "invalid_redirect_uri", "redirect_uris[0]"},
			{"javascript", with("redirect_uris", []string{"javascript:alert(1)"}), "invalid_redirect_uri", "redirect_uris[0]"},
			{"data", with("redirect_uris", []string{"data:text/html,hi"}), "invalid_redirect_uri", "redirect_uris[0]"},
			{"user info", with("redirect_uris", []string{"https://a:b@app.example.com/cb"}), "invalid_redirect_uri", "redirect_uris[0]"},
			{"space", with("redirect_uris", []string{"https://app.example.com/c b"}), "invalid_redirect_uri", "redirect_uris[0]"},
			{"https without host", with("redirect_uris", []string{"https:///cb"}), "invalid_redirect_uri", "redirect_uris[0]"},
			{"auth method", with("token_endpoint_auth_method", "private_key_jwt"), "invalid_client_metadata", "token_endpoint_auth_method"},
			{"auth method type", with("token_endpoint_auth_method", 3), "invalid_client_metadata", "token_endpoint_auth_method"},
			{"grant type", with("grant_types", []string{"authorization_code", "client_credentials"}), "invalid_client_metadata", "grant_types[1]"},
			{"refresh only", with("grant_types", []string{"refresh_token"}), "invalid_client_metadata", "grant_types"},
			{"response type", with("response_types", []string{"token"}), "invalid_client_metadata", "response_types[0]"},
			{"long name", with("client_name", strings.Repeat("é", 201)), "invalid_client_metadata", "client_name"},
			{"bidi name", with("client_name", "Claude\u202egnp.exe"), "invalid_client_metadata", "client_name"},
			{"control name", with("client_name", "a\x07b"), "invalid_client_metadata", "client_name"},
			{"name type", with("client_name", []string{"x"}), "invalid_client_metadata", "client_name"},
			{"client_uri http", with("client_uri", "http://app.example.com"), "invalid_client_metadata", "client_uri"},
			{"logo_uri javascript", with("logo_uri", "javascript:alert(1)"), "invalid_client_metadata", "logo_uri"},
			{"scope", with("scope", "osfoundry:read admin"), "invalid_client_metadata", "scope"},
			{"software_id", with("software_id", strings.Repeat("x", 201)), "invalid_client_metadata", "software_id"},
			{"array body", []any{inspector}, "invalid_client_metadata", "body"},
			{"null body", nil, "invalid_client_metadata", "body"},
		}
		for _, c := range cases {
			a := registerJSON(t, url, c.body)
			if a.status != http.StatusBadRequest || a.body["error"] != c.code {
				t.Errorf("%s: %d %s, want 400 %s", c.name, a.status, a.raw, c.code)
				continue
			}
			desc, _ := a.body["error_description"].(string)
			if !strings.HasPrefix(desc, c.field+": ") {
				t.Errorf("%s: error_description %q does not name %s", c.name, desc, c.field)
			}
		}
		for _, raw := range []string{`{"redirect_uris":`, `{"redirect_uris":["http://127.0.0.1/cb"]} {}`, "\xff"} {
			if a := post(t, url, "application/json", []byte(raw)); a.status != 400 || !strings.HasPrefix(a.body["error_description"].(string), "body: ") {
				t.Errorf("body %q: %d %s", raw, a.status, a.raw)
			}
		}
		if a := post(t, url, "text/plain", []byte(`{"redirect_uris":["http://127.0.0.1/cb"]}`)); a.status != 400 || !strings.Contains(a.raw, "Content-Type") {
			t.Errorf("text/plain: %d %s", a.status, a.raw)
		}
		if cs, _ := st.Clients(context.Background()); len(cs) != 0 {
			t.Errorf("refused registrations stored %d clients", len(cs))
		}
		// What is accepted: a private-use scheme, [::1] and localhost on any
		// port, offline_access (dropped), duplicates dropped.
		a := registerJSON(t, url, map[string]any{
			"redirect_uris": []string{"com.example.app:/oauth/cb", "http://[::1]:8080/cb", "http://LOCALHOST/cb", "cursor://anysphere.cursor-mcp/oauth/callback", "http://[::1]:8080/cb"},
			"scope":         "offline_access osfoundry:write osfoundry:read osfoundry:write",
		})
		if a.status != 201 {
			t.Fatalf("%d %s", a.status, a.raw)
		}
		if a.body["scope"] != "osfoundry:read osfoundry:write" || len(a.body["redirect_uris"].([]any)) != 4 {
			t.Errorf("registered %s", a.raw)
		}
	})
}

// TestRegistrationBodyTooLarge: a body over 64 KiB is refused with 413 and
// a message, and nothing is stored.
func TestRegistrationBodyTooLarge(t *testing.T) {
	st := openSQLite(t)
	url := registerServer(t, clients.New(st, clients.Options{}))
	body := []byte(`{"redirect_uris":["http://127.0.0.1/cb"],"client_name":"` + strings.Repeat("a", clients.MaxBody) + `"}`)
	a := post(t, url, "application/json", body)
	if a.status != http.StatusRequestEntityTooLarge || !strings.Contains(a.body["error_description"].(string), "64 KiB") {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	if cs, _ := st.Clients(context.Background()); len(cs) != 0 {
		t.Errorf("stored %d clients", len(cs))
	}
}

// TestRegistrationIsRateLimitedPerAddress: past the burst an address gets
// 429 with Retry-After and an error body; another address does not; the
// bucket refills with time; IPv6 addresses count per /64.
func TestRegistrationIsRateLimitedPerAddress(t *testing.T) {
	st := openSQLite(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	reg := clients.New(st, clients.Options{RegisterRate: 6, RegisterBurst: 2, Now: func() time.Time { return now }})
	url := registerServer(t, reg)
	body := []byte(`{"redirect_uris":["http://127.0.0.1/cb"]}`)
	for i := range 2 {
		if a := post(t, url, "application/json", body); a.status != 201 {
			t.Fatalf("registration %d: %d %s", i, a.status, a.raw)
		}
	}
	a := post(t, url, "application/json", body)
	if a.status != http.StatusTooManyRequests || a.body["error"] != "rate_limited" {
		t.Fatalf("third registration: %d %s", a.status, a.raw)
	}
	if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra < 1 || ra > 600 {
		t.Errorf("Retry-After %q: 6 an hour is one each 600 s", a.header.Get("Retry-After"))
	}
	// Directly, to speak from other addresses.
	from := func(addr string) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/register", bytes.NewReader(body))
		req.RemoteAddr = addr
		reg.Register(rec, req)
		return rec.Code
	}
	if code := from("192.0.2.7:1234"); code != 201 {
		t.Errorf("another address: %d", code)
	}
	for i, want := range []int{201, 201, 429} {
		if code := from("[2001:db8:1:2::" + strconv.Itoa(i+1) + "]:1234"); code != want {
			t.Errorf("IPv6 address %d of one /64: %d, want %d", i, code, want)
		}
	}
	if code := from("[2001:db8:1:3::1]:1234"); code != 201 {
		t.Errorf("another /64: %d", code)
	}
	now = now.Add(11 * time.Minute)
	if a := post(t, url, "application/json", body); a.status != 201 {
		t.Errorf("after the bucket refilled: %d %s", a.status, a.raw)
	}
}

// TestRegisterCORSAndMethods: the browser preflight is answered for every
// origin, and a method other than POST is refused.
func TestRegisterCORSAndMethods(t *testing.T) {
	url := registerServer(t, clients.New(openSQLite(t), clients.Options{}))
	req, _ := http.NewRequest(http.MethodOptions, url+"/register", nil)
	req.Header.Set("Origin", "http://localhost:6274")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	a := do(t, req)
	if a.status != http.StatusNoContent || a.header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(a.header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(a.header.Get("Access-Control-Allow-Headers")), "content-type") {
		t.Errorf("preflight: %d %v", a.status, a.header)
	}
	req, _ = http.NewRequest(http.MethodGet, url+"/register", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /register: %d", resp.StatusCode)
	}
}

// TestUnusedDynamicClientsArePurged: Prune deletes a dynamic client no one
// connected once it is older than a day, and keeps a connected one and an
// operator's client.
func TestUnusedDynamicClientsArePurged(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		url := registerServer(t, clients.New(st, clients.Options{RegisterRate: -1}))
		unused := registerJSON(t, url, inspector).body["client_id"].(string)
		used := registerJSON(t, url, inspector).body["client_id"].(string)
		added, _, err := clients.Add(ctx, st, clients.Spec{Name: "CI", RedirectURIs: []string{"http://127.0.0.1/cb"}})
		if err != nil {
			t.Fatal(err)
		}
		ws := storetest.Seed(t, st)
		users, _ := st.Users(ctx, ws)
		if _, err := st.PutConnection(ctx, store.Connection{ID: store.NewID("conn"), Workspace: ws, User: users[0].ID, Client: used,
			Scopes: []string{auth.ScopeRead}, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Prune(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Client(ctx, unused); err != nil {
			t.Fatalf("a client an hour old was purged: %v", err)
		}
		rep, err := st.Prune(ctx, time.Now().Add(25*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Client(ctx, unused); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an unused dynamic client a day old is still there (%v), prune %+v", err, rep)
		}
		for _, id := range []string{used, added.ID} {
			if _, err := st.Client(ctx, id); err != nil {
				t.Errorf("client %s was purged: %v", id, err)
			}
		}
	})
}
