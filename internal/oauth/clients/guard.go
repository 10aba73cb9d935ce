package clients

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// FetchTimeout bounds one metadata document fetch, from dial to the last
// byte.
const FetchTimeout = 5 * time.Second

// FetchPort is the only port a metadata document is fetched from: a client
// ID URL naming another port would let anyone make Foundry open
// connections to arbitrary services of public hosts.
const FetchPort = 443

// Guard decides where a metadata document may be fetched from. It is
// applied when a connection is dialled, to the resolved address, so a name
// that resolves (or is rebound) to a private address is refused too.
type Guard struct {
	// RootCAs verifies the documents' servers (nil: the system roots).
	RootCAs *x509.CertPool
	// Allow, when set, lets an address the guard would refuse through if it
	// answers true. Only tests set it (to reach an httptest server on
	// loopback); a server never does.
	Allow func(netip.AddrPort) bool
}

// RefusedError is a dial the guard refused: no connection was made.
type RefusedError struct {
	Addr   netip.AddrPort
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s", e.Addr, e.Reason)
}

// NewHTTPClient is the HTTP client metadata documents are fetched with:
// every dial goes through g, no proxy, no cookies, no redirects followed,
// TLS 1.2 or later, FetchTimeout overall.
func NewHTTPClient(g Guard) *http.Client {
	d := &net.Dialer{Timeout: FetchTimeout, KeepAlive: 30 * time.Second, Control: g.control}
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would be dialled instead of the checked address
		DialContext:            d.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: g.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    FetchTimeout,
		ResponseHeaderTimeout:  FetchTimeout,
		MaxResponseHeaderBytes: 32 << 10,
		MaxIdleConns:           16,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        time.Minute,
	}
	return &http.Client{Transport: tr, Timeout: FetchTimeout, CheckRedirect: noRedirect}
}

// noRedirect hands a redirect back as the response, which fetch refuses:
// the redirect's target is never dialled.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// control runs before every connect with the address about to be dialled.
func (g Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused to connect to %q: not an IP address and port", address)
	}
	if g.Allow != nil && g.Allow(ap) {
		return nil
	}
	if why := RefusedAddr(ap.Addr()); why != "" {
		return &RefusedError{Addr: ap, Reason: why}
	}
	if ap.Port() != FetchPort {
		return &RefusedError{Addr: ap, Reason: fmt.Sprintf("port %d: metadata documents are fetched from port %d only", ap.Port(), FetchPort)}
	}
	return nil
}

// special are address blocks that are not the public internet, beyond
// those netip.Addr's methods know.
var special = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address (0.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared address (CGNAT, 100.64.0.0/10)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address (198.18.0.0/15)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address (240.0.0.0/4)"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible IPv6 address (::/96)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address (64:ff9b:1::/48)"},
	{netip.MustParsePrefix("100::/64"), "a discard address (100::/64)"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address (2001::/32)"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (fec0::/10)"},
}

var (
	metadataAddr = netip.MustParseAddr("169.254.169.254")
	nat64        = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour    = netip.MustParsePrefix("2002::/16")
)

// RefusedAddr says why a metadata document is never fetched from a (a
// loopback, private, link-local, unspecified, multicast or otherwise
// non-public address, also in IPv4-mapped, NAT64 or 6to4 form), or "" for
// a public address.
func RefusedAddr(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	switch {
	case !a.IsValid():
		return "not an IP address"
	case a == metadataAddr:
		return "the cloud metadata address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	if a.Is4() && a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "the broadcast address"
	}
	// IPv6 forms that carry an IPv4 address: judged by that address.
	if nat64.Contains(a) {
		b := a.As16()
		if why := RefusedAddr(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
			return why + " (in NAT64 form)"
		}
	}
	if sixToFour.Contains(a) {
		b := a.As16()
		if why := RefusedAddr(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
			return why + " (in 6to4 form)"
		}
	}
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.why
		}
	}
	return ""
}
