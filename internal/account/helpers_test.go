package account_test

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/account"
	"foundry/internal/auth"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// opener opens the test's store again, as another node would.
type opener func(t *testing.T) store.Store

// eachStore runs fn on a fresh SQLite folder and on a fresh PostgreSQL
// schema (skipped, saying so, without FOUNDRY_TEST_POSTGRES_URL).
func eachStore(t *testing.T, fn func(t *testing.T, open opener)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		fn(t, func(t *testing.T) store.Store {
			st, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		})
	})
	t.Run("postgres", func(t *testing.T) {
		u, _ := pgtest.Schema(t)
		fn(t, func(t *testing.T) store.Store {
			st, err := postgres.Open(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		})
	})
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

const (
	ownerEmail = "owner@localhost"
	adaEmail   = "ada@example.com"
	adaPass    = "correct horse battery staple"
)

// env is a workspace with its owner (no password, as the first start
// makes it) and Ada (a member with a password), served by a Manager on
// 127.0.0.1.
type env struct {
	st    store.Store
	owner store.User
	ada   store.User
	m     *account.Manager
	srv   *httptest.Server
	clock *clock
}

func newEnv(t *testing.T, st store.Store, o account.Options) *env {
	t.Helper()
	ctx := context.Background()
	own, _, err := service.New(st).Bootstrap(ctx, "Foundry", ownerEmail)
	if err != nil {
		t.Fatal(err)
	}
	ada, err := account.UserByEmail(ctx, st, own.Workspace.ID, adaEmail)
	if err != nil {
		ada, err = account.AddUser(ctx, st, own.Workspace.ID, account.NewUser{Email: adaEmail, Name: "Ada", Role: account.RoleMember, Password: adaPass})
		if err != nil {
			t.Fatal(err)
		}
	}
	e := &env{st: st, owner: own.User, ada: ada}
	e.serve(t, o)
	return e
}

// serve starts the Manager with o (its clock is e's unless o has one).
func (e *env) serve(t *testing.T, o account.Options) {
	t.Helper()
	if o.Now == nil {
		e.clock = newClock()
		o.Now = e.clock.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e.m = account.New(e.st, o)
	mux := http.NewServeMux()
	e.m.Mount(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
}

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		b.t.Fatal(err)
	}
	return resp, string(body)
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post sends form to path with extra headers (name, value pairs).
func (b *browser) post(path string, form url.Values, headers ...string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

// cookie is the browser's cookie name for its server ("" if none).
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.base)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// hidden is the page's hidden form fields.
func hidden(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}

// signinForm opens /signin (with next) and answers its hidden fields,
// checking the form carries a CSRF token under auth.CSRFField.
func (b *browser) signinForm(next string) url.Values {
	b.t.Helper()
	path := "/signin"
	if next != "" {
		path += "?next=" + url.QueryEscape(next)
	}
	resp, page := b.get(path)
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, page)
	}
	f := hidden(page)
	if f.Get(auth.CSRFField) == "" {
		b.t.Fatalf("the sign-in form has no %s field:\n%s", auth.CSRFField, page)
	}
	return f
}

// signIn signs in through the form and answers the response.
func (b *browser) signIn(email, pw, next string) (*http.Response, string) {
	b.t.Helper()
	f := b.signinForm(next)
	f.Set("email", email)
	f.Set("password", pw)
	return b.post("/signin", f)
}

// mustSignIn signs in and fails the test unless it worked.
func (b *browser) mustSignIn(email, pw string) {
	b.t.Helper()
	resp, page := b.signIn(email, pw, "")
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("sign-in of %s: %d\n%s", email, resp.StatusCode, page)
	}
}

// whoami is who GET / says is signed in ("" when it sends to /signin).
func (b *browser) whoami() string {
	b.t.Helper()
	resp, page := b.get("/")
	if resp.StatusCode == http.StatusSeeOther && resp.Header.Get("Location") == "/signin" {
		return ""
	}
	m := regexp.MustCompile(`\(([^)]+)\), (owner|member) of this workspace`).FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil {
		b.t.Fatalf("GET /: %d\n%s", resp.StatusCode, page)
	}
	return html.UnescapeString(m[1])
}

// errorText is the page's error sentence.
func errorText(page string) string {
	m := regexp.MustCompile(`<p class="error" role="alert">([^<]*)</p>`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}
