package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"foundry/internal/browsertest"
)

// TestBrowserServesHTTPSOverH2: a headless Chromium, resolving the domain
// to 127.0.0.1 and trusting pebble's CA alone (its key, not every
// certificate), opens the app at https://DOMAIN:PORT/ with the certificate
// serve --https obtained, over HTTP/2; an http:// address brings it to the
// same page on https.
func TestBrowserServesHTTPSOverH2(t *testing.T) {
	p := startPebble(t, true)
	s := serveHTTPS(t, p, filepath.Join(t.TempDir(), "data"))
	defer s.stop()
	// Chromium matches the keys of the chain the server sends (the leaf
	// and pebble's intermediate), not those of a root it would add: the
	// root's alone is refused (ERR_CERT_AUTHORITY_INVALID).
	intermediate := p.issuer(t, "/intermediates/0")
	ctx := browsertest.NewMapped(t, []string{testDomain}, []string{spkiHash(intermediate)})

	base := "https://" + testDomain + ":" + port(p.httpsAddr)
	doc, err := chromedp.Run(ctx, chromedp.NavigateResponse(base+"/"))
	if err != nil {
		t.Fatalf("open %s/: %v\n%s", base, err, s.printed+s.output())
	}
	eval := func(js string) string {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	const nextHop = `performance.getEntriesByType('navigation')[0].nextHopProtocol`
	if proto := eval(nextHop); proto != "h2" || doc.Protocol != "h2" {
		t.Errorf("the page came over %q (response: %q), want h2", proto, doc.Protocol)
	}
	if href, title := eval(`location.href`), eval(`document.title`); !strings.HasPrefix(href, base+"/") || !strings.Contains(title, "Foundry") || doc.Status != 200 {
		t.Errorf("the app's page: %d at %q titled %q, want Foundry's, 200, under %s/", doc.Status, href, title, base)
	}
	if doc.SecurityState != "secure" || doc.SecurityDetails == nil {
		t.Fatalf("the page's security state is %q (%+v), want secure", doc.SecurityState, doc.SecurityDetails)
	}
	if sec := doc.SecurityDetails; !slices.Contains(sec.SanList, testDomain) || sec.Issuer != intermediate.Subject.CommonName {
		t.Errorf("the page's certificate: names %q, issuer %q; want %s issued by %q", sec.SanList, sec.Issuer, testDomain, intermediate.Subject.CommonName)
	}

	// http:// is redirected to the same path on https.
	httpURL := "http://" + testDomain + ":" + port(p.httpAddr) + "/signin"
	if _, err := chromedp.Run(ctx, chromedp.Navigate(httpURL)); err != nil {
		t.Fatalf("open %s: %v", httpURL, err)
	}
	if href, proto := eval(`location.href`), eval(nextHop); !strings.HasPrefix(href, base+"/signin") || proto != "h2" {
		t.Errorf("%s ended at %q over %q, want %s/signin over h2", httpURL, href, proto, base)
	}
}
