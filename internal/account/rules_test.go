package account_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/alexedwards/argon2id"

	"foundry/internal/account"
	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// TestPasswordRules: 8 to 1024 bytes (counted in bytes), UTF-8, no
// control characters; a refusal names the field.
func TestPasswordRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pw   string
		want string // "" = accepted
	}{
		{"1234567", "7 bytes long"},
		{"12345678", ""},
		{"ééé", "6 bytes long"}, // three characters, six bytes
		{"éééé", ""},            // eight bytes
		{strings.Repeat("a", 1024), ""},
		{strings.Repeat("a", 1025), "1025 bytes long"},
		{strings.Repeat("✓", 342), "1026 bytes long"},
		{"tab\tinside it", "control character"},
		{"newline at end\n", "control character"},
		{"nul\x00inside it", "control character"},
		{"bad utf8 \xff\xfe here", "UTF-8"},
		{"spaces are fine here", ""},
		{"Пароль-пароль", ""},
	} {
		err := account.CheckPasswordRules("new_password", c.pw)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q refused: %v", c.pw, err)
			}
			continue
		}
		var p *problem.Problem
		if !errors.As(err, &p) || p.Field != "new_password" || !strings.Contains(p.Message, c.want) {
			t.Errorf("%q: %v; want a refusal of new_password saying %q", c.pw, err, c.want)
		}
	}
}

