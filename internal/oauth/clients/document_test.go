package clients_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"foundry/internal/oauth/clients"
	"foundry/internal/store"
)

// docServer is an https server on 127.0.0.1 that serves metadata
// documents, counting the requests per path.
type docServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
	// serve answers a path; nil: 404.
	serve map[string]func(w http.ResponseWriter, id string)
}

func newDocServer(t *testing.T) *docServer {
	t.Helper()
	d := &docServer{hits: map[string]int{}, serve: map[string]func(http.ResponseWriter, string){}}
	d.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.hits[r.URL.Path]++
		f := d.serve[r.URL.Path]
		d.mu.Unlock()
		if r.Header.Get("Cookie") != "" {
			http.Error(w, "a cookie was sent", http.StatusBadRequest)
			return
		}
		if f == nil {
			http.NotFound(w, r)
			return
		}
		f(w, d.srv.URL+r.URL.Path)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *docServer) handle(path string, f func(w http.ResponseWriter, id string)) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.serve[path] = f
	return d.srv.URL + path
}

func (d *docServer) count(path string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hits[path]
}

// trusting is the guarded client that trusts the test server's certificate
// and, through the test-only Allow hook, loopback addresses.
func (d *docServer) trusting() *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(d.srv.Certificate())
	return clients.NewHTTPClient(clients.Guard{RootCAs: pool, Allow: func(ap netip.AddrPort) bool { return ap.Addr().IsLoopback() }})
}

func jsonDoc(header map[string]string, doc func(id string) map[string]any) func(http.ResponseWriter, string) {
	return func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		for k, v := range header {
			w.Header().Set(k, v)
		}
		json.NewEncoder(w).Encode(doc(id))
	}
}

func goodDoc(id string) map[string]any {
	return map[string]any{
		"client_id":                  id,
		"client_name":                "Example Agent",
		"client_uri":                 "https://app.example.com",
		"redirect_uris":              []string{"https://app.example.com/oauth/callback", "http://127.0.0.1/callback"},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
		"jwks_uri":                   "https://app.example.com/jwks", // not used here: ignored
	}
}

