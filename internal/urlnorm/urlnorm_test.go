package urlnorm

import (
	"errors"
	"strings"
	"testing"

	"foundry/internal/problem"
)

// The seven spellings of one page that the seeds' experiments attach.
var samePage = []string{
	"https://example.org/a",
	"https://example.org/a/",
	"https://www.example.org/a",
	"https://example.org/a?utm_source=x&utm_medium=y",
	"https://example.org/a#section",
	"http://example.org/a",
	"example.org/a",
}

func TestNormalizeSevenSpellingsOfOnePageAreEqual(t *testing.T) {
	for _, raw := range samePage {
		got, err := Normalize(raw)
		if err != nil {
			t.Fatalf("Normalize(%q): %v", raw, err)
		}
		if got != "https://example.org/a" {
			t.Errorf("Normalize(%q) = %q, want %q", raw, got, "https://example.org/a")
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"root path becomes empty", "https://example.org/", "https://example.org"},
		{"bare host gets https", "example.org", "https://example.org"},
		{"host is lower-cased, path is not", "HTTPS://WWW.Example.ORG/Report", "https://example.org/Report"},
		{"surrounding whitespace trimmed", "  \thttps://example.org/a \n", "https://example.org/a"},
		{"default https port removed", "https://example.org:443/a", "https://example.org/a"},
		{"default http port removed", "http://example.org:80/a", "https://example.org/a"},
		{"other port kept", "http://example.org:8080/a", "https://example.org:8080/a"},
		{"default port with leading zeros removed", "https://example.org:0443/a", "https://example.org/a"},
		{"other port without leading zeros", "https://example.org:08080/a", "https://example.org:8080/a"},
		{"host and port without scheme", "localhost:8080/a", "https://localhost:8080/a"},
		{"utm params dropped case-insensitively, others kept in order", "https://example.org/a?z=1&UTM_Campaign=q&b=2&utm_term=t&a=3", "https://example.org/a?z=1&b=2&a=3"},
		{"only utm params leaves no question mark", "https://example.org/a?utm_source=x", "https://example.org/a"},
		{"trailing slashes before query removed", "https://example.org/a/b//?q=1", "https://example.org/a/b?q=1"},
		{"param named like utm but without prefix kept", "https://example.org/a?xutm_source=1", "https://example.org/a?xutm_source=1"},
		{"ipv6 literal keeps brackets", "http://[::1]:443/a", "https://[::1]/a"},
		{"only the leading www is removed", "https://docs.www.example.org/a", "https://docs.www.example.org/a"},
		{"escaped path kept escaped", "https://example.org/a%20b/", "https://example.org/a%20b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Normalize(tt.in)
			if err != nil {
				t.Fatalf("Normalize(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeRejects(t *testing.T) {
	tests := []struct {
		name, in string
		code     string
		mention  []string // substrings the message must contain
	}{
		{"javascript scheme", "javascript:alert(1)", problem.Invalid, []string{`"javascript"`, "only http and https"}},
		{"data scheme", "data:text/html,<b>hi</b>", problem.Invalid, []string{`"data"`, "only http and https"}},
		{"ftp scheme", "ftp://example.org/file", problem.Invalid, []string{`"ftp"`, "only http and https"}},
		{"mailto scheme", "mailto:someone@example.org", problem.Invalid, []string{`"mailto"`, "only http and https"}},
		{"scheme with nothing after it", "javascript:", problem.Invalid, []string{`"javascript"`, "only http and https"}},
		{"file scheme", "file:///etc/passwd", problem.Invalid, []string{`"file"`, "only http and https"}},
		{"empty", "", problem.Invalid, []string{"empty"}},
		{"spaces only", "   \t ", problem.Invalid, []string{"empty"}},
		{"empty host", "https:///a", problem.Invalid, []string{"no host"}},
		{"scheme without slashes has no host", "http:example.org", problem.Invalid, []string{"no host"}},
		{"space in host", "https://exa mple.org/", problem.Invalid, []string{"not a valid address"}},
		{"too long", "https://example.org/" + strings.Repeat("a", MaxLen), problem.Limit, []string{"2048"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []func(string) (string, error){Normalize, Canonical} {
				got, err := f(tt.in)
				var p *problem.Problem
				if !errors.As(err, &p) {
					t.Fatalf("(%q) = %q, %v; want a *problem.Problem", tt.in, got, err)
				}
				if p.Code != tt.code || p.Field != "url" {
					t.Errorf("(%q): code %q field %q, want %q field url", tt.in, p.Code, p.Field, tt.code)
				}
				for _, m := range tt.mention {
					if !strings.Contains(p.Message, m) {
						t.Errorf("(%q): message %q does not mention %q", tt.in, p.Message, m)
					}
				}
			}
		})
	}
}

func TestNormalizeAcceptsExactlyMaxLen(t *testing.T) {
	in := "https://example.org/" + strings.Repeat("a", MaxLen-len("https://example.org/"))
	if _, err := Normalize(in); err != nil {
		t.Fatalf("a %d-character url was refused: %v", len(in), err)
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no scheme gets https", "example.org/a", "https://example.org/a"},
		{"trimmed", "  https://example.org/a  ", "https://example.org/a"},
		{"scheme-relative gets https", "//example.org/a", "https://example.org/a"},
		{"http kept as written", "http://Example.org/a/?utm_source=x#f", "http://Example.org/a/?utm_source=x#f"},
		{"host and port without scheme", "example.org:8080/a", "https://example.org:8080/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical(tt.in)
			if err != nil {
				t.Fatalf("Canonical(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Normalizing a key again must not change it, or stored keys would drift.
func TestNormalizeIsIdempotent(t *testing.T) {
	for _, raw := range append(samePage, "http://Example.org:8080/x/?b=1&utm_x=2#f", "example.org") {
		once, err := Normalize(raw)
		if err != nil {
			t.Fatal(err)
		}
		twice, err := Normalize(once)
		if err != nil || twice != once {
			t.Errorf("Normalize(Normalize(%q)) = %q, %v; want %q", raw, twice, err, once)
		}
	}
}

// Userinfo is refused, in every spelling: credentials must never be stored
// in a citation (and "https://trusted@evil" reads like another host).
func TestUserinfoIsRefused(t *testing.T) {
	for _, in := range []string{
		"https://alice:pw@example.org/a",
		"https://alice@example.org/a",
		"https://:pw@example.org/a",
		"https://@example.org/a",
		"http://alice:pw@example.org:8080/",
		"//alice:pw@example.org/a",
		"https://example.org%40evil.example@good.example/",
		"https://al%69ce:p%77@example.org/",
	} {
		for _, f := range []func(string) (string, error){Normalize, Canonical} {
			got, err := f(in)
			var p *problem.Problem
			if !errors.As(err, &p) || p.Code != problem.Invalid || p.Field != "url" {
				t.Errorf("(%q) = %q, %v; want invalid_argument on url", in, got, err)
				continue
			}
			if strings.Contains(p.Message, "pw") || strings.Contains(p.Message, "alice") {
				t.Errorf("(%q): the refusal echoes the credentials: %q", in, p.Message)
			}
		}
	}
}

// One host, one key: IDN in Unicode, in punycode, in other cases, with
// full-width dots, and with a trailing dot.
func TestIDNSpellingsOfOneHostAreOneKey(t *testing.T) {
	const want = "https://xn--bcher-kva.example/a"
	for _, in := range []string{
		"https://bücher.example/a",
		"https://BÜCHER.example/a",
		"https://xn--bcher-kva.example/a",
		"https://XN--BCHER-KVA.example/a",
		"https://www.bücher.example/a",
		"https://bücher．example/a",
		"https://bücher.example./a",
		"bücher.example/a",
		"https://b%C3%BCcher.example/a",
	} {
		got, err := Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if got, err := Normalize("https://example.org./a"); err != nil || got != "https://example.org/a" {
		t.Errorf("trailing dot: %q, %v", got, err)
	}
	if got, err := Normalize("https://my_host.example/a"); err != nil || got != "https://my_host.example/a" {
		t.Errorf("an ASCII host with an underscore: %q, %v; want it kept", got, err)
	}
	for _, in := range []string{"https://xn--zz.example/", "https://xn--a-ecp.example/"} {
		if _, err := Normalize(in); err == nil {
			t.Errorf("Normalize(%q) accepted broken punycode", in)
		}
	}
}

// RFC 3986 §6.2.2: escapes of unreserved characters, and the case of hex
// digits, do not change the page; neither do "." and ".." segments.
func TestPercentEscapesAndDotSegmentsAreOneKey(t *testing.T) {
	tests := []struct {
		want string
		ins  []string
	}{
		{"https://example.org/~alice/a-b_c.d", []string{
			"https://example.org/~alice/a-b_c.d",
			"https://example.org/%7Ealice/a-b_c.d",
			"https://example.org/%7ealice/a%2Db%5Fc%2Ed",
			"https://example.org/%7E%61lice/a-b_c.d",
			"https://example.org/x/../~alice/./a-b_c.d",
			"https://example.org/x/%2E%2E/~alice/a-b_c.d",
		}},
		{"https://example.org/caf%C3%A9", []string{
			"https://example.org/café",
			"https://example.org/caf%C3%A9",
			"https://example.org/caf%c3%a9",
		}},
		{"https://example.org/a%2Fb", []string{"https://example.org/a%2Fb", "https://example.org/a%2fb"}},
		{"https://example.org/s?q=~x&r=%2F", []string{"https://example.org/s?q=%7Ex&r=%2f", "https://example.org/s?q=~x&r=%2F"}},
	}
	for _, tt := range tests {
		for _, in := range tt.ins {
			got, err := Normalize(in)
			if err != nil || got != tt.want {
				t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, tt.want)
			}
			if twice, err := Normalize(got); err != nil || twice != got {
				t.Errorf("Normalize(%q) = %q, %v; not idempotent", got, twice, err)
			}
		}
	}
}

// Control, bidi and invisible characters are refused anywhere in a URL, and
// in a host also when percent-encoded.
func TestHiddenCharactersAreRefused(t *testing.T) {
	for _, in := range []string{
		"https://exa\u202emple.org/",
		"https://example.org/\u202egnp.exe",
		"https://exa\u200bmple.org/",
		"https://example.org/a\u2066b",
		"https://example.org/a\u200fb",
		"https://example.org/a\u061cb",
		"https://example.org/\ufeff",
		"https://exa%E2%80%AEmple.org/",
		"https://exa%E2%80%8Bmple.org/",
		"https://example.org/a\x00b",
		"https://example.org/a\x1bb",
		"https://example.org/a\u0085b",
		"https://example.org/a\u2028b",
		"https://example.org/\xff",
	} {
		for _, f := range []func(string) (string, error){Normalize, Canonical} {
			got, err := f(in)
			var p *problem.Problem
			if !errors.As(err, &p) || p.Code != problem.Invalid || p.Field != "url" {
				t.Errorf("(%q) = %q, %v; want invalid_argument on url", in, got, err)
			}
		}
	}
}

// A refusal quotes at most a short excerpt of the URL, once, and never the
// decoder's text.
func TestRefusalsDoNotEchoTheURL(t *testing.T) {
	long := "https://exa mple.org/" + strings.Repeat("a", MaxLen-30)
	_, err := Normalize(long)
	var p *problem.Problem
	if !errors.As(err, &p) {
		t.Fatal(err)
	}
	if len(p.Message) > 400 || strings.Contains(p.Message, "parse ") {
		t.Errorf("message is %d bytes: %q", len(p.Message), p.Message)
	}
	if _, err := Normalize("https://example.org/" + strings.Repeat("é", MaxLen-20)); err != nil {
		t.Errorf("a url of %d characters (more bytes) was refused: %v", MaxLen, err)
	}
	_, err = Normalize("https://example.org/" + strings.Repeat("é", MaxLen))
	if !errors.As(err, &p) || p.Code != problem.Limit || !strings.Contains(p.Message, "characters") {
		t.Errorf("over-long url: %v", err)
	}
}
