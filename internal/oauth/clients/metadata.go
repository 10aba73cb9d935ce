// Package clients knows the OAuth clients of Foundry's authorization server:
// clients registered at /register (RFC 7591), clients whose ID is the https
// URL of a client ID metadata document (fetched through an SSRF guard and
// cached), and clients added with `foundry client add`. The authorization
// server asks it for a client with Registry.Lookup.
package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"foundry/internal/auth"
	"foundry/internal/problem"
)

// Token endpoint authentication methods.
const (
	AuthNone        = "none"
	AuthSecretBasic = "client_secret_basic"
	AuthSecretPost  = "client_secret_post"
)

// Grant and response types a client may use.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	ResponseCode           = "code"
)

// Limits of client metadata.
const (
	MaxBody         = 64 << 10 // a registration body or a metadata document
	MaxRedirectURIs = 20
	MaxURI          = 2000 // bytes of one URI
	MaxName         = 200  // characters of client_name
	MaxText         = 200  // characters of software_id, software_version
)

// Error codes of RFC 7591 §3.2.2.
const (
	CodeInvalidRedirectURI = "invalid_redirect_uri"
	CodeInvalidMetadata    = "invalid_client_metadata"
)

// Error is client metadata refused: the RFC 7591 error code, the field and
// what is wrong with it and how to fix it.
type Error struct {
	Code  string // CodeInvalidRedirectURI or CodeInvalidMetadata
	Field string // e.g. "redirect_uris[1]"
	Msg   string
}

func (e *Error) Error() string { return e.Field + ": " + e.Msg }

func invalid(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidMetadata, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func invalidRedirect(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRedirectURI, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Metadata is the client metadata Foundry keeps (RFC 7591 §2): what is
// stored in store.Client.Metadata and answered by /register. Other fields
// of a registration or a document are ignored.
type Metadata struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
}

// parseMetadata reads a JSON object of client metadata. Each known field
// must have its JSON type (null is the field left out); unknown fields are
// ignored. clientID, when not nil, receives the "client_id" member (a
// metadata document carries it).
func parseMetadata(body []byte, clientID *string) (Metadata, *Error) {
	var m Metadata
	dec := json.NewDecoder(bytes.NewReader(body))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil || obj == nil {
		why := "it is not a JSON object"
		if err != nil {
			why = "it is not a JSON object (" + err.Error() + ")"
		}
		return m, invalid("body", "%s: send the client metadata as one JSON object, e.g. {\"redirect_uris\":[\"https://app.example.com/callback\"]}", why)
	}
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return m, invalid("body", "there is more after the JSON object: send one object only")
	}
	str := func(name string, dst *string) *Error {
		raw, ok := obj[name]
		if !ok || string(raw) == "null" {
			return nil
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return invalid(name, "must be a JSON string")
		}
		return nil
	}
	list := func(name string, dst *[]string) *Error {
		raw, ok := obj[name]
		if !ok || string(raw) == "null" {
			return nil
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return invalid(name, "must be a JSON array of strings")
		}
		if *dst == nil {
			*dst = []string{}
		}
		return nil
	}
	for _, e := range []*Error{
		list("redirect_uris", &m.RedirectURIs),
		str("token_endpoint_auth_method", &m.TokenEndpointAuthMethod),
		list("grant_types", &m.GrantTypes),
		list("response_types", &m.ResponseTypes),
		str("client_name", &m.ClientName),
		str("client_uri", &m.ClientURI),
		str("logo_uri", &m.LogoURI),
		str("scope", &m.Scope),
		str("software_id", &m.SoftwareID),
		str("software_version", &m.SoftwareVersion),
	} {
		if e != nil {
			if e.Field == "redirect_uris" {
				e.Code = CodeInvalidRedirectURI
			}
			return m, e
		}
	}
	if clientID != nil {
		if e := str("client_id", clientID); e != nil {
			return m, e
		}
	}
	return m, nil
}