// TestMetadataDocumentBecomesAClient: a valid document fetched over https
// is a public client of kind metadata with its redirect URIs; a second
// lookup within the cache time does not fetch again, one after it does.
func TestMetadataDocumentBecomesAClient(t *testing.T) {
	d := newDocServer(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st := openSQLite(t)
	reg := clients.New(st, clients.Options{HTTPClient: d.trusting(), Now: func() time.Time { return now }})
	id := d.handle("/oauth/client.json", jsonDoc(nil, goodDoc))
	ctx := context.Background()
	c, err := reg.Lookup(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != id || c.Kind != store.ClientMetadata || c.SecretHash != "" || c.Name != "Example Agent" {
		t.Errorf("client %+v", c)
	}
	if len(c.RedirectURIs) != 2 || c.RedirectURIs[0] != "https://app.example.com/oauth/callback" {
		t.Errorf("redirect URIs %v", c.RedirectURIs)
	}
	var meta map[string]any
	json.Unmarshal(c.Metadata, &meta)
	if meta["client_uri"] != "https://app.example.com" || meta["jwks_uri"] != nil {
		t.Errorf("metadata %s", c.Metadata)
	}
	now = now.Add(9 * time.Minute)
	if _, err := reg.Lookup(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n := d.count("/oauth/client.json"); n != 1 {
		t.Errorf("fetched %d times within the cache time, want 1", n)
	}
	now = now.Add(2 * time.Minute)
	if _, err := reg.Lookup(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n := d.count("/oauth/client.json"); n != 2 {
		t.Errorf("fetched %d times after the cache time, want 2", n)
	}
	// It is not a stored client: open registration's store is not grown
	// by fetching documents.
	if cs, _ := st.Clients(ctx); len(cs) != 0 {
		t.Errorf("fetching a document stored %d clients", len(cs))
	}
}

// TestMetadataDocumentCacheControl: max-age is honoured within [1 min,
// 24 h]; no-store is cached the least.
func TestMetadataDocumentCacheControl(t *testing.T) {
	d := newDocServer(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	reg := clients.New(openSQLite(t), clients.Options{HTTPClient: d.trusting(), Now: func() time.Time { return now }})
	ctx := context.Background()
	cases := []struct {
		cc            string
		cached, fresh time.Duration // still cached after, fetched again after
	}{
		{"max-age=7200", 119 * time.Minute, 121 * time.Minute},
		{"public, max-age=5", 50 * time.Second, 61 * time.Second},
		{"max-age=999999", 23 * time.Hour, 24*time.Hour + time.Second},
		{"no-store", 50 * time.Second, 61 * time.Second},
	}
	for i, c := range cases {
		path := "/doc" + strconv.Itoa(i)
		id := d.handle(path, jsonDoc(map[string]string{"Cache-Control": c.cc}, goodDoc))
		start := now
		for _, step := range []struct {
			at   time.Duration
			want int
		}{{0, 1}, {c.cached, 1}, {c.fresh, 2}} {
			now = start.Add(step.at)
			if _, err := reg.Lookup(ctx, id); err != nil {
				t.Fatal(err)
			}
			if n := d.count(path); n != step.want {
				t.Errorf("Cache-Control %q: after %s fetched %d times, want %d", c.cc, step.at, n, step.want)
			}
		}
	}
}

// TestMetadataDocumentRefusals: each document or answer that cannot be a
// client is refused with an error that says why.
func TestMetadataDocumentRefusals(t *testing.T) {
	d := newDocServer(t)
	reg := clients.New(openSQLite(t), clients.Options{HTTPClient: d.trusting()})
	edit := func(f func(id string, m map[string]any)) func(string) map[string]any {
		return func(id string) map[string]any { m := goodDoc(id); f(id, m); return m }
	}
	d.handle("/target", jsonDoc(nil, goodDoc))
	cases := []struct {
		name, path string
		serve      func(http.ResponseWriter, string)
		want       string
	}{
		{"client_id mismatch", "/mismatch", jsonDoc(nil, edit(func(id string, m map[string]any) { m["client_id"] = id + "x" })), "client_id must be exactly the URL"},
		{"client_id missing", "/noid", jsonDoc(nil, edit(func(_ string, m map[string]any) { delete(m, "client_id") })), "client_id"},
		{"redirect_uris missing", "/noredirect", jsonDoc(nil, edit(func(_ string, m map[string]any) { delete(m, "redirect_uris") })), "redirect_uris: is required"},
		{"redirect with fragment", "/fragment", jsonDoc(nil, edit(func(_ string, m map[string]any) { m["redirect_uris"] = []string{"https://app.example.com/cb#f"} })), "redirect_uris[0]"},
		{"relative redirect", "/relative", jsonDoc(nil, edit(func(_ string, m map[string]any) { m["redirect_uris"] = []string{"/cb"} })), "redirect_uris[0]"},
		{"secret method", "/secret", jsonDoc(nil, edit(func(_ string, m map[string]any) { m["token_endpoint_auth_method"] = "client_secret_basic" })), "cannot carry a secret"},
		{"grant type", "/grant", jsonDoc(nil, edit(func(_ string, m map[string]any) { m["grant_types"] = []string{"implicit"} })), "grant_types[0]"},
		{"bidi name", "/bidi", jsonDoc(nil, edit(func(_ string, m map[string]any) { m["client_name"] = "Good\u202eliveD" })), "client_name"},
		{"long name", "/long", jsonDoc(nil, edit(func(_ string, m map[string]any) { m["client_name"] = strings.Repeat("n", 201) })), "client_name"},
		{"not an object", "/array", func(w http.ResponseWriter, _ string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`["x"]`))
		}, "not a JSON object"},
		{"not JSON", "/html", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/html")
			json.NewEncoder(w).Encode(goodDoc(id))
		}, "application/json"},
		{"oversize", "/big", jsonDoc(nil, edit(func(_ string, m map[string]any) { m["padding"] = strings.Repeat("p", clients.MaxBody) })), "64 KiB"},
		{"oversize without a length", "/bigstream", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"client_id":` + strconv.Quote(id) + `,"padding":"`))
			for range 80 {
				w.Write([]byte(strings.Repeat("p", 1024)))
				w.(http.Flusher).Flush()
			}
			w.Write([]byte(`"}`))
		}, "64 KiB"},
		{"redirect", "/moved", func(w http.ResponseWriter, _ string) {
			w.Header().Set("Location", "/target")
			w.WriteHeader(http.StatusFound)
		}, "redirects are not followed"},
		{"not found", "/missing", nil, "HTTP 404"},
	}
	for _, c := range cases {
		id := d.srv.URL + c.path
		if c.serve != nil {
			d.handle(c.path, c.serve)
		}
		_, err := reg.Lookup(context.Background(), id)
		var de *clients.DocumentError
		if !errors.As(err, &de) || !errors.Is(err, clients.ErrDocument) || !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want a DocumentError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "client_id "+id) {
			t.Errorf("%s: %q does not say %q", c.name, err, c.want)
		}
	}
	if n := d.count("/target"); n != 0 {
		t.Errorf("the redirect's target was fetched %d times", n)
	}
	// A failure is remembered briefly: no second fetch right away.
	before := d.count("/mismatch")
	reg.Lookup(context.Background(), d.srv.URL+"/mismatch")
	if n := d.count("/mismatch"); n != before {
		t.Errorf("a failed document was fetched again at once (%d → %d)", before, n)
	}
}

