// Package urlnorm turns a citation URL into the key that sources are deduped
// by (SPEC §2): one page, however it was spelled, is attached to a Note once.
package urlnorm

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"foundry/internal/problem"
)

// MaxLen bounds the input, in characters, so a key (and a stored URL) stays
// a sane size; MaxBytes bounds its UTF-8 form.
const (
	MaxLen   = 2048
	MaxBytes = 4 * MaxLen
)

// Normalize returns the dedupe key of raw: https, the host in its ASCII
// (punycode) form, lower-case, without "www." and a trailing dot, no default
// port, no fragment, no utm_* parameters (others keep their order), percent-
// escapes in one spelling (unreserved characters decoded, hex upper-case, RFC
// 3986 §6.2.2), no "." or ".." segments, no trailing slash. A URL with a
// user name or password, or with control or bidi characters anywhere, is
// refused. Errors are *problem.Problem with field "url".
func Normalize(raw string) (string, error) {
	u, host, err := parse(raw)
	if err != nil {
		return "", err
	}
	host = strings.TrimPrefix(host, "www.")
	port := strings.TrimLeft(u.Port(), "0")
	if u.Port() != "" && port == "" {
		port = "0"
	}
	if port != "" && port != "80" && port != "443" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6 literal
	}
	key := "https://" + host + strings.TrimRight(removeDotSegments(normalizeEscapes(u.EscapedPath())), "/")
	if q := stripUTM(u.RawQuery); q != "" {
		key += "?" + q
	}
	return key, nil
}

// Canonical returns raw as it is stored for display: trimmed, and with
// "https://" in front when it had no scheme. It fails exactly when Normalize
// does.
func Canonical(raw string) (string, error) {
	if _, _, err := parse(raw); err != nil {
		return "", err
	}
	return withScheme(strings.TrimSpace(raw)), nil
}

// withScheme puts https in front of an address without a scheme
// ("example.org/a", or "//example.org/a" relative to the scheme).
func withScheme(s string) string {
	switch {
	case hasScheme(s):
		return s
	case strings.HasPrefix(s, "//"):
		return "https:" + s
	}
	return "https://" + s
}

// parse checks raw and returns it as a URL with an http(s) scheme, and its
// host in the form the key uses.
func parse(raw string) (*url.URL, string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return nil, "", invalid("url is empty; give an http or https address such as https://example.org/page")
	case !utf8.ValidString(s):
		return nil, "", invalid("url is not valid UTF-8")
	case utf8.RuneCountInString(s) > MaxLen:
		return nil, "", problem.New(problem.Limit, "url", "url is %d characters; at most %d characters are accepted (url length limit)", utf8.RuneCountInString(s), MaxLen)
	case len(s) > MaxBytes:
		return nil, "", problem.New(problem.Limit, "url", "url is %d bytes in UTF-8; at most %d bytes are accepted (url length limit)", len(s), MaxBytes)
	}
	if i := strings.IndexFunc(s, hidden); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return nil, "", invalid("url contains the control, bidi or invisible character %U; an address can't hold one (percent-encode it if the page's address really has it)", r)
	}
	s = withScheme(s)
	u, err := url.Parse(s)
	if err != nil {
		return nil, "", invalid("url is not a valid address%s; give an address such as https://example.org/page", parseReason(err))
	}
	if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
		return nil, "", invalid("url scheme %s is not accepted; only http and https are accepted", quote(u.Scheme))
	}
	if u.User != nil {
		return nil, "", invalid("url carries a user name or password (\"user:password@\" before the host); a citation never stores credentials: send the page's address without them")
	}
	host := u.Hostname()
	if host == "" {
		return nil, "", invalid("url has no host; give an address such as https://example.org/page")
	}
	host, err = normalizeHost(host)
	if err != nil {
		return nil, "", err
	}
	return u, host, nil
}

// normalizeHost gives the host one spelling: IP literals as they are, a name
// in lower-case ASCII with IDN labels in punycode (UTS #46 lookup mapping,
// so "bücher.example", "BÜCHER.example", "xn--bcher-kva.example" and a name
// written with full-width dots are one host), without a trailing dot.
func normalizeHost(host string) (string, error) {
	if i := strings.IndexFunc(host, hidden); i >= 0 {
		r, _ := utf8.DecodeRuneInString(host[i:])
		return "", invalid("url host contains the control, bidi or invisible character %U; a host can't hold one", r)
	}
	if ip := net.ParseIP(strings.SplitN(host, "%", 2)[0]); ip != nil {
		return strings.ToLower(host), nil
	}
	ascii := true
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	lower := strings.ToLower(host)
	if ascii && !strings.HasPrefix(lower, "xn--") && !strings.Contains(lower, ".xn--") {
		// A plain ASCII name (underscores and all, which strict IDNA refuses).
		return strings.TrimSuffix(lower, "."), nil
	}
	out, err := idna.Lookup.ToASCII(host)
	if err != nil || out == "" {
		return "", invalid("url host %s is not a valid internationalized domain name; give the host as its owner spells it", quote(host))
	}
	return strings.TrimSuffix(strings.ToLower(out), "."), nil
}

// hidden reports characters no address may hold: controls, format
// characters (bidi controls and marks, zero-width characters, BOM) and line
// or paragraph separators.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// parseReason names what net/url refused, in words of our own.
func parseReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ee url.EscapeError
	var he url.InvalidHostError
	switch {
	case errors.As(err, &ee):
		return " (a '%' escape is malformed, or not allowed where it stands)"
	case errors.As(err, &he):
		return " (the host holds a character a host can't have)"
	}
	return ""
}

// unreserved are the characters RFC 3986 §2.3 says mean the same escaped or
// not.
func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// normalizeEscapes decodes percent-escapes of unreserved characters and
// upper-cases the hex of the others (RFC 3986 §6.2.2.1–2), so "%7E", "%7e"
// and "~" are one spelling.
func normalizeEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if c := byte(v); unreserved(c) {
				b.WriteByte(c)
			} else {
				b.WriteByte('%')
				b.WriteString(strings.ToUpper(s[i+1 : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// removeDotSegments resolves "." and ".." segments (RFC 3986 §5.2.4), so
// "/a/./b/../c" and "/a/c" are one page.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
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

// stripUTM drops utm_* parameters and keeps the others in order, with their
// percent-escapes in one spelling, so that the key doesn't depend on how
// url.Values would re-encode them.
func stripUTM(rawQuery string) string {
	var kept []string
	for _, p := range strings.Split(rawQuery, "&") {
		if p == "" {
			continue
		}
		p = normalizeEscapes(p)
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

// quote renders a value for a message: quoted and cut to a short excerpt,
// so a refusal never echoes a long address back.
func quote(s string) string {
	const show = 64
	if utf8.RuneCountInString(s) <= show {
		return strconv.Quote(s)
	}
	n := 0
	for i := range s {
		if n == show {
			return strconv.Quote(s[:i]) + "…"
		}
		n++
	}
	return strconv.Quote(s)
}

func invalid(msg string, args ...any) *problem.Problem {
	return problem.New(problem.Invalid, "url", msg, args...)
}