// normalize checks m and fills in the defaults. A metadata document
// (document true) cannot hold a secret, so its only auth method is none;
// and since it is written for other servers too, scopes Foundry does not
// know are ignored in it, and a client_uri or logo_uri that is not an
// https URL is left out rather than refused.
func normalize(m Metadata, document bool) (Metadata, *Error) {
	if m.RedirectURIs == nil {
		return m, invalidRedirect("redirect_uris", "is required: list the URIs the client receives its authorization codes at, e.g. [\"http://127.0.0.1/callback\"]")
	}
	if len(m.RedirectURIs) == 0 {
		return m, invalidRedirect("redirect_uris", "is empty: list at least one URI the client receives its authorization codes at")
	}
	if len(m.RedirectURIs) > MaxRedirectURIs {
		return m, invalidRedirect("redirect_uris", "has %d URIs; at most %d are kept", len(m.RedirectURIs), MaxRedirectURIs)
	}
	var uris []string
	for i, u := range m.RedirectURIs {
		if e := CheckRedirectURI(fmt.Sprintf("redirect_uris[%d]", i), u); e != nil {
			return m, e
		}
		if !slices.Contains(uris, u) {
			uris = append(uris, u)
		}
	}
	m.RedirectURIs = uris

	switch m.TokenEndpointAuthMethod {
	case "":
		m.TokenEndpointAuthMethod = AuthNone
	case AuthNone:
	case AuthSecretBasic, AuthSecretPost:
		if document {
			return m, invalid("token_endpoint_auth_method", "is %q, but a client ID metadata document cannot carry a secret: use \"none\" (PKCE) or leave it out", m.TokenEndpointAuthMethod)
		}
	default:
		if document {
			return m, invalid("token_endpoint_auth_method", "%q is not supported: a client ID metadata document's client uses \"none\" (PKCE); leave it out", excerpt(m.TokenEndpointAuthMethod))
		}
		return m, invalid("token_endpoint_auth_method", "%q is not supported: use \"none\" (a public client with PKCE), \"client_secret_basic\" or \"client_secret_post\"", excerpt(m.TokenEndpointAuthMethod))
	}

	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{GrantAuthorizationCode, GrantRefreshToken}
	} else {
		var gs []string
		for i, g := range m.GrantTypes {
			if g != GrantAuthorizationCode && g != GrantRefreshToken {
				return m, invalid(fmt.Sprintf("grant_types[%d]", i), "%q is not supported: use %q and %q (or leave grant_types out)", excerpt(g), GrantAuthorizationCode, GrantRefreshToken)
			}
			if !slices.Contains(gs, g) {
				gs = append(gs, g)
			}
		}
		if !slices.Contains(gs, GrantAuthorizationCode) {
			return m, invalid("grant_types", "must include %q: it is how a client is first authorized", GrantAuthorizationCode)
		}
		m.GrantTypes = gs
	}

	if len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{ResponseCode}
	} else {
		for i, rt := range m.ResponseTypes {
			if rt != ResponseCode {
				return m, invalid(fmt.Sprintf("response_types[%d]", i), "%q is not supported: the only response type is \"code\"", excerpt(rt))
			}
		}
		m.ResponseTypes = []string{ResponseCode}
	}

	name := strings.TrimSpace(m.ClientName)
	if e := checkText("client_name", name, MaxName); e != nil {
		return m, e
	}
	m.ClientName = name
	for _, f := range []struct {
		name string
		v    *string
	}{{"client_uri", &m.ClientURI}, {"logo_uri", &m.LogoURI}} {
		if *f.v == "" {
			continue
		}
		if e := checkWebURI(f.name, *f.v); e != nil {
			if document { // only shown on the consent page: left out, not fatal
				*f.v = ""
				continue
			}
			return m, e
		}
	}
	scopes, e := parseScope(m.Scope, document)
	if e != nil {
		return m, e
	}
	if len(scopes) == 0 { // every scope: what the client asks for is chosen at consent
		scopes = []string{auth.ScopeRead, auth.ScopeWrite}
	}
	m.Scope = strings.Join(scopes, " ")
	for _, f := range []struct {
		name string
		v    *string
	}{{"software_id", &m.SoftwareID}, {"software_version", &m.SoftwareVersion}} {
		*f.v = strings.TrimSpace(*f.v)
		if e := checkText(f.name, *f.v, MaxText); e != nil {
			return m, e
		}
	}
	return m, nil
}

// CheckRedirectURI checks one redirect URI (field names it): absolute, no
// fragment, no user info; http only for a loopback host (127.0.0.1, [::1],
// localhost: RFC 8252 §7.3); https with a host; or a private-use scheme of
// a native app (RFC 8252 §7.1, e.g. com.example.app:/callback), but never a
// scheme a browser would run or read locally (javascript:, data:, file:…).
func CheckRedirectURI(field, s string) *Error {
	if s == "" {
		return invalidRedirect(field, "is empty: give an absolute URI such as http://127.0.0.1/callback or https://app.example.com/callback")
	}
	if len(s) > MaxURI {
		return invalidRedirect(field, "is %d bytes long; a redirect URI has at most %d", len(s), MaxURI)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r > unicode.MaxASCII }) {
		return invalidRedirect(field, "%q has spaces, control or non-ASCII characters: percent-encode them", excerpt(s))
	}
	if strings.Contains(s, "#") {
		return invalidRedirect(field, "%q has a fragment (#…): a redirect URI must not have one (RFC 6749 §3.1.2)", excerpt(s))
	}
	u, err := url.Parse(s)
	if err != nil {
		return invalidRedirect(field, "%q is not a URI: give an absolute URI such as http://127.0.0.1/callback", excerpt(s))
	}
	if u.Scheme == "" {
		return invalidRedirect(field, "%q is not absolute: give the scheme and host, e.g. https://app.example.com/callback", excerpt(s))
	}
	if u.User != nil {
		return invalidRedirect(field, "%q has user info (user@): leave it out", excerpt(s))
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "http":
		if !IsLoopbackHost(u.Hostname()) {
			return invalidRedirect(field, "%q uses http on host %q: http is only for loopback redirects (127.0.0.1, [::1], localhost); use https", excerpt(s), excerpt(u.Hostname()))
		}
	case "https":
		if u.Hostname() == "" {
			return invalidRedirect(field, "%q has no host: give one, e.g. https://app.example.com/callback", excerpt(s))
		}
	default:
		if slices.Contains(unsafeSchemes, scheme) {
			return invalidRedirect(field, "%q uses the %s: scheme, which is never a redirect target: use https, loopback http, or a private-use scheme such as com.example.app:/callback", excerpt(s), scheme)
		}
		if u.Opaque != "" && u.Host == "" && !strings.HasPrefix(u.Opaque, "/") {
			return invalidRedirect(field, "%q is not a private-use redirect URI: write it as %s:/path (RFC 8252 §7.1)", excerpt(s), scheme)
		}
	}
	return nil
}