// TestClientIDURLRefusals: client IDs that are not https URLs fit for a
// document are refused before any request.
func TestClientIDURLRefusals(t *testing.T) {
	d := newDocServer(t)
	reg := clients.New(openSQLite(t), clients.Options{HTTPClient: d.trusting()})
	host := strings.TrimPrefix(d.srv.URL, "https://")
	for id, want := range map[string]string{
		"http://" + host + "/client.json":                   "https",
		"ftp://" + host + "/client.json":                    "https",
		"https://user:pw@" + host + "/client.json":          "user info",
		"https://" + host:                                   "no path",
		"https://" + host + "/a/../client.json":             ". or ..",
		"https://" + host + "/a/%2e%2e/c.json":              ". or ..",
		"https://" + host + "/client.json#x":                "fragment",
		"https:///client.json":                              "no host",
		"https://" + host + "/c lient.json":                 "spaces",
		"https://" + host + "/" + strings.Repeat("a", 3000): "bytes long",
	} {
		_, err := reg.Lookup(context.Background(), id)
		if !errors.Is(err, clients.ErrDocument) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.80s: %v, want a refusal saying %q", id, err, want)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.hits) != 0 {
		t.Errorf("refused IDs made requests: %v", d.hits)
	}
}

// countingListener is a raw TCP listener on 127.0.0.1 that counts the
// connections that reach it.
func countingListener(t *testing.T) (addr string, accepted func() int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), n.Load
}

// TestPrivateAddressesAreRefusedAtDialTime: a document on 127.0.0.1, or on
// a name that resolves to it (localhost), is refused by the guard before
// any connection is made: the listener accepts nothing.
func TestPrivateAddressesAreRefusedAtDialTime(t *testing.T) {
	addr, accepted := countingListener(t)
	_, port, _ := net.SplitHostPort(addr)
	reg := clients.New(openSQLite(t), clients.Options{}) // the production guard
	for _, id := range []string{"https://" + addr + "/client.json", "https://localhost:" + port + "/client.json"} {
		_, err := reg.Lookup(context.Background(), id)
		var de *clients.DocumentError
		var refused *clients.RefusedError
		if !errors.As(err, &de) || !errors.As(err, &refused) {
			t.Errorf("%s: %v, want a refusal by the guard", id, err)
			continue
		}
		if !strings.Contains(err.Error(), "loopback") || !refused.Addr.Addr().IsLoopback() {
			t.Errorf("%s: %q does not say loopback", id, err)
		}
	}
	if n := accepted(); n != 0 {
		t.Fatalf("the guard let %d connections reach the listener", n)
	}
	// The listener does count: a plain dial reaches it.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	for i := 0; accepted() == 0 && i < 200; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if accepted() != 1 {
		t.Fatalf("the listener counted %d plain dials, want 1", accepted())
	}
}

