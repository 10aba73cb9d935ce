package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
	"golang.org/x/net/idna"

	"foundry/internal/server"
)

// httpsFlags are serve's flags for serving https itself: a certificate for
// one domain, obtained and renewed from an ACME CA (Let's Encrypt unless
// --acme-directory names another), HTTP/2, and http redirected to https.
type httpsFlags struct {
	fs                                                 *flag.FlagSet
	domain, httpAddr, directory, email, cache, caRoots string

	roots *x509.CertPool // from --acme-ca-roots; nil: the system's
	state certState
}

// httpsOnly are the flags that mean something with --https only.
var httpsOnly = []string{"http-addr", "acme-directory", "acme-email", "acme-cache", "acme-ca-roots"}

func init() {
	for name, arg := range map[string]string{"https": "DOMAIN", "http-addr": "HOST:PORT", "acme-directory": "URL",
		"acme-email": "EMAIL", "acme-cache": "DIR", "acme-ca-roots": "FILE"} {
		argNames[name] = arg
	}
}

func (h *httpsFlags) register(fs *flag.FlagSet) {
	h.fs = fs
	fs.StringVar(&h.domain, "https", os.Getenv("FOUNDRY_HTTPS"), "serve https for this domain (e.g. foundry.example.com), with a certificate obtained and renewed by ACME (Let's Encrypt unless --acme-directory) and HTTP/2; --addr is then the https listener (default :443) and the public URL https://DOMAIN (env FOUNDRY_HTTPS)")
	fs.StringVar(&h.httpAddr, "http-addr", ":80", "with --https: the http listener, for ACME http-01 challenges and a redirect of everything else to https; \"\" for none (certificates then come by tls-alpn-01 on --addr alone)")
	fs.StringVar(&h.directory, "acme-directory", autocert.DefaultACMEDirectory, "with --https: the directory URL of the ACME CA")
	fs.StringVar(&h.email, "acme-email", "", "with --https: the contact address given to the ACME CA (it writes about expiring certificates and account problems)")
	fs.StringVar(&h.cache, "acme-cache", "", "with --https: the folder for the ACME account key and the certificates, kept across restarts (default DATA/acme; required with --database)")
	fs.StringVar(&h.caRoots, "acme-ca-roots", "", "with --https: a PEM file of the CA certificates that the ACME directory's own https is checked with, instead of the system's (for a private ACME CA)")
}

func (h *httpsFlags) set(name string) bool {
	found := false
	h.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// check validates the https flags before anything is opened, and gives
// --addr its https default (:443) when neither it nor FOUNDRY_ADDR is set.
func (h *httpsFlags) check(d dataFlags, addr *string, publicURL string) error {
	if h.domain == "" && !h.set("https") {
		for _, name := range httpsOnly {
			if h.set(name) {
				return usagef("--%s is for serving https itself: add --https DOMAIN, or drop --%s", name, name)
			}
		}
		return nil
	}
	domain, err := parseDomain(h.domain)
	if err != nil {
		return err
	}
	h.domain = domain
	if publicURL != "" && !strings.HasPrefix(publicURL, "https://") {
		return usagef("--public-url: %q is not https://, but --https serves https only: give https://%s (or leave --public-url out for that)", publicURL, domain)
	}
	if !h.set("addr") && os.Getenv("FOUNDRY_ADDR") == "" {
		*addr = ":443"
	}
	if _, p, _ := net.SplitHostPort(*addr); h.httpAddr != "" && h.httpAddr == *addr && p != "0" {
		return usagef("--http-addr: %q is also --addr, the https listener: give each its own port (e.g. --addr :443 --http-addr :80)", h.httpAddr)
	}
	if u, err := url.Parse(h.directory); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
		return usagef("--acme-directory: %q is not an https:// URL like %s", h.directory, autocert.DefaultACMEDirectory)
	}
	if h.email != "" {
		if a, err := mail.ParseAddress(h.email); err != nil || a.Address != h.email || a.Name != "" {
			return usagef("--acme-email: %q is not an email address like ops@example.com", h.email)
		}
	}
	if h.cache == "" {
		if d.database != "" {
			return usagef("--https with --database needs --acme-cache DIR: the folder for the ACME account key and certificates (there is no data folder to keep them in); nodes serving one name share one folder, so that any of them answers the CA's challenges")
		}
		h.cache = filepath.Join(d.data, "acme")
	}
	if h.caRoots != "" {
		b, err := os.ReadFile(h.caRoots)
		if err != nil {
			return usagef("--acme-ca-roots: %v; give a PEM file of CA certificates", err)
		}
		h.roots = x509.NewCertPool()
		if !h.roots.AppendCertsFromPEM(b) {
			return usagef("--acme-ca-roots: %s holds no PEM certificate; give a PEM file of CA certificates", h.caRoots)
		}
	}
	return nil
}

