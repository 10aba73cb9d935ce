package main

import (
	"flag"
	"net/netip"
	"strings"

	"foundry/internal/ratelimit"
	"foundry/internal/server"
)

// maxLimitValue bounds the counts the limit flags take (a typo of a few
// zeros is refused rather than meaning "no limit" by accident).
const maxLimitValue = 1_000_000

// limitFlags registers serve's rate-limit flags (server.Limits) and
// returns what reads them, with a usage error naming the flag for a value
// that is no limit.
func limitFlags(fs *flag.FlagSet) func() (server.Limits, error) {
	d := server.DefaultLimits
	perToken := fs.String("rate-per-token", ratelimit.FormatRate(d.PerToken), "requests one token (or browser session) may make to /mcp and /api/, on average: N/s, N/m or N/h, or 0 for no limit; over it, REST answers 429 and a tool call a result with retry_after")
	burstToken := fs.Int("burst-per-token", 0, "requests one token may make at once within --rate-per-token (0: twice the rate per second)")
	perAddr := fs.String("rate-per-address", ratelimit.FormatRate(d.PerAddress), "requests one client address (an IPv6 /64) may make to /mcp and /api/, with or without a token: N/s, N/m or N/h, or 0 for no limit (an office behind one NAT is one address)")
	burstAddr := fs.Int("burst-per-address", 0, "requests one address may make at once within --rate-per-address (0: twice the rate per second)")
	concurrent := fs.Int("max-concurrent-per-token", d.ConcurrentPerToken, "requests one token may have in progress at once, long polls and event streams aside (0: no cap)")
	proxies := fs.String("trusted-proxies", "", "balancers whose X-Forwarded-For names the client for --rate-per-address, comma-separated addresses or CIDRs (e.g. 10.0.0.0/8); from any other peer the header is ignored")
	return func() (server.Limits, error) {
		var l server.Limits
		var err error
		if l.PerToken, err = ratelimit.ParseRate(*perToken); err != nil {
			return l, usagef("--rate-per-token: %v", err)
		}
		if l.PerAddress, err = ratelimit.ParseRate(*perAddr); err != nil {
			return l, usagef("--rate-per-address: %v", err)
		}
		for _, c := range []struct {
			name string
			v    int
		}{{"--burst-per-token", *burstToken}, {"--burst-per-address", *burstAddr}, {"--max-concurrent-per-token", *concurrent}} {
			if c.v < 0 || c.v > maxLimitValue {
				return l, usagef("%s: %d is not a count: give 0 to 1000000", c.name, c.v)
			}
		}
		l.BurstPerToken, l.BurstPerAddress, l.ConcurrentPerToken = *burstToken, *burstAddr, *concurrent
		if l.TrustedProxies, err = parseProxies(*proxies); err != nil {
			return l, err
		}
		return l, nil
	}
}

// parseProxies reads --trusted-proxies: addresses (one host each) and
// CIDRs.
func parseProxies(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range commaList(v) {
		if p, err := netip.ParsePrefix(s); err == nil {
			if p != p.Masked() {
				return nil, usagef("--trusted-proxies: %q has bits set past its prefix length: did you mean %s?", s, p.Masked())
			}
			if p.Addr().Is4In6() && p.Bits() >= 96 { // peers are compared unmapped
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p)
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return nil, usagef("--trusted-proxies: %q is not an address or a CIDR (e.g. 10.0.0.5 or 10.0.0.0/8)", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	if strings.TrimSpace(v) != "" && len(out) == 0 {
		return nil, usagef("--trusted-proxies: %q names no address", v)
	}
	return out, nil
}

// The limit flags' placeholders in help (see argNames).
func init() {
	argNames["rate-per-token"], argNames["rate-per-address"], argNames["trusted-proxies"] = "RATE", "RATE", "CIDRS"
}