// TestGuardRefusesNonPublicAddresses: the guard's verdict on each kind of
// address, IPv4-mapped, NAT64 and 6to4 forms included, and on ports.
func TestGuardRefusesNonPublicAddresses(t *testing.T) {
	refused := map[string]string{
		"127.0.0.1": "loopback", "127.8.9.10": "loopback", "::1": "loopback",
		"10.1.2.3": "private", "172.16.0.1": "private", "172.31.255.255": "private", "192.168.1.1": "private",
		"fc00::1": "private", "fd12:3456::1": "private",
		"169.254.169.254": "metadata", "169.254.1.1": "link-local", "fe80::1": "link-local", "fe80::1%eth0": "link-local",
		"0.0.0.0": "unspecified", "::": "unspecified", "0.1.2.3": "this network",
		"100.64.0.1": "CGNAT", "100.127.255.254": "CGNAT",
		"224.0.0.1": "multicast", "ff02::1": "multicast", "255.255.255.255": "broadcast", "240.0.0.1": "reserved",
		"::ffff:127.0.0.1": "loopback", "::ffff:10.0.0.1": "private", "::ffff:169.254.169.254": "metadata",
		"64:ff9b::7f00:1": "loopback", "64:ff9b::a00:1": "private", "2002:7f00:1::": "loopback", "2002:a9fe:a9fe::": "metadata",
		"::127.0.0.1": "IPv4-compatible", "2001::1": "Teredo", "192.0.2.1": "documentation",
	}
	for s, want := range refused {
		a := netip.MustParseAddr(s)
		if why := clients.RefusedAddr(a); !strings.Contains(why, want) {
			t.Errorf("%s: %q, want it refused as %s", s, why, want)
		}
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "100.128.0.1", "172.32.0.1", "2606:4700:4700::1111", "64:ff9b::808:808", "::ffff:8.8.8.8"} {
		if why := clients.RefusedAddr(netip.MustParseAddr(s)); why != "" {
			t.Errorf("%s is public but refused: %s", s, why)
		}
	}
	// At dial time: the guarded client refuses a private literal without a
	// connection (nothing listens there), and a public address on a port
	// other than 443.
	hc := clients.NewHTTPClient(clients.Guard{})
	for url, want := range map[string]string{
		"https://10.255.255.1/client.json":    "private",
		"https://[fe80::1]/client.json":       "link-local",
		"https://169.254.169.254/latest":      "metadata",
		"https://[::ffff:7f00:1]/x.json":      "loopback",
		"https://8.8.8.8:8443/client.json":    "port 8443",
		"https://0.0.0.0:443/client.json":     "unspecified",
		"https://[64:ff9b::a9fe:a9fe]/x.json": "metadata",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
		}
		var r *clients.RefusedError
		if !errors.As(err, &r) || !strings.Contains(r.Reason, want) {
			t.Errorf("%s: %v, want the guard to refuse it (%s)", url, err, want)
		}
	}
}

