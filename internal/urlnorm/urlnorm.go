// Package urlnorm turns a citation URL into the key that sources are deduped
// by (SPEC §2): one page, however it was spelled, is attached to a Note once.
package urlnorm

import (
	"net"
	"net/url"
	"strings"

	"foundry/internal/problem"
)

// MaxLen bounds the input so a key (and a stored URL) stays a sane size.
const MaxLen = 2048

// Normalize returns the dedupe key of raw: https, lower-case host without
// "www.", no default port, no userinfo, no fragment, no utm_* parameters
// (others keep their order), no trailing slash. Errors are *problem.Problem
// with field "url".
func Normalize(raw string) (string, error) {
	u, err := parse(raw)
	if err != nil {
		return "", err
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	if port := u.Port(); port != "" && port != "80" && port != "443" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6 literal
	}
	key := "https://" + host + strings.TrimRight(u.EscapedPath(), "/")
	if q := stripUTM(u.RawQuery); q != "" {
		key += "?" + q
	}
	return key, nil
}

// Canonical returns raw as it is stored for display: trimmed, and with
// "https://" in front when it had no scheme. It fails exactly when Normalize
// does.
func Canonical(raw string) (string, error) {
	if _, err := parse(raw); err != nil {
		return "", err
	}
	s := strings.TrimSpace(raw)
	if !hasScheme(s) {
		s = "https://" + s
	}
	return s, nil
}

// parse checks raw and returns it as a URL with an http(s) scheme.
func parse(raw string) (*url.URL, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return nil, invalid("url is empty; give an http or https address such as https://example.org/page")
	case len(s) > MaxLen:
		return nil, problem.New(problem.Limit, "url", "url is %d characters; at most %d are accepted (url length limit)", len(s), MaxLen)
	}
	if !hasScheme(s) {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, invalid("url %q is not a valid address: %v", raw, err)
	}
	if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
		return nil, invalid("url scheme %q is not accepted; only http and https are accepted", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, invalid("url %q has no host; give an address such as https://example.org/page", raw)
	}
	return u, nil
}

// hasScheme tells "example.org:8080/a" (a host and port, no scheme) from
// "javascript:alert(1)" or "https://x": a scheme is followed by something
// that is not a port number.
func hasScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 || !isSchemeName(s[:i]) {
		return false
	}
	rest := s[i+1:]
	if strings.HasPrefix(rest, "//") {
		return true
	}
	port, _, _ := strings.Cut(rest, "/")
	port, _, _ = strings.Cut(port, "?")
	port, _, _ = strings.Cut(port, "#")
	return port == "" || strings.Trim(port, "0123456789") != ""
}

func isSchemeName(s string) bool {
	for i, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// stripUTM drops utm_* parameters and keeps the others verbatim and in order,
// so that the key doesn't depend on how url.Values would re-encode them.
func stripUTM(rawQuery string) string {
	var kept []string
	for _, p := range strings.Split(rawQuery, "&") {
		if p == "" {
			continue
		}
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if strings.HasPrefix(strings.ToLower(name), "utm_") {
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "&")
}

func invalid(msg string, args ...any) *problem.Problem {
	return problem.New(problem.Invalid, "url", msg, args...)
}