// parseDomain reads --https: one DNS name, the one in the certificate,
// not a URL, an address or a wildcard. It answers the name in ASCII
// (punycode), lower case.
func parseDomain(v string) (string, error) {
	const like = "give the server's DNS name alone, like foundry.example.com"
	switch {
	case v == "":
		return "", usagef("--https: an empty domain; %s", like)
	case strings.Contains(v, "://") || strings.ContainsAny(v, "/?#@"):
		return "", usagef("--https: %q is a URL, not a domain; %s (the public URL becomes https://DOMAIN)", v, like)
	case strings.Contains(v, "*"):
		return "", usagef("--https: %q is a wildcard; ACME gives one certificate per name here: %s", v, like)
	}
	if _, _, err := net.SplitHostPort(v); err == nil || net.ParseIP(strings.Trim(v, "[]")) != nil {
		return "", usagef("--https: %q is an address or has a port; %s (the port is --addr's)", v, like)
	}
	name, err := idna.Lookup.ToASCII(strings.TrimSuffix(v, "."))
	if err != nil || !strings.Contains(name, ".") || len(name) > 253 {
		return "", usagef("--https: %q is not a DNS name with a dot in it; %s", v, like)
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return "", usagef("--https: %q is not a DNS name; %s", v, like)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", usagef("--https: %q is not a DNS name; %s", v, like)
			}
		}
	}
	return name, nil
}

// listen turns ln (the --addr listener) into the https listener and starts
// the http one. publicURL, when empty, becomes https://DOMAIN[:PORT]. stop
// ends the http listener. Without --https it answers ln as it is.
func (h *httpsFlags) listen(log *slog.Logger, ln net.Listener, publicURL *string) (_ net.Listener, stop func(), err error) {
	if h.domain == "" {
		return ln, func() {}, nil
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	origin := "https://" + h.domain
	if port != "443" {
		origin += ":" + port
	}
	if *publicURL == "" {
		*publicURL = origin
	}
	redirectTo := origin
	if u, err := url.Parse(*publicURL); err == nil && u.Scheme == "https" {
		redirectTo = "https://" + u.Host
	}

	client := &acme.Client{DirectoryURL: h.directory, UserAgent: "foundry/" + version}
	if h.roots != nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: h.roots, MinVersion: tls.VersionTLS12}
		client.HTTPClient = &http.Client{Transport: t, Timeout: time.Minute}
	}
	allowed := autocert.HostWhitelist(h.domain)
	m := &autocert.Manager{
		Prompt: autocert.AcceptTOS,
		// The Host of an http-01 request carries the port when the http
		// listener is not on 80 (a test CA's own port): the name alone is
		// what the policy is about.
		HostPolicy: func(ctx context.Context, host string) error {
			if name, _, err := net.SplitHostPort(host); err == nil {
				host = name
			}
			return allowed(ctx, host)
		},
		Cache:  loggingCache{Cache: autocert.DirCache(h.cache), domain: h.domain, log: log, state: &h.state},
		Email:  h.email,
		Client: client,
	}

	stop = func() {}
	if h.httpAddr != "" {
		hl, err := net.Listen("tcp", h.httpAddr)
		if err != nil {
			return nil, nil, fmt.Errorf("listen on %s for http (ACME http-01 challenges and the redirect to https): %w (choose another with --http-addr, or --http-addr \"\" for none; ports below 1024 need root or the capability cap_net_bind_service)", h.httpAddr, err)
		}
		hs := server.HTTPServer(m.HTTPHandler(redirectHTTPS(redirectTo)), hl.Addr().String())
		go hs.Serve(hl)
		stop = func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hs.Shutdown(ctx)
		}
		log.Info("https: http listener for ACME challenges and the redirect to https", "addr", hl.Addr().String(), "to", redirectTo)
	}
	go h.prepare(log, m)

	cfg := m.TLSConfig() // NextProtos h2, http/1.1 and acme-tls/1: net/http serves HTTP/2 on it
	cfg.MinVersion = tls.VersionTLS12
	cfg.GetCertificate = h.backoff(m.GetCertificate)
	return tls.NewListener(ln, cfg), stop, nil
}