// unsafeSchemes are never a redirect target: a browser runs, reads
// locally, or hands them to another program.
var unsafeSchemes = []string{"javascript", "data", "vbscript", "file", "blob", "about", "filesystem", "view-source", "ws", "wss", "ftp", "mailto", "tel", "sms"}

// IsLoopbackHost reports whether host (without port or brackets) is a
// loopback redirect host: 127.0.0.1, ::1 or localhost.
func IsLoopbackHost(host string) bool {
	return host == "127.0.0.1" || host == "::1" || strings.EqualFold(host, "localhost")
}

// checkWebURI checks client_uri and logo_uri: absolute https URLs, shown to
// people on the consent page.
func checkWebURI(field, s string) *Error {
	if len(s) > MaxURI {
		return invalid(field, "is %d bytes long; at most %d are kept", len(s), MaxURI)
	}
	u, err := url.Parse(s)
	if err != nil || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return invalid(field, "%q is not a URL: give an https URL or leave it out", excerpt(s))
	}
	if !strings.EqualFold(u.Scheme, "https") || u.Hostname() == "" || u.User != nil {
		return invalid(field, "%q is not an https URL with a host (and no user info): give one or leave it out", excerpt(s))
	}
	return nil
}

// checkText refuses text shown to people that could mislead them: too long,
// invalid UTF-8, control characters, line separators or bidirectional
// controls (which can make a name read as another).
func checkText(field, s string, max int) *Error {
	if !utf8.ValidString(s) {
		return invalid(field, "is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return invalid(field, "is %d characters long; at most %d", n, max)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || isBidiControl(r) {
			return invalid(field, "has the invisible character U+%04X (a control, line separator or bidirectional control): remove it", r)
		}
	}
	return nil
}

func isBidiControl(r rune) bool {
	return r == '\u061c' || r == '\u200e' || r == '\u200f' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// parseScope reads a space-separated scope: each of osfoundry:read and
// osfoundry:write, duplicates dropped. offline_access is accepted and
// dropped: refresh tokens are issued without it. Other scopes are refused,
// or with lenient (a metadata document, which serves other servers too)
// ignored.
func parseScope(s string, lenient bool) ([]string, *Error) {
	var out []string
	for _, sc := range strings.Fields(s) {
		switch sc {
		case auth.ScopeRead, auth.ScopeWrite:
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		case "offline_access":
		default:
			if lenient {
				continue
			}
			return nil, invalid("scope", "%q is not a scope of Foundry: use %s and/or %s, separated by a space", excerpt(sc), auth.ScopeRead, auth.ScopeWrite)
		}
	}
	slices.Sort(out) // a fixed order (read, write), so equal scopes read the same
	return out, nil
}

// clientScopes are the scopes a client may ask for: those it registered
// (normalize makes that every scope when it named none).
func clientScopes(m Metadata) []string { return strings.Fields(m.Scope) }

// displayName is the name a client is listed by: its client_name, else the
// host (or scheme) of its first redirect URI.
func displayName(m Metadata) string {
	if m.ClientName != "" {
		return m.ClientName
	}
	if len(m.RedirectURIs) > 0 {
		if u, err := url.Parse(m.RedirectURIs[0]); err == nil {
			if h := u.Hostname(); h != "" {
				if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() || strings.EqualFold(h, "localhost") {
					return "unnamed local client"
				}
				return h
			}
			return u.Scheme
		}
	}
	return "unnamed client"
}

// excerpt cuts a value a client sent for quoting in a refusal.
func excerpt(s string) string { return problem.Excerpt(s) }