// TestPasswordMatches: the hash checks its own password only; an empty or
// malformed hash matches nothing, not even an empty password.
func TestPasswordMatches(t *testing.T) {
	t.Parallel()
	h, err := account.HashPassword("a password here")
	if err != nil {
		t.Fatal(err)
	}
	// OWASP's first recommendation: 19 MiB, two passes, one lane.
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q is not argon2id with 19 MiB, t=2, p=1", h)
	}
	// A hash made before, with 64 MiB, one pass and two lanes, still
	// verifies.
	old, err := argon2id.CreateHash("a password here", &argon2id.Params{Memory: 64 * 1024, Iterations: 1, Parallelism: 2, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := account.HashPassword("a password here")
	if h == h2 {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, c := range []struct {
		hash, pw string
		want     bool
	}{
		{h, "a password here", true},
		{h2, "a password here", true},
		{old, "a password here", true},
		{old, "a password her", false},
		{h, "a password her", false},
		{h, "", false},
		{"", "", false},
		{"", "a password here", false},
		{"$argon2id$garbage", "a password here", false},
		{"plaintext", "plaintext", false},
		{strings.Replace(h, "m=19456", "m=1", 1), "a password here", false},
		{strings.Replace(h, "t=2", "t=1", 1), "a password here", false},
	} {
		if got := account.PasswordMatches(c.hash, c.pw); got != c.want {
			t.Errorf("PasswordMatches(%.30q, %q) = %v, want %v", c.hash, c.pw, got, c.want)
		}
	}
}

// TestNormalizeEmail: trimmed and lower-cased; one @ with both sides; no
// spaces or control characters; at most 254 bytes.
func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"  Ada@Example.COM\n":                     "ada@example.com",
		"owner@localhost":                         "owner@localhost",
		"ÉMILE@exemple.fr":                        "émile@exemple.fr",
		strings.Repeat("a", 242) + "@example.com": strings.Repeat("a", 242) + "@example.com",
		strings.Repeat("a", 243) + "@example.com": "",
		"":                  "",
		"   ":               "",
		"no-at-sign":        "",
		"two@at@signs":      "",
		"@example.com":      "",
		"ada@":              "",
		"ada lovelace@x.io": "",
		"ada\x00@x.io":      "",
		"ada@x.io\u200b":    "ada@x.io\u200b", // not a space by Unicode; still one address
		"bad\xff@x.io":      "",
	} {
		got, err := account.NormalizeEmail("email", in)
		if want == "" {
			var p *problem.Problem
			if !errors.As(err, &p) || p.Field != "email" {
				t.Errorf("NormalizeEmail(%q) = %q, %v; want a refusal of email", in, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestHostileSignIns: bodies too large, forms that do not parse, missing
// fields, huge values: each gets a page saying what to do, and none signs
// in or echoes a huge value.
func TestHostileSignIns(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		b := newBrowser(t, e.srv.URL)
		f := b.signinForm("")
		tok := f.Get(auth.CSRFField)
		post := func(body, ctype string) (*http.Response, string) {
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/signin", strings.NewReader(body))
			req.Header.Set("Content-Type", ctype)
			return b.do(req)
		}
		form := "application/x-www-form-urlencoded"
		if resp, page := post(auth.CSRFField+"="+tok+"&email="+strings.Repeat("a", 70<<10), form); resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(page, "64 KiB") {
			t.Errorf("a 70 KiB form: %d", resp.StatusCode)
		}
		if resp, _ := post(auth.CSRFField+"="+tok+"&email=%zz", form); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("a malformed form: %d, want 400", resp.StatusCode)
		}
		if resp, _ := post(`{"email":"ada@example.com","password":"x"}`, "application/json"); resp.StatusCode != http.StatusForbidden {
			t.Errorf("a JSON body without the form token: %d, want 403", resp.StatusCode)
		}
		for _, c := range []struct {
			email, pw string
			status    int
			want      string
		}{
			{"", "", http.StatusBadRequest, "Enter your email and your password."},
			{"", adaPass, http.StatusBadRequest, "Enter your email."},
			{adaEmail, "", http.StatusBadRequest, "Enter your password."},
			{strings.Repeat("a", 5000) + "@example.com", adaPass, http.StatusUnauthorized, "Email or password is wrong."},
			{adaEmail, strings.Repeat("p", 2000), http.StatusUnauthorized, "Email or password is wrong."},
			{adaEmail, adaPass + strings.Repeat("p", 2000), http.StatusUnauthorized, "Email or password is wrong."},
			{"<script>alert(1)</script>@example.com", "whatever pass", http.StatusUnauthorized, "Email or password is wrong."},
		} {
			v := url.Values{auth.CSRFField: {tok}, "email": {c.email}, "password": {c.pw}}
			resp, page := b.post("/signin", v)
			if resp.StatusCode != c.status || errorText(page) != c.want {
				t.Errorf("email %.30q: %d %q; want %d %q", c.email, resp.StatusCode, errorText(page), c.status, c.want)
			}
			if strings.Contains(page, strings.Repeat("a", 300)) || strings.Contains(page, "<script>") {
				t.Errorf("email %.30q is echoed raw or whole", c.email)
			}
		}
		if b.cookie(auth.SessionCookie) != "" {
			t.Error("a hostile sign-in got a session")
		}
	})
}

// TestPageHeaders: every page forbids framing, caching and any asset but
// this server's one stylesheet, which is served.
func TestPageHeaders(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		b := newBrowser(t, e.srv.URL)
		for _, p := range []string{"/signin", "/setup?token=x"} {
			resp, page := b.get(p)
			h := resp.Header
			if h.Get("Content-Security-Policy") != "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'" ||
				h.Get("X-Frame-Options") != "DENY" || h.Get("Cache-Control") != "no-store" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
				t.Errorf("%s headers: %v", p, h)
			}
			if !strings.Contains(page, `<link rel="stylesheet" href="/assets/account.css">`) || strings.Contains(page, "://") {
				t.Errorf("%s loads something other than its own stylesheet:\n%s", p, page)
			}
			if !strings.Contains(page, `name="viewport"`) {
				t.Errorf("%s is not laid out for a phone", p)
			}
		}
		resp, css := b.get(account.StylesheetPath)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || !strings.Contains(css, "main {") || strings.Contains(css, "://") {
			t.Errorf("stylesheet: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	})
}

// TestPageHelper: Page escapes the title, keeps the body and sets the
// headers, for other doors (consent) to share the look.
func TestPageHelper(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	account.Page(w, http.StatusTeapot, `<b>"Client"</b>`, `<p id="x">body</p>`)
	page := w.Body.String()
	if w.Code != http.StatusTeapot || !strings.Contains(page, "&lt;b&gt;&#34;Client&#34;&lt;/b&gt;") || !strings.Contains(page, `<p id="x">body</p>`) {
		t.Errorf("Page: %d\n%s", w.Code, page)
	}
	if w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("Content-Security-Policy") != account.ContentSecurityPolicy {
		t.Errorf("Page headers: %v", w.Header())
	}
}

// TestCheckCSRF: the session's token in the header or the form field
// passes; a wrong, empty or missing one does not, nor one in the URL.
func TestCheckCSRF(t *testing.T) {
	t.Parallel()
	m := account.New(nil, account.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	p := auth.Person{Session: store.Session{CSRF: "the-token"}}
	req := func(header, form, query string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/api/x?"+query, strings.NewReader(form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if header != "" {
			r.Header.Set(auth.CSRFHeader, header)
		}
		return r
	}
	for _, c := range []struct {
		r    *http.Request
		want bool
	}{
		{req("the-token", "", ""), true},
		{req("", auth.CSRFField+"=the-token", ""), true},
		{req("wrong", "", ""), false},
		{req("the-token-", "", ""), false},
		{req("", auth.CSRFField+"=", ""), false},
		{req("", "", auth.CSRFField+"=the-token"), false},
		{req("", "", ""), false},
	} {
		if got := m.CheckCSRF(c.r, p); got != c.want {
			t.Errorf("CheckCSRF(header %q, url %q) = %v", c.r.Header.Get(auth.CSRFHeader), c.r.URL.RawQuery, got)
		}
	}
	if m.CheckCSRF(req("", "", ""), auth.Person{}) || m.CheckCSRF(req("x", "", ""), auth.Person{}) {
		t.Error("a session without a token accepts a request")
	}
}

func BenchmarkHashPassword(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := account.HashPassword("correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/hash")
	b.ReportMetric(float64(account.HashBytes>>20), "MiB/hash")
}