// backoff wraps autocert's GetCertificate so that, while there is no
// certificate, a failure to obtain one is retried after 1 minute, then 2,
// 4, … up to an hour, however many connections come meanwhile: autocert
// alone tries again on the first connection a minute after a failure, and
// a CA limits failed validations (Let's Encrypt: 5 an hour per name).
// The CA's own tls-alpn-01 connections, and anything once a certificate
// is held, go straight through.
func (h *httpsFlags) backoff(get func(*tls.ClientHelloInfo) (*tls.Certificate, error)) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		ours := strings.EqualFold(strings.TrimSuffix(hello.ServerName, "."), h.domain) &&
			!(len(hello.SupportedProtos) == 1 && hello.SupportedProtos[0] == acme.ALPNProto)
		if !ours {
			return get(hello)
		}
		if at, wait := h.state.retryAt(time.Now()); wait {
			return nil, fmt.Errorf("https: no certificate for %s yet; the next try with the ACME CA is at %s", h.domain, at.UTC().Format(time.RFC3339))
		}
		cert, err := get(hello)
		switch {
		case err != nil:
			h.state.failed(time.Now())
		case cert.Leaf != nil:
			h.state.got(cert.Leaf)
		}
		return cert, err
	}
}

// prepare asks for the certificate at once, as a browser's first visit
// would, so that it is obtained (or read from the cache) before anyone
// waits on it, and a CA that cannot reach this server is logged at start.
// autocert renews it from then on.
func (h *httpsFlags) prepare(log *slog.Logger, m *autocert.Manager) {
	hello := &tls.ClientHelloInfo{
		ServerName: h.domain,
		// What every current browser offers: the ECDSA certificate
		// (the one they are served) rather than the RSA fallback.
		SignatureSchemes: []tls.SignatureScheme{tls.ECDSAWithP256AndSHA256},
		SupportedCurves:  []tls.CurveID{tls.CurveP256},
		CipherSuites:     []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	}
	cert, err := h.backoff(m.GetCertificate)(hello)
	if err != nil {
		log.Error("https: no certificate yet: "+h.domain+" must resolve to this server, and the ACME CA must reach it on port 443 (--addr) or 80 (--http-addr); https connections try again from a minute on, waiting twice as long after each failure, up to an hour",
			"domain", h.domain, "acme_directory", h.directory, "err", err)
		return
	}
	leaf := cert.Leaf
	if leaf == nil && len(cert.Certificate) > 0 {
		leaf, _ = x509.ParseCertificate(cert.Certificate[0])
	}
	if leaf == nil {
		return
	}
	h.state.got(leaf)
	log.Info("https: certificate ready", "domain", h.domain, "issuer", leaf.Issuer.CommonName, "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
}

// redirectHTTPS answers every http request but ACME's with a redirect to
// the same path on to (https://HOST[:PORT]): 301 for GET and HEAD, 308
// for the others, which keeps their method and body.
func redirectHTTPS(to string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusPermanentRedirect
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			code = http.StatusMovedPermanently
		}
		http.Redirect(w, r, to+r.URL.RequestURI(), code)
	})
}

