package main

// These tests run `foundry serve --https` against a real local ACME CA:
// Debian's pebble, with pebble-challtestsrv as the DNS server its
// validation asks (every name resolves to 127.0.0.1). Without pebble they
// skip, unless FOUNDRY_TEST_PEBBLE=required (as in CI), when they fail.

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"foundry/internal/server/servertest"
	"foundry/internal/store/postgres/pgtest"
)

// testDomain is the name Foundry serves in these tests; the test DNS
// server answers 127.0.0.1 for it, and so does the browser's resolver.
const testDomain = "foundry.test"

// pebbleCA is a pebble ACME server on 127.0.0.1 that validates challenges
// at Foundry's listeners, httpsAddr (tls-alpn-01) and httpAddr (http-01).
type pebbleCA struct {
	directory           string       // the ACME directory URL
	caFile              string       // PEM of the CA of pebble's own https, for --acme-ca-roots
	mgmt                string       // the management interface's base URL
	client              *http.Client // trusts caFile
	httpsAddr, httpAddr string
}

// pebbleBins are pebble's binaries, or the test skipped (failed with
// FOUNDRY_TEST_PEBBLE=required) without them.
func pebbleBins(t *testing.T) (pebble, dns string) {
	t.Helper()
	if testing.Short() {
		t.Skip("pebble test skipped in -short mode")
	}
	var err error
	if pebble, err = exec.LookPath("pebble"); err == nil {
		dns, err = exec.LookPath("pebble-challtestsrv")
	}
	if err != nil {
		msg := fmt.Sprintf("no local ACME server: %v; install Debian's pebble package (apt-get install pebble)", err)
		if os.Getenv("FOUNDRY_TEST_PEBBLE") == "required" {
			t.Fatal("FOUNDRY_TEST_PEBBLE=required: " + msg)
		}
		t.Skip(msg + " (set FOUNDRY_TEST_PEBBLE=required to fail instead)")
	}
	return pebble, dns
}

func freeUDPAddr(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}

