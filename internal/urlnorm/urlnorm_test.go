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
		{"host and port without scheme", "localhost:8080/a", "https://localhost:8080/a"},
		{"utm params dropped case-insensitively, others kept in order", "https://example.org/a?z=1&UTM_Campaign=q&b=2&utm_term=t&a=3", "https://example.org/a?z=1&b=2&a=3"},
		{"only utm params leaves no question mark", "https://example.org/a?utm_source=x", "https://example.org/a"},
		{"trailing slashes before query removed", "https://example.org/a/b//?q=1", "https://example.org/a/b?q=1"},
		{"param named like utm but without prefix kept", "https://example.org/a?xutm_source=1", "https://example.org/a?xutm_source=1"},
		{"userinfo dropped from the key", "https://user:pw@example.org/a", "https://example.org/a"},
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
