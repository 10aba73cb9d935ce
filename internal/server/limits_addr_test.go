package server

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestClientAddressTrustsForwardedForOnlyFromATrustedProxy(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	trusting := newLimits(Limits{PerAddress: 1, TrustedProxies: proxies}, prometheus.NewRegistry(), nil)
	plain := newLimits(Limits{PerAddress: 1}, prometheus.NewRegistry(), nil)
	for _, c := range []struct {
		name, remote string
		xff          []string
		l            *limits
		want         string
	}{
		{"no proxy trusted: the header is ignored", "192.0.2.7:5000", []string{"198.51.100.1"}, plain, "192.0.2.7/32"},
		{"a peer that is no trusted proxy: ignored", "192.0.2.7:5000", []string{"198.51.100.1"}, trusting, "192.0.2.7/32"},
		{"a trusted proxy: the client it names", "10.1.2.3:5000", []string{"198.51.100.1"}, trusting, "198.51.100.1/32"},
		{"the nearest untrusted hop, not what the client wrote first", "10.1.2.3:5000", []string{"203.0.113.9, 198.51.100.1, 10.9.9.9"}, trusting, "198.51.100.1/32"},
		{"hops over several headers", "10.1.2.3:5000", []string{"203.0.113.9", "198.51.100.1"}, trusting, "198.51.100.1/32"},
		{"garbage stops the walk at the last good hop", "10.1.2.3:5000", []string{"203.0.113.9, not-an-ip, 10.2.2.2"}, trusting, "10.2.2.2/32"},
		{"a trusted proxy without the header: the proxy", "10.1.2.3:5000", nil, trusting, "10.1.2.3/32"},
		{"IPv6 counts by its /64", "[2001:db8:1:2:3:4:5:6]:443", nil, plain, "2001:db8:1:2::/64"},
		{"IPv4 mapped in IPv6 is IPv4", "[::ffff:192.0.2.7]:443", nil, plain, "192.0.2.7/32"},
		{"a trusted IPv6 proxy", "[::1]:443", []string{"2001:db8::1"}, trusting, "2001:db8::/64"},
	} {
		r := httptest.NewRequest("GET", "/api/notes", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := c.l.clientAddr(r).String(); got != c.want {
			t.Errorf("%s: %s", c.name, got)
		}
	}
}

func TestCredentialKeysNeverHoldTheSecret(t *testing.T) {
	l := newLimits(Limits{PerToken: 1}, prometheus.NewRegistry(), nil)
	r := httptest.NewRequest("GET", "/api/notes", nil)
	r.Header.Set("Authorization", "Bearer fdy_secret")
	k1, ok := l.credential(r, doorREST)
	r.Header.Set("Authorization", "bearer\tfdy_secret ")
	k2, _ := l.credential(r, doorREST)
	if !ok || k1 != k2 {
		t.Fatalf("the same token spelled two ways: %v %v %v", k1, k2, ok)
	}
	r.Header.Set("Authorization", "Bearer fdy_other")
	if k3, _ := l.credential(r, doorREST); k3 == k1 {
		t.Fatal("two tokens, one key")
	}
	c := httptest.NewRequest("GET", "/api/notes", nil)
	c.Header.Set("Cookie", "foundry_session=abc")
	if _, ok := l.credential(c, doorREST); !ok {
		t.Error("a browser session is a credential on the API")
	}
	if _, ok := l.credential(c, doorMCP); ok {
		t.Error("the MCP endpoint takes no session cookie: it should not key by one")
	}
}