// watch reports the certificate on /readyz (detail "https") and in
// /metrics (foundry_https_certificate_expiry_timestamp_seconds), so that a
// renewal that keeps failing is seen before the certificate expires.
func (h *httpsFlags) watch(srv *server.Server) {
	if h.domain == "" {
		return
	}
	srv.Ready.SetDetail("https", h.state.detail(h.domain))
	srv.Metrics.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "foundry_https_certificate_expiry_timestamp_seconds",
		Help:        "When the https certificate that --https serves expires, in seconds since the Unix epoch (0 while there is none).",
		ConstLabels: prometheus.Labels{"domain": h.domain},
	}, func() float64 {
		h.state.mu.Lock()
		defer h.state.mu.Unlock()
		if h.state.notAfter.IsZero() {
			return 0
		}
		return float64(h.state.notAfter.Unix())
	}))
}

// certState is the newest certificate's expiry and issuer. (A failure to
// obtain one is logged: with no certificate, /readyz cannot be reached over
// https to tell it; and a renewal that fails shows as an expiry coming near.)
type certState struct {
	mu       sync.Mutex
	notAfter time.Time
	issuer   string
	failures int       // in a row, while there is no certificate
	retry    time.Time // no new try before then
}

func (s *certState) got(leaf *x509.Certificate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if leaf.NotAfter.After(s.notAfter) {
		s.notAfter, s.issuer = leaf.NotAfter, leaf.Issuer.CommonName
	}
	s.failures, s.retry = 0, time.Time{}
}

// failed counts a failure to obtain a certificate, at now. The
// connections that waited on the same try all fail with it: once the first
// has set the next try, the others change nothing.
func (s *certState) failed(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.notAfter.IsZero() {
		return // a certificate is held; autocert renews it on its own schedule
	}
	if now.Before(s.retry) {
		return
	}
	s.failures++
	s.retry = now.Add(min(time.Minute<<min(s.failures-1, 6), time.Hour))
}

// retryAt reports when the next try may be, and whether that is after now.
func (s *certState) retryAt(now time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retry, s.notAfter.IsZero() && now.Before(s.retry)
}

func (s *certState) detail(domain string) func() any {
	return func() any {
		s.mu.Lock()
		defer s.mu.Unlock()
		d := map[string]any{"domain": domain}
		if !s.notAfter.IsZero() {
			d["certificate_not_after"] = s.notAfter.UTC().Format(time.RFC3339)
			d["issuer"] = s.issuer
		}
		return d
	}
}

// loggingCache is the ACME cache that logs each certificate stored for
// the domain: the first one and every renewal.
type loggingCache struct {
	autocert.Cache
	domain string
	log    *slog.Logger
	state  *certState
}

func (c loggingCache) Put(ctx context.Context, key string, data []byte) error {
	if err := c.Cache.Put(ctx, key, data); err != nil {
		c.log.Error("https: cannot keep the certificate in --acme-cache; it is obtained again on the next start", "key", key, "err", err)
		return err
	}
	if key != c.domain && key != c.domain+"+rsa" {
		return nil // the account key, or a tls-alpn-01 challenge's certificate
	}
	leaf, err := firstCertificate(data)
	if err != nil {
		return nil
	}
	c.state.got(leaf)
	c.log.Info("https: certificate obtained", "domain", c.domain, "issuer", leaf.Issuer.CommonName, "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

// firstCertificate is the leaf of what autocert caches: a private key and
// the chain, in PEM.
func firstCertificate(data []byte) (*x509.Certificate, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no certificate")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}