// TestStoredClientsAreLookedUpInTheStore: an ID that is not a URL is a
// stored client.
func TestStoredClientsAreLookedUpInTheStore(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		c, secret, err := clients.Add(ctx, st, clients.Spec{Name: "Deploy bot", RedirectURIs: []string{"https://ci.example.com/cb"}, Confidential: true})
		if err != nil {
			t.Fatal(err)
		}
		if secret == "" || c.Kind != store.ClientRegistered {
			t.Fatalf("added %+v with secret %q", c, secret)
		}
		got, err := clients.New(st, clients.Options{}).Lookup(ctx, c.ID)
		if err != nil || got.ID != c.ID || got.Name != "Deploy bot" || got.SecretHash == "" || !got.CreatedAt.Equal(c.CreatedAt) {
			t.Errorf("looked up %+v, %v; added %+v", got, err, c)
		}
		var e *clients.Error
		if _, _, err := clients.Add(ctx, st, clients.Spec{Name: "x", RedirectURIs: []string{"http://app.example.com/cb"}}); !errors.As(err, &e) || e.Field != "redirect_uris[0]" {
			t.Errorf("an http redirect to a non-loopback host: %v", err)
		}
		if _, _, err := clients.Add(ctx, st, clients.Spec{Name: " ", RedirectURIs: []string{"http://127.0.0.1/cb"}}); !errors.As(err, &e) || e.Field != "client_name" {
			t.Errorf("a blank name: %v", err)
		}
		if _, _, err := clients.Add(ctx, st, clients.Spec{Name: "x"}); !errors.As(err, &e) || e.Field != "redirect_uris" {
			t.Errorf("no redirect URI: %v", err)
		}
	})
}

// TestMetadataDocumentCacheIsBounded: past CacheSize, the document that
// expires soonest is dropped (and fetched again when asked for); the
// others stay cached.
func TestMetadataDocumentCacheIsBounded(t *testing.T) {
	d := newDocServer(t)
	reg := clients.New(openSQLite(t), clients.Options{HTTPClient: d.trusting(), CacheSize: 2})
	ctx := context.Background()
	ids := map[string]string{}
	for path, cc := range map[string]string{"/soon": "max-age=60", "/b": "max-age=600", "/c": "max-age=600"} {
		ids[path] = d.handle(path, jsonDoc(map[string]string{"Cache-Control": cc}, goodDoc))
	}
	for _, p := range []string{"/soon", "/b", "/c", "/b", "/soon"} {
		if _, err := reg.Lookup(ctx, ids[p]); err != nil {
			t.Fatal(err)
		}
	}
	if got := [3]int{d.count("/soon"), d.count("/b"), d.count("/c")}; got != [3]int{2, 1, 1} {
		t.Errorf("fetches (soon, b, c) = %v, want [2 1 1]: the soonest to expire is the one dropped", got)
	}
}

// TestMetadataDocumentLeniencies: what a document written for many servers
// may carry without being refused: scopes Foundry does not know (ignored),
// a logo that is not https (left out), offline_access.
func TestMetadataDocumentLeniencies(t *testing.T) {
	d := newDocServer(t)
	reg := clients.New(openSQLite(t), clients.Options{HTTPClient: d.trusting()})
	id := d.handle("/lenient.json", jsonDoc(nil, func(id string) map[string]any {
		m := goodDoc(id)
		m["scope"] = "openid offline_access osfoundry:read profile"
		m["logo_uri"] = "http://app.example.com/logo.png"
		return m
	}))
	c, err := reg.Lookup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Scopes) != 1 || c.Scopes[0] != "osfoundry:read" {
		t.Errorf("scopes %v, want only osfoundry:read", c.Scopes)
	}
	if strings.Contains(string(c.Metadata), "logo") {
		t.Errorf("an http logo_uri was kept: %s", c.Metadata)
	}
}

// TestMetadataDocumentNeedsAValidCertificate: a server whose certificate
// the client does not trust is refused, saying so.
func TestMetadataDocumentNeedsAValidCertificate(t *testing.T) {
	d := newDocServer(t)
	untrusting := clients.NewHTTPClient(clients.Guard{Allow: func(ap netip.AddrPort) bool { return ap.Addr().IsLoopback() }})
	reg := clients.New(openSQLite(t), clients.Options{HTTPClient: untrusting})
	_, err := reg.Lookup(context.Background(), d.handle("/client.json", jsonDoc(nil, goodDoc)))
	if !errors.Is(err, clients.ErrDocument) || !strings.Contains(err.Error(), "TLS certificate is not valid") {
		t.Errorf("%v, want a refusal of the certificate", err)
	}
}