// startPebble starts pebble-challtestsrv (DNS only) and pebble, and waits
// until pebble's directory answers. With alpn false, pebble's tls-alpn-01
// validation goes to a port where nothing listens, so that only http-01
// can succeed.
func startPebble(t *testing.T, alpn bool) *pebbleCA {
	t.Helper()
	pebbleBin, dnsBin := pebbleBins(t)
	dir := t.TempDir()
	caFile, certFile, keyFile := writeTestCA(t, dir)
	p := &pebbleCA{caFile: caFile, httpsAddr: freeAddr(t), httpAddr: freeAddr(t)}
	listen, mgmt, dnsAddr, dnsMgmt := freeAddr(t), freeAddr(t), freeUDPAddr(t), freeAddr(t)
	p.directory, p.mgmt = "https://"+listen+"/dir", "https://"+mgmt
	_, httpsPort, _ := net.SplitHostPort(p.httpsAddr)
	if !alpn {
		_, httpsPort, _ = net.SplitHostPort(freeAddr(t))
	}
	_, httpPort, _ := net.SplitHostPort(p.httpAddr)
	cfg := fmt.Sprintf(`{"pebble": {"listenAddress": %q, "managementListenAddress": %q, "certificate": %q, "privateKey": %q,
		"httpPort": %s, "tlsPort": %s, "ocspResponderURL": "", "externalAccountBindingRequired": false}}`,
		listen, mgmt, certFile, keyFile, httpPort, httpsPort)
	cfgFile := filepath.Join(dir, "pebble-config.json")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(name string, env []string, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = append(os.Environ(), env...)
		logFile, err := os.Create(filepath.Join(dir, filepath.Base(name)+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cancel()
			cmd.Wait()
			logFile.Close()
			if t.Failed() {
				b, _ := os.ReadFile(logFile.Name())
				t.Logf("%s printed:\n%s", filepath.Base(name), b)
			}
		})
	}
	run(dnsBin, nil, "-dns01", dnsAddr, "-management", dnsMgmt, "-http01", "", "-https01", "", "-tlsalpn01", "",
		"-defaultIPv4", "127.0.0.1", "-defaultIPv6", "")
	run(pebbleBin, []string{"PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0"}, "-config", cfgFile, "-dnsserver", dnsAddr)

	pool := x509.NewCertPool()
	b, _ := os.ReadFile(caFile)
	pool.AppendCertsFromPEM(b)
	p.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := p.client.Get(p.directory)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pebble's directory %s did not answer within 30 s: %v", p.directory, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// writeTestCA writes a CA and, signed by it, the certificate pebble serves
// its ACME API with (127.0.0.1): the package ships none.
func writeTestCA(t *testing.T, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Foundry test CA for pebble's API"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	caFile, certFile, keyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for f, b := range map[string]*pem.Block{
		caFile: {Type: "CERTIFICATE", Bytes: caDER}, certFile: {Type: "CERTIFICATE", Bytes: leafDER}, keyFile: {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(f, pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return caFile, certFile, keyFile
}

// issuer is pebble's certificate at path (/roots/0: the root its
// certificates chain to; /intermediates/0: the one that signs them).
func (p *pebbleCA) issuer(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	resp, err := p.client.Get(p.mgmt + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	blk, _ := pem.Decode(b)
	if resp.StatusCode != http.StatusOK || blk == nil {
		t.Fatalf("pebble %s: %s %q", path, resp.Status, b)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serveHTTPS starts the built foundry with --https testDomain against p,
// on data, and waits until its certificate is ready.
func serveHTTPS(t *testing.T, p *pebbleCA, data string, extra ...string) *serving {
	t.Helper()
	args := append([]string{"serve", "--data", data, "--https", testDomain,
		"--addr", p.httpsAddr, "--http-addr", p.httpAddr,
		"--acme-directory", p.directory, "--acme-ca-roots", p.caFile, "--acme-email", "ops@foundry.test"}, extra...)
	s := startServe(t, t.TempDir(), foundryBin(t), args...)
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(s.printed+s.output(), "https: certificate ready") {
		if out := s.printed + s.output(); strings.Contains(out, "https: no certificate yet") || time.Now().After(deadline) {
			t.Fatalf("no certificate from pebble:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// output is what s printed after "Foundry is serving", so far.
func (s *serving) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rest.String()
}

// domainClient reaches testDomain at 127.0.0.1, trusting root only; it
// does not follow redirects. dials, when not nil, counts its connections.
func domainClient(root *x509.Certificate, dials ...*atomic.Int32) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(root)
	var d net.Dialer
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool},
			ForceAttemptHTTP2: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, port, err := net.SplitHostPort(addr)
				if err != nil || host != testDomain {
					return nil, fmt.Errorf("the test client reaches %s only, not %s", testDomain, addr)
				}
				for _, n := range dials {
					n.Add(1)
				}
				return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// TestServeHTTPSWithPebble: serve --https obtains a certificate for its
// domain from a real ACME CA, serves HTTP/2 with it (a chain to the CA's
// root), makes https://DOMAIN:PORT its public URL, redirects http to https
// (GET 301, other methods 308, path and query kept), reports the
// certificate on /readyz and /metrics, and on a restart serves the cached
// certificate without asking the CA again.
func TestServeHTTPSWithPebble(t *testing.T) {
	p := startPebble(t, true)
	data := filepath.Join(t.TempDir(), "data")
	s := serveHTTPS(t, p, data)
	root := p.issuer(t, "/roots/0")
	c := domainClient(root)
	base := "https://" + testDomain + ":" + port(p.httpsAddr)

	resp, err := c.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("GET %s/healthz: %v", base, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "h2" {
		t.Fatalf("GET /healthz over https: %s %s (ALPN %q), want 200 over HTTP/2", resp.Status, resp.Proto, resp.TLS.NegotiatedProtocol)
	}
	chain := resp.TLS.VerifiedChains[0]
	leaf := chain[0]
	if !chain[len(chain)-1].Equal(root) || len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != testDomain {
		t.Errorf("served certificate for %q, chain ending at %q; want %s, chaining to pebble's root %q", leaf.DNSNames, chain[len(chain)-1].Subject, testDomain, root.Subject)
	}
	if !strings.Contains(s.printed, `mcp=`+base+`/mcp`) {
		t.Errorf("the start does not give %s/mcp as the MCP URL:\n%s", base, s.printed)
	}
	// An MCP client (the go-sdk's) works over it, every request on HTTP/2.
	tok, _ := runCLI(t, foundryBin(t), "token", "create", "--data", data, "--scopes", "osfoundry:read")
	var notH2 atomic.Int32
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := c.Transport.RoundTrip(r)
		if err == nil && resp.ProtoMajor != 2 {
			notH2.Add(1)
		}
		return resp, err
	})
	cs := servertest.Connect(t, base+"/mcp", strings.TrimSpace(tok), "", rt)
	if r := servertest.MustCall(t, cs, "list_notes", map[string]any{}); r.IsError {
		t.Errorf("list_notes over https: %s", r.Text)
	}
	cs.Close()
	if n := notH2.Load(); n != 0 {
		t.Errorf("%d MCP requests did not go over HTTP/2", n)
	}
	// The public URL is what OAuth clients are told.
	var meta struct {
		Resource string `json:"resource"`
	}
	getJSON(t, c, base+"/.well-known/oauth-protected-resource", &meta)
	if meta.Resource != base+"/mcp" {
		t.Errorf("protected resource %q, want %s/mcp", meta.Resource, base)
	}

	// http: redirected to the same path and query on https.
	httpBase := "http://" + testDomain + ":" + port(p.httpAddr)
	for _, m := range []struct {
		method string
		code   int
	}{{http.MethodGet, http.StatusMovedPermanently}, {http.MethodHead, http.StatusMovedPermanently}, {http.MethodPost, http.StatusPermanentRedirect}} {
		req, _ := http.NewRequest(m.method, httpBase+"/signin?next=%2Fnotes", strings.NewReader(""))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s over http: %v", m.method, err)
		}
		resp.Body.Close()
		if want := base + "/signin?next=%2Fnotes"; resp.StatusCode != m.code || resp.Header.Get("Location") != want {
			t.Errorf("%s %s/signin?next=%%2Fnotes: %d to %q, want %d to %q", m.method, httpBase, resp.StatusCode, resp.Header.Get("Location"), m.code, want)
		}
	}

	var ready struct {
		Detail struct {
			HTTPS struct {
				Domain   string `json:"domain"`
				NotAfter string `json:"certificate_not_after"`
			} `json:"https"`
		} `json:"detail"`
	}
	getJSON(t, c, base+"/readyz", &ready)
	if got := ready.Detail.HTTPS; got.Domain != testDomain || got.NotAfter != leaf.NotAfter.UTC().Format(time.RFC3339) {
		t.Errorf("/readyz https detail %+v, want %s until %s", got, testDomain, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	resp, err = c.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`foundry_https_certificate_expiry_timestamp_seconds{domain=%q} %s`, testDomain, metricFloat(leaf.NotAfter.Unix())); !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %q", want)
	}

	// A restart serves the certificate kept in DATA/acme.
	s.stop()
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("serve --https ended with exit %d on an interrupt, want 0", code)
	}
	if out := s.printed + s.output(); !strings.Contains(out, "https: certificate obtained") {
		t.Errorf("the first start did not log the certificate obtained:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(data, "acme", testDomain)); err != nil {
		t.Errorf("the certificate is not kept in DATA/acme: %v", err)
	}
	s = serveHTTPS(t, p, data)
	c.CloseIdleConnections()
	resp, err = c.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if again := resp.TLS.PeerCertificates[0]; again.SerialNumber.Cmp(leaf.SerialNumber) != 0 {
		t.Errorf("after a restart the certificate is %v, want the cached %v", again.SerialNumber, leaf.SerialNumber)
	}
	if out := s.printed + s.output(); strings.Contains(out, "https: certificate obtained") {
		t.Errorf("a restart asked the CA again instead of using the cached certificate:\n%s", out)
	}
	s.stop()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// metricFloat is v as the Prometheus text format writes a float.
func metricFloat(v int64) string {
	return strconv.FormatFloat(float64(v), 'g', -1, 64)
}

func getJSON(t *testing.T, c *http.Client, u string, v any) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %s %q: %v", u, resp.Status, b, err)
	}
}

// spkiHash is what Chromium's --ignore-certificate-errors-spki-list takes.
func spkiHash(c *x509.Certificate) string {
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// TestServeHTTPSByHTTP01: with the CA unable to reach the https listener
// (tls-alpn-01 fails), the certificate comes by http-01 on --http-addr,
// whose Host header carries the port.
func TestServeHTTPSByHTTP01(t *testing.T) {
	p := startPebble(t, false)
	s := serveHTTPS(t, p, filepath.Join(t.TempDir(), "data"))
	c := domainClient(p.issuer(t, "/roots/0"))
	resp, err := c.Get("https://" + testDomain + ":" + port(p.httpsAddr) + "/healthz")
	if err != nil {
		t.Fatalf("https after an http-01 validation: %v\n%s", err, s.printed+s.output())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		t.Fatalf("GET /healthz: %s %s, want 200 over HTTP/2", resp.Status, resp.Proto)
	}
	s.stop()
}

// TestServeHTTPSStreamsShareOneConnection: over HTTP/2 the event streams
// of a client, ten of them here (a browser would stop at six per host on
// HTTP/1.1), and its MCP calls all share one TCP connection, and a write
// reaches every stream.
func TestServeHTTPSStreamsShareOneConnection(t *testing.T) {
	p := startPebble(t, true)
	data, noteID, _ := grantWorkspace(t)
	s := serveHTTPS(t, p, data, "--max-waiters-per-token", "16")
	defer s.stop()
	tok, _ := runCLI(t, foundryBin(t), "token", "create", "--data", data, "--scopes", "osfoundry:read,osfoundry:write")
	tok = strings.TrimSpace(tok)
	var dials atomic.Int32
	c := domainClient(p.issuer(t, "/roots/0"), &dials)
	c.Timeout = 0 // streams stay open; ctx bounds them
	base := "https://" + testDomain + ":" + port(p.httpsAddr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const streams = 10
	type seen struct {
		i     int
		event string
		err   error
	}
	events := make(chan seen, 4*streams)
	for i := range streams {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/live?topic=note:"+noteID, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
			t.Fatalf("stream %d: %s over %s, want 200 over HTTP/2", i, resp.Status, resp.Proto)
		}
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
					events <- seen{i: i, event: ev}
				}
			}
			events <- seen{i: i, err: fmt.Errorf("stream ended: %v", sc.Err())}
		}()
	}
	waitAll := func(event string) {
		t.Helper()
		got := map[int]bool{}
		for len(got) < streams {
			select {
			case e := <-events:
				if e.err != nil {
					t.Fatalf("stream %d before %q on all: %v", e.i, event, e.err)
				}
				if e.event == event {
					got[e.i] = true
				}
			case <-ctx.Done():
				t.Fatalf("%q reached %d of %d streams", event, len(got), streams)
			}
		}
	}
	waitAll("ready")

	cs := servertest.Connect(t, base+"/mcp", tok, "", c.Transport)
	cur := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown"})
	if w := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown", "expected_version": cur.Int("version"),
		"idempotency_key": "https-streams-1", "operation": "replace_text", "text": "over h2"}); w.IsError {
		t.Fatal(w.Text)
	}
	waitAll("write")
	if n := dials.Load(); n != 1 {
		t.Errorf("%d streams and the MCP calls took %d connections, want 1", streams, n)
	}
}

// TestServeHTTPSOnPostgreSQL: with --database the certificate and the
// ACME account key go to --acme-cache, and nothing to a data folder.
func TestServeHTTPSOnPostgreSQL(t *testing.T) {
	dbURL, _ := pgtest.Schema(t)
	p := startPebble(t, true)
	data, cache := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "acme")
	s := serveHTTPS(t, p, data, "--database", dbURL, "--acme-cache", cache)
	c := domainClient(p.issuer(t, "/roots/0"))
	resp, err := c.Get("https://" + testDomain + ":" + port(p.httpsAddr) + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		t.Errorf("GET /readyz on PostgreSQL: %s %s, want 200 over HTTP/2", resp.Status, resp.Proto)
	}
	s.stop()
	if _, err := os.Stat(filepath.Join(cache, testDomain)); err != nil {
		t.Errorf("the certificate is not in --acme-cache: %v", err)
	}
	if _, err := os.Stat(data); err == nil {
		t.Errorf("serving PostgreSQL with --https made the data folder %s", data)
	}
}

