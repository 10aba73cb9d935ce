package main

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"foundry/internal/account"
	"foundry/internal/server"
)

// runWithStdin is runInProcess with input on standard input.
func runWithStdin(t *testing.T, input string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stdin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(input); err != nil {
		t.Fatal(err)
	}
	f.Seek(0, io.SeekStart)
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old; f.Close() }()
	return runInProcess(t, args...)
}

// signInPages serves the sign-in pages on the data folder, as the server
// does, on 127.0.0.1.
type signInPages struct {
	t   *testing.T
	srv *httptest.Server
}

func newSignInPages(t *testing.T, data string) *signInPages {
	t.Helper()
	st, err := server.OpenStore(context.Background(), server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := account.New(st, account.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	mux := http.NewServeMux()
	m.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &signInPages{t: t, srv: srv}
}

func (p *signInPages) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

func (p *signInPages) form(c *http.Client, path string) (int, url.Values, string) {
	p.t.Helper()
	resp, err := c.Get(p.srv.URL + path)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	v := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(string(b), -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return resp.StatusCode, v, string(b)
}

func (p *signInPages) post(c *http.Client, path string, v url.Values) int {
	p.t.Helper()
	resp, err := c.PostForm(p.srv.URL+path, v)
	if err != nil {
		p.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// signIn answers the status of a sign-in (303: signed in).
func (p *signInPages) signIn(email, pw string) int {
	p.t.Helper()
	c := p.client()
	_, v, _ := p.form(c, "/signin")
	v.Set("email", email)
	v.Set("password", pw)
	return p.post(c, "/signin", v)
}

// useLink follows a printed setup link (its path and query, on these
// pages) and sets pw; it answers the status of the form's post.
func (p *signInPages) useLink(link, pw, wantEmail string) int {
	p.t.Helper()
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil || u.Path != "/setup" || u.Query().Get("token") == "" {
		p.t.Fatalf("%q is not a setup link", link)
	}
	c := p.client()
	code, v, page := p.form(c, u.RequestURI())
	if code != http.StatusOK || !strings.Contains(page, wantEmail) {
		p.t.Fatalf("GET %s: %d, page for %s?\n%s", link, code, wantEmail, page)
	}
	v.Set("password", pw)
	v.Set("confirm", pw)
	return p.post(c, "/setup", v)
}

// TestUserCommands: user add, passwd, list and remove, as typed: a printed
// link really sets the password, --password-stdin really sets it, and the
// refusals name the value and the fix.
func TestUserCommands(t *testing.T) {
	data, _, _ := grantWorkspace(t)
	pages := newSignInPages(t, data)

	code, stdout, stderr := runInProcess(t, "user", "add", "  Ada@Example.com ", "--name", "Ada Lovelace", "--data", data)
	if code != 0 || !strings.Contains(stderr, "Added ada@example.com (member)") {
		t.Fatalf("user add: exit %d\n%s%s", code, stdout, stderr)
	}
	link := strings.TrimSpace(stdout)
	if !strings.HasPrefix(link, "http://127.0.0.1:8080/setup?token=") || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("user add prints %q; want the link alone on stdout, on the default public URL", stdout)
	}
	if !strings.Contains(stderr, "works once") {
		t.Errorf("user add does not say the link works once: %q", stderr)
	}
	if got := pages.useLink(link, "ada's first password", "ada@example.com"); got != http.StatusSeeOther {
		t.Fatalf("the printed link does not set the password: %d", got)
	}
	if got := pages.signIn("ada@example.com", "ada's first password"); got != http.StatusSeeOther {
		t.Errorf("sign-in with the password set by link: %d", got)
	}

	code, _, stderr = runWithStdin(t, "bob's password\r\n", "user", "add", "bob@example.com", "--role", "owner", "--password-stdin", "--data", data)
	if code != 0 || !strings.Contains(stderr, "Added bob@example.com (owner)") || !strings.Contains(stderr, "/signin") {
		t.Fatalf("user add --password-stdin: exit %d\n%s", code, stderr)
	}
	if got := pages.signIn("bob@example.com", "bob's password"); got != http.StatusSeeOther {
		t.Errorf("sign-in with the password from stdin (sent with CRLF): %d", got)
	}

	code, stdout, _ = runInProcess(t, "user", "list", "--data", data)
	if code != 0 {
		t.Fatalf("user list: exit %d", code)
	}
	for _, row := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^EMAIL\s+NAME\s+ROLE\s+PASSWORD\s+CREATED$`),
		regexp.MustCompile(`(?m)^owner@localhost\s+Owner\s+owner\s+unset\s+\d{4}-\d\d-\d\d \d\d:\d\d$`),
		regexp.MustCompile(`(?m)^ada@example\.com\s+Ada Lovelace\s+member\s+set\s+\d{4}-`),
		regexp.MustCompile(`(?m)^bob@example\.com\s+-\s+owner\s+set\s+\d{4}-`),
	} {
		if !row.MatchString(stdout) {
			t.Errorf("user list has no row like %s:\n%s", row, stdout)
		}
	}

	for _, c := range []struct {
		input string
		args  []string
		code  int
		want  string
	}{
		{"", []string{"user", "add", "bob@example.com"}, 1, "already a user bob@example.com"},
		{"", []string{"user", "add", "BOB@example.com "}, 1, "already a user bob@example.com"},
		{"", []string{"user", "add", "not-an-email"}, 2, "EMAIL: \"not-an-email\" is not an email address"},
		{"", []string{"user", "add", "eve@example.com", "--role", "admin"}, 2, "--role: \"admin\" is not a role; give member or owner"},
		{"", []string{"user", "add", "eve@example.com", "--public-url", "ftp://x"}, 2, "--public-url"},
		{"", []string{"user", "add", "eve@example.com", "--name", "Eve\nNewline"}, 2, "--name: has a control character"},
		{"short\n", []string{"user", "add", "eve@example.com", "--password-stdin"}, 2, "--password-stdin: is 5 bytes long; a password has 8 to 1024 bytes"},
		{"", []string{"user", "passwd", "bob@example.com", "--password-stdin"}, 2, "--password-stdin: standard input has no password"},
		{strings.Repeat("x", 2000) + "\n", []string{"user", "passwd", "bob@example.com", "--password-stdin"}, 2, "longer than 1024 bytes"},
		{"", []string{"user", "passwd", "nobody@example.com"}, 1, "no user nobody@example.com in this workspace; `foundry user list` shows them"},
		{"", []string{"user", "remove", "nobody@example.com"}, 1, "no user nobody@example.com"},
		{"", []string{"user", "remove"}, 2, "needs EMAIL"},
	} {
		code, _, stderr := runWithStdin(t, c.input, append(c.args, "--data", data)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d %q; want exit %d saying %q", strings.Join(c.args, " "), code, stderr, c.code, c.want)
		}
	}
	if code, stdout, _ := runInProcess(t, "user", "list", "--data", data); code != 0 || strings.Contains(stdout, "eve@") {
		t.Errorf("a refused add added eve:\n%s", stdout)
	}

	// passwd from stdin replaces the password and ends bob's sessions.
	c := pages.client()
	_, v, _ := pages.form(c, "/signin")
	v.Set("email", "bob@example.com")
	v.Set("password", "bob's password")
	if pages.post(c, "/signin", v) != http.StatusSeeOther {
		t.Fatal("bob cannot sign in")
	}
	code, _, stderr = runWithStdin(t, "bob's new password\n", "user", "passwd", "bob@example.com", "--password-stdin", "--data", data)
	if code != 0 || !strings.Contains(stderr, "sessions were ended") {
		t.Fatalf("user passwd --password-stdin: exit %d %q", code, stderr)
	}
	if code, _, _ := pages.form(c, "/signin"); code != http.StatusOK {
		t.Errorf("bob's session survives user passwd (GET /signin: %d, want the form)", code)
	}
	if pages.signIn("bob@example.com", "bob's password") != http.StatusUnauthorized || pages.signIn("bob@example.com", "bob's new password") != http.StatusSeeOther {
		t.Error("user passwd --password-stdin did not replace the password")
	}

	// passwd without stdin prints a link on the public URL given.
	t.Setenv("FOUNDRY_PUBLIC_URL", "https://foundry.example.com/")
	code, stdout, _ = runInProcess(t, "user", "passwd", "ADA@example.com", "--data", data)
	if code != 0 || !strings.HasPrefix(stdout, "https://foundry.example.com/setup?token=") {
		t.Fatalf("user passwd: exit %d %q", code, stdout)
	}
	path := strings.TrimPrefix(strings.TrimSpace(stdout), "https://foundry.example.com")
	if got := pages.useLink(path, "ada's second password", "ada@example.com"); got != http.StatusSeeOther {
		t.Errorf("user passwd's link: %d", got)
	}
	if pages.signIn("ada@example.com", "ada's second password") != http.StatusSeeOther {
		t.Error("the password set by user passwd's link does not sign in")
	}

	// remove: an owner while another is left, a member, never the last owner.
	for _, email := range []string{"bob@example.com", "ada@example.com"} {
		if code, stdout, stderr := runInProcess(t, "user", "remove", email, "--data", data); code != 0 || !strings.Contains(stdout, "removed "+email) {
			t.Errorf("user remove %s: exit %d %q %q", email, code, stdout, stderr)
		}
		if pages.signIn(email, "bob's new password") == http.StatusSeeOther || pages.signIn(email, "ada's second password") == http.StatusSeeOther {
			t.Errorf("%s signs in after being removed", email)
		}
	}
	code, _, stderr = runInProcess(t, "user", "remove", "owner@localhost", "--data", data)
	if code != 1 || !strings.Contains(stderr, "last owner") || !strings.Contains(stderr, "user add EMAIL --role owner") {
		t.Errorf("removing the last owner: exit %d %q", code, stderr)
	}
	// role: never the last owner's; a role that is none is a usage error.
	if code, _, stderr := runInProcess(t, "user", "role", "owner@localhost", "member", "--data", data); code != 1 || !strings.Contains(stderr, "last owner") {
		t.Errorf("demoting the last owner: exit %d %q", code, stderr)
	}
	if code, _, stderr := runInProcess(t, "user", "role", "owner@localhost", "admin", "--data", data); code != 2 || !strings.Contains(stderr, `"admin" is not a role`) {
		t.Errorf("user role admin: exit %d %q", code, stderr)
	}
	if code, stdout, stderr := runInProcess(t, "user", "role", "owner@localhost", "owner", "--data", data); code != 0 || !strings.Contains(stdout, "owner@localhost is now owner") {
		t.Errorf("user role owner of the owner: exit %d %q %q", code, stdout, stderr)
	}
	_, stdout, _ = runInProcess(t, "user", "list", "--data", data)
	if strings.Contains(stdout, "bob@") || strings.Contains(stdout, "ada@") || !strings.Contains(stdout, "owner@localhost") {
		t.Errorf("user list after removals:\n%s", stdout)
	}
}

// TestFirstStartGivesTheOwnerALink: the first start prints a one-time link
// for the owner's password and the --password-stdin command; a later start,
// while there is still no password, logs a fresh link; the printed command
// sets the password as typed, after which no start logs a link.
func TestFirstStartGivesTheOwnerALink(t *testing.T) {
	t.Parallel()
	bin := foundryBin(t)
	dir := t.TempDir()
	linkRE := regexp.MustCompile(`http://127\.0\.0\.1:\d+/setup\?token=[A-Za-z0-9_-]{43}`)

	s := startServe(t, dir, bin, "serve", "--data", "data", "--addr", "127.0.0.1:0")
	s.stop()
	first := linkRE.FindString(s.printed)
	if first == "" || !strings.Contains(s.printed, "owner@localhost") {
		t.Fatalf("the first start prints no setup link for the owner:\n%s", s.printed)
	}
	var typed string
	for _, line := range strings.Split(s.printed, "\n") {
		if _, cmd, ok := strings.Cut(line, "or give the password on standard input: "); ok {
			typed = cmd
		}
	}
	if !strings.HasPrefix(typed, bin+" user passwd owner@localhost --data data --password-stdin") {
		t.Fatalf("no --password-stdin command printed:\n%s", s.printed)
	}

	s = startServe(t, dir, bin, "serve", "--data", "data", "--addr", "127.0.0.1:0")
	s.stop()
	second := linkRE.FindString(s.printed)
	if second == "" || second == first || !strings.Contains(s.printed, "level=WARN") || !strings.Contains(s.printed, "no password yet") {
		t.Fatalf("a later start without an owner's password logs no fresh link:\n%s", s.printed)
	}

	// Both links are real until one is used.
	pages := newSignInPages(t, filepath.Join(dir, "data"))
	u, _ := url.Parse(second)
	if code, _, _ := pages.form(pages.client(), u.RequestURI()); code != http.StatusOK {
		t.Errorf("the logged link: %d", code)
	}

	cmd := exec.Command("sh", "-c", typed)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("the owner's password\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s, typed as printed: %v\n%s", typed, err, out)
	}
	if got := pages.signIn("owner@localhost", "the owner's password"); got != http.StatusSeeOther {
		t.Errorf("the owner cannot sign in with the password set as printed: %d", got)
	}
	u, _ = url.Parse(first)
	if code, _, _ := pages.form(pages.client(), u.RequestURI()); code != http.StatusGone {
		t.Errorf("the first start's link still works after a password was set: %d", code)
	}

	s = startServe(t, dir, bin, "serve", "--data", "data", "--addr", "127.0.0.1:0")
	s.stop()
	if strings.Contains(s.printed, "/setup?token=") {
		t.Errorf("a start with the owner's password set logs a link:\n%s", s.printed)
	}
}