// TestServeHTTPSWithoutHTTPListener: with --http-addr "" nothing listens
// for http, and the certificate comes by tls-alpn-01 alone.
func TestServeHTTPSWithoutHTTPListener(t *testing.T) {
	p := startPebble(t, true)
	s := serveHTTPS(t, p, filepath.Join(t.TempDir(), "data"), "--http-addr", "")
	c := domainClient(p.issuer(t, "/roots/0"))
	resp, err := c.Get("https://" + testDomain + ":" + port(p.httpsAddr) + "/healthz")
	if err != nil {
		t.Fatalf("https by tls-alpn-01 alone: %v\n%s", err, s.printed+s.output())
	}
	resp.Body.Close()
	if conn, err := net.Dial("tcp", p.httpAddr); err == nil {
		conn.Close()
		t.Errorf("with --http-addr \"\" something listens on %s", p.httpAddr)
	}
	s.stop()
}

// TestServeHTTPSBacksOffWhenTheCACannotValidate: with the CA reaching
// neither listener, the start logs why there is no certificate, and a
// browser's connection right after does not make the CA try again.
func TestServeHTTPSBacksOffWhenTheCACannotValidate(t *testing.T) {
	p := startPebble(t, false)
	p.httpAddr = freeAddr(t) // pebble validates http-01 at another port than Foundry's
	// A connection refused by the back-off is a TLS handshake error, which
	// the log keeps at debug level (scanners cause them all day).
	args := []string{"serve", "--data", filepath.Join(t.TempDir(), "data"), "--https", testDomain, "--log-level", "debug",
		"--addr", p.httpsAddr, "--http-addr", p.httpAddr, "--acme-directory", p.directory, "--acme-ca-roots", p.caFile}
	s := startServe(t, t.TempDir(), foundryBin(t), args...)
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(s.printed+s.output(), "https: no certificate yet") {
		if time.Now().After(deadline) || strings.Contains(s.printed+s.output(), "https: certificate ready") {
			t.Fatalf("want a failure to obtain a certificate:\n%s", s.printed+s.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	c := domainClient(p.issuer(t, "/roots/0"))
	if _, err := c.Get("https://" + testDomain + ":" + port(p.httpsAddr) + "/healthz"); err == nil {
		t.Fatal("https answered without a certificate")
	}
	for !strings.Contains(s.output(), "the next try with the ACME CA is at") {
		if time.Now().After(deadline) {
			t.Fatalf("the connection did not meet the back-off:\n%s", s.printed+s.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.stop()
}

// TestCertStateBacksOff: 1, 2, 4, … minutes between tries while there is
// no certificate, at most an hour; a certificate ends the waiting.
func TestCertStateBacksOff(t *testing.T) {
	var s certState
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, wait := s.retryAt(now); wait {
		t.Fatal("waits before any failure")
	}
	for i, want := range []time.Duration{1, 2, 4, 8, 16, 32, 60, 60} {
		s.failed(now)
		s.failed(now.Add(time.Second)) // another connection that waited on the same try
		at, wait := s.retryAt(now)
		if !wait || at.Sub(now) != want*time.Minute {
			t.Fatalf("after %d failures: next try in %v (waiting %v), want %v", i+1, at.Sub(now), wait, want*time.Minute)
		}
		if _, wait := s.retryAt(at); wait {
			t.Fatalf("after %d failures: still waiting at the time of the next try", i+1)
		}
		now = at
	}
	s.got(&x509.Certificate{NotAfter: now.Add(90 * 24 * time.Hour)})
	if _, wait := s.retryAt(now); wait {
		t.Error("waits although a certificate is held")
	}
	s.failed(now)
	if _, wait := s.retryAt(now); wait {
		t.Error("a failure while a certificate is held blocks the connections that it serves")
	}
}

// TestServeHTTPSRefusesWhatCannotWork: --https takes a DNS name alone, the
// ACME flags values they can use and only alongside --https; each refusal
// exits 2 naming the flag and the fix, before the data folder is touched.
func TestServeHTTPSRefusesWhatCannotWork(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	os.WriteFile(garbage, []byte("not a certificate"), 0o600)
	addr := freeAddr(t)
	ok := []string{"--https", "foundry.example.com", "--addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--https", "https://foundry.example.com"}, []string{"--https", "is a URL", "foundry.example.com"}},
		{[]string{"--https", "foundry.example.com:8443"}, []string{"--https", "has a port", "--addr"}},
		{[]string{"--https", "127.0.0.1"}, []string{"--https", "an address"}},
		{[]string{"--https", "[::1]"}, []string{"--https", "an address"}},
		{[]string{"--https", "localhost"}, []string{"--https", "with a dot"}},
		{[]string{"--https", "*.example.com"}, []string{"--https", "wildcard"}},
		{[]string{"--https", "foo_bar.example.com"}, []string{"--https", "not a DNS name"}},
		{[]string{"--https", "-foo.example.com"}, []string{"--https", "not a DNS name"}},
		{[]string{"--https", ""}, []string{"--https", "empty"}},
		{[]string{"--acme-email", "ops@example.com"}, []string{"--acme-email is for serving https itself", "--https DOMAIN"}},
		{[]string{"--http-addr", ":8081"}, []string{"--http-addr is for serving https itself"}},
		{[]string{"--acme-directory", "https://acme.example.com/dir"}, []string{"--acme-directory is for serving https itself"}},
		{append(slicesClone(ok), "--acme-directory", "http://acme.example.com/dir"), []string{"--acme-directory", "https:// URL"}},
		{append(slicesClone(ok), "--acme-email", "ops"), []string{"--acme-email", `"ops"`, "email address"}},
		{append(slicesClone(ok), "--acme-email", "Ops <ops@example.com>"), []string{"--acme-email", "email address"}},
		{append(slicesClone(ok), "--acme-ca-roots", filepath.Join(dir, "missing.pem")), []string{"--acme-ca-roots", "missing.pem", "PEM"}},
		{append(slicesClone(ok), "--acme-ca-roots", garbage), []string{"--acme-ca-roots", "holds no PEM certificate"}},
		{append(slicesClone(ok), "--database", "postgres://postgres@127.0.0.1:1/none"), []string{"--https with --database needs --acme-cache"}},
		{[]string{"--https", "foundry.example.com", "--addr", addr, "--http-addr", addr}, []string{"--http-addr", "also --addr"}},
		{append(slicesClone(ok), "--public-url", "http://foundry.example.com"), []string{"--public-url", "https://foundry.example.com"}},
	}
	bin := foundryBin(t)
	for _, c := range cases {
		data := filepath.Join(t.TempDir(), "data")
		args := append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, c.args...)
		code, stderr, served := serveOrRefuse(t, bin, args...)
		if served || code != 2 {
			t.Errorf("serve %q: exit %d, served %v (%s); want a refusal with exit 2", c.args, code, served, stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("serve %q: %q does not say %q", c.args, stderr, w)
			}
		}
		if _, err := os.Stat(data); err == nil {
			t.Errorf("serve %q created the data folder before refusing", c.args)
		}
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// TestParseDomain: the name is the one the certificate is for, in the
// form ACME and browsers compare: ASCII (punycode), lower case, no final
// dot.
func TestParseDomain(t *testing.T) {
	for in, want := range map[string]string{
		"foundry.example.com":  "foundry.example.com",
		"Foundry.Example.COM.": "foundry.example.com",
		"bücher.example":       "xn--bcher-kva.example",
		"a-b.c-d.example":      "a-b.c-d.example",
	} {
		got, err := parseDomain(in)
		if err != nil || got != want {
			t.Errorf("parseDomain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parseDomain(strings.Repeat("a", 64) + ".example"); err == nil {
		t.Error("a label of 64 characters was taken")
	}
}
