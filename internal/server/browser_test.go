package server_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"foundry/internal/account"
	"foundry/internal/auth"
	"foundry/internal/browsertest"
	"foundry/internal/oauth/clients"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/store"
)

// The browser tests run the people-facing pages in a real headless
// Chromium (internal/browsertest): a person signs in, consents, sets a
// password from a setup link and meets the error pages, typing and clicking
// as a person does. With FOUNDRY_SCREENSHOTS=1 each page is photographed
// into docs/screenshots.

// clientApp is an OAuth client's web side on 127.0.0.1: its redirect URI
// answers "connected" and records every query it receives (the browser's
// own request for /favicon.ico aside).
type clientApp struct {
	*httptest.Server
	mu      sync.Mutex
	queries []url.Values
}

func newClientApp(t *testing.T) *clientApp {
	c := &clientApp{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		c.mu.Lock()
		c.queries = append(c.queries, r.URL.Query())
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Client</title><p id="connected">connected</p>`)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *clientApp) received() []url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.queries)
}

// pkce is a code verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	verifier = rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func authorizeURL(base, clientID, redirect, state, challenge, scope string) string {
	q := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {state},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {base + "/mcp"}, "scope": {scope},
	}
	return base + "/authorize?" + q.Encode()
}

// stepTimeout bounds one do or run: a page that never shows what a step
// waits for fails the test with that step's name.
const stepTimeout = 30 * time.Second

// do runs the steps, failing the test with what it was doing.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func run[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func location(t *testing.T, ctx context.Context) *url.URL {
	t.Helper()
	u, err := url.Parse(run(t, ctx, "location", chromedp.Location()))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func pageText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return run(t, ctx, "page text", chromedp.Evaluate[string](`document.body.innerText`))
}

// noOverflow fails when the page is wider than the window (a horizontal
// scroll bar), or when any element sticks out of the right edge (but what
// a box that scrolls sideways holds, such as a Note's tab strip).
func noOverflow(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	wide := run(t, ctx, "overflow", chromedp.Evaluate[string](`(() => {
		const w = document.documentElement.clientWidth;
		if (document.documentElement.scrollWidth > w) return "the page is " + document.documentElement.scrollWidth + "px wide in a " + w + "px window";
		const held = el => { for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) if (["auto", "scroll", "hidden"].includes(getComputedStyle(p).overflowX)) return true; return false; };
		for (const el of document.querySelectorAll("body *")) {
			const r = el.getBoundingClientRect();
			if (r.width > 0 && r.right > w + 0.5 && !held(el)) return el.tagName.toLowerCase() + (el.className ? "." + el.className : "") + " ends at " + Math.round(r.right) + "px in a " + w + "px window";
		}
		return "";
	})()`))
	if wide != "" {
		t.Errorf("%s overflows: %s", name, wide)
	}
}

// signIn types into the sign-in form of the page and submits it.
func signIn(t *testing.T, ctx context.Context, email, password string) {
	t.Helper()
	do(t, ctx, "sign in",
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.Clear(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), password),
		browsertest.Click(chromedp.CSS(`button[type=submit]`)),
	)
}

// signInToNotes opens the app, signs the owner in, and waits for the
// Notes list with the demo Note.
func signInToNotes(t *testing.T, ctx context.Context, e *servertest.Env) {
	t.Helper()
	do(t, ctx, "open the app", chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the Notes list", chromedp.WaitVisible(row("Welcome", "")))
}

// startBrowserEnv is a server whose owner has a password, and Chromium.
func startBrowserEnv(t *testing.T, c server.Config) (*servertest.Env, context.Context) {
	t.Helper()
	e := servertest.Start(t, servertest.Options{Config: c})
	if err := account.SetPassword(context.Background(), e.Server.Store, e.Owner.User, "password", ownerPassword); err != nil {
		t.Fatal(err)
	}
	return e, browsertest.New(t)
}

// TestBrowserSignInAndConsent: a person follows a client's authorization
// link, is sent to sign in, mistypes the password and is told so, signs in,
// narrows the consent to reading one Note, and approves; the client
// receives code, state and iss, and the code buys a read-only token whose
// connection reaches that Note alone.
func TestBrowserSignInAndConsent(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	bg := context.Background()
	app := newClientApp(t)
	redirect := app.URL + "/callback"
	client, _, err := clients.Add(bg, e.Server.Store, clients.Spec{Name: "Desk Notes for Teams", RedirectURIs: []string{redirect}})
	if err != nil {
		t.Fatal(err)
	}
	note, err := e.Server.Store.Head(bg, store.TypeNote, e.NoteID)
	if err != nil {
		t.Fatal(err)
	}
	room, err := e.Server.Store.Head(bg, store.TypeRoom, e.RoomID)
	if err != nil {
		t.Fatal(err)
	}
	verifier, challenge := pkce()
	state := "state-" + rand.Text()

	do(t, ctx, "open the authorization link", chromedp.Navigate(authorizeURL(e.URL, client.ID, redirect, state, challenge, auth.ScopeRead+" "+auth.ScopeWrite)),
		chromedp.WaitVisible(chromedp.ID("email")))
	if u := location(t, ctx); u.Path != "/signin" || !strings.HasPrefix(u.Query().Get("next"), "/authorize?") {
		t.Fatalf("not sent to sign in first: %s", u)
	}
	if title := run(t, ctx, "title", chromedp.Title()); !strings.Contains(title, "Sign in") {
		t.Errorf("sign-in page title %q", title)
	}
	noOverflow(t, ctx, "signin")
	browsertest.Screenshot(t, ctx, "signin")
	do(t, ctx, "phone width", browsertest.Phone())
	noOverflow(t, ctx, "signin at 390 px")
	browsertest.Screenshot(t, ctx, "signin-phone")
	do(t, ctx, "desktop width", browsertest.Desktop())

	signIn(t, ctx, e.Owner.User.Email, "not the password")
	do(t, ctx, "wrong password", chromedp.WaitVisible(chromedp.CSS(`p.error`)))
	if msg := run(t, ctx, "error text", chromedp.Text(chromedp.CSS(`p.error`))); msg != "Email or password is wrong." {
		t.Fatalf("wrong password: the page says %q", msg)
	}
	if v := run(t, ctx, "email kept", chromedp.Value(chromedp.ID("email"))); v != e.Owner.User.Email {
		t.Errorf("the email field lost what was typed: %q", v)
	}
	if u := location(t, ctx); u.Path != "/signin" {
		t.Fatalf("after a wrong password: at %s", u)
	}
	browsertest.Screenshot(t, ctx, "signin-error")

	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "consent page", chromedp.WaitVisible(chromedp.CSS(`button[value=approve]`)))
	if u := location(t, ctx); u.Path != "/authorize" {
		t.Fatalf("after signing in: at %s, want the consent page at /authorize", u)
	}
	text := pageText(t, ctx)
	for _, want := range []string{"Connect Desk Notes for Teams", client.ID, strings.TrimPrefix(app.URL, "http://"), e.Owner.User.Email, note.Title, room.Title, "Read Notes and Rooms", "Edit Notes"} {
		if !strings.Contains(text, want) {
			t.Errorf("the consent page does not show %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "published at") {
		t.Errorf("a pre-registered client is flagged:\n%s", text)
	}
	if n := run(t, ctx, "warnings", chromedp.Evaluate[int](`document.querySelectorAll(".warn").length`)); n != 0 {
		t.Errorf("%d warnings on the consent page of a pre-registered client", n)
	}
	// Approve is the primary action, Deny the secondary one.
	if cls := run(t, ctx, "deny class", chromedp.AttributeValue(chromedp.CSS(`button[value=deny]`), "class")); cls.Value != "secondary" {
		t.Errorf("Deny is not the secondary button: class %q", cls.Value)
	}
	noOverflow(t, ctx, "consent")
	browsertest.Screenshot(t, ctx, "consent")

	do(t, ctx, "phone width", browsertest.Phone())
	if w := run(t, ctx, "width", chromedp.Evaluate[int](`window.innerWidth`)); w != browsertest.PhoneWidth {
		t.Fatalf("phone: the window is %d px wide, want %d", w, browsertest.PhoneWidth)
	}
	noOverflow(t, ctx, "consent at 390 px")
	browsertest.Screenshot(t, ctx, "consent-phone")
	do(t, ctx, "desktop width", browsertest.Desktop())
	if w := run(t, ctx, "width", chromedp.Evaluate[int](`window.innerWidth`)); w != browsertest.Width {
		t.Fatalf("back at the desktop: the window is %d px wide, want %d", w, browsertest.Width)
	}

	// Dark mode keeps the page readable.
	do(t, ctx, "dark mode", browsertest.ColorScheme("dark"))
	if bgc := run(t, ctx, "dark background", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)); bgc != "rgb(20, 21, 24)" {
		t.Errorf("dark mode: the background is %s", bgc)
	}
	browsertest.Screenshot(t, ctx, "consent-dark")
	do(t, ctx, "light mode", browsertest.ColorScheme(""))

	// From the keyboard, Tab after the last choice reaches Approve first,
	// and the focused button is outlined.
	do(t, ctx, "keyboard", chromedp.Focus(chromedp.CSS(`input[name=consent_rooms]`)), chromedp.KeyEvent("\t"))
	focus := run(t, ctx, "focused", chromedp.Evaluate[map[string]string](`({value: document.activeElement.value || "", outline: getComputedStyle(document.activeElement).outlineStyle})`))
	if focus["value"] != "approve" || focus["outline"] == "none" {
		t.Errorf("after Tab: focused %q with outline %q; want Approve, outlined", focus["value"], focus["outline"])
	}

	do(t, ctx, "narrow the grant",
		browsertest.Click(chromedp.CSS(`input[name=consent_scope][value="`+auth.ScopeWrite+`"]`)),
		browsertest.Click(chromedp.CSS(`input[name=consent_notes_mode][value=list]`)),
		browsertest.Click(chromedp.CSS(`input[name=consent_notes][value="`+e.NoteID+`"]`)),
		browsertest.Click(chromedp.CSS(`button[value=approve]`)),
		chromedp.WaitVisible(chromedp.ID("connected")),
	)
	got := app.received()
	if len(got) != 1 {
		t.Fatalf("the client received %d requests, want 1: %v", len(got), got)
	}
	q := got[0]
	if q.Get("code") == "" || q.Get("state") != state || q.Get("iss") != e.URL || q.Get("error") != "" {
		t.Fatalf("the client received %v; want a code, state %q and iss %q", q, state, e.URL)
	}

	form := url.Values{
		"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {redirect},
		"client_id": {client.ID}, "code_verifier": {verifier}, "resource": {e.URL + "/mcp"},
	}
	res, err := http.PostForm(e.URL+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		Scope        string `json:"scope"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&tok); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("token: %d %v", res.StatusCode, err)
	}
	if tok.AccessToken == "" || tok.RefreshToken == "" || tok.Scope != auth.ScopeRead {
		t.Fatalf("token: scope %q (want %q alone), access %t, refresh %t", tok.Scope, auth.ScopeRead, tok.AccessToken != "", tok.RefreshToken != "")
	}
	conns, err := e.Server.Store.Connections(bg, e.Owner.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(conns) != 1 || !slices.Equal(conns[0].Scopes, []string{auth.ScopeRead}) || !slices.Equal(conns[0].Notes, []string{e.NoteID}) || conns[0].Rooms != nil {
		t.Fatalf("the stored connection is %+v; want read only, Note %s alone, every Room", conns, e.NoteID)
	}

	// The same client asks again for read and write: a new consent, with
	// write marked new and the grant's Note chosen, never a silent upgrade.
	_, challenge = pkce()
	do(t, ctx, "step up", chromedp.Navigate(authorizeURL(e.URL, client.ID, redirect, "state-"+rand.Text(), challenge, auth.ScopeRead+" "+auth.ScopeWrite)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)))
	if n := len(app.received()); n != 1 {
		t.Fatalf("asking for more reached the client without a consent: %d requests", n)
	}
	badge := run(t, ctx, "new scope", chromedp.Evaluate[string](`(() => { const b = document.querySelector("label.choice .new"); return b ? b.closest("label").querySelector("input").value : ""; })()`))
	if badge != auth.ScopeWrite {
		t.Errorf("the scope marked new is %q, want %q", badge, auth.ScopeWrite)
	}
	kept := run(t, ctx, "kept grant", chromedp.Evaluate[bool](`document.querySelector('input[name=consent_notes_mode][value=list]').checked && document.querySelector('input[name=consent_notes][value="`+e.NoteID+`"]').checked`))
	if !kept {
		t.Errorf("the step-up consent does not start from the granted Note")
	}
	noOverflow(t, ctx, "consent-step-up")
	browsertest.Screenshot(t, ctx, "consent-step-up")
}

// TestBrowserSetupLink: the owner opens a one-time setup link, types two
// different passwords and is told so, types the same one twice, and is
// signed in; the used link then says it is spent.
func TestBrowserSetupLink(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	ctx := browsertest.New(t)
	link, _, err := account.CreateSetupLink(context.Background(), e.Server.Store, e.Owner.User, e.URL, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "open the setup link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("confirm")))
	if text := pageText(t, ctx); !strings.Contains(text, e.Owner.User.Email) || !strings.Contains(text, "Set your password") {
		t.Fatalf("the setup page does not name the account:\n%s", text)
	}
	// The account name for password managers is in the form, not on view.
	if shown := run(t, ctx, "hidden username", chromedp.Evaluate[bool](`document.querySelector("input[name=username]").getClientRects().length > 0`)); shown {
		t.Errorf("the setup form shows its hidden username field")
	}
	noOverflow(t, ctx, "setup")
	browsertest.Screenshot(t, ctx, "setup")

	do(t, ctx, "two different passwords",
		chromedp.SendKeys(chromedp.ID("password"), "a long new password"),
		chromedp.SendKeys(chromedp.ID("confirm"), "a long new passw0rd"),
		browsertest.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.error`)),
	)
	if msg := run(t, ctx, "error", chromedp.Text(chromedp.CSS(`p.error`))); !strings.Contains(msg, "differ") {
		t.Fatalf("different passwords: the page says %q", msg)
	}
	browsertest.Screenshot(t, ctx, "setup-error")

	do(t, ctx, "the same password twice",
		chromedp.SendKeys(chromedp.ID("password"), "a long new password"),
		chromedp.SendKeys(chromedp.ID("confirm"), "a long new password"),
		browsertest.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`button.secondary`)), // the signed-in page's Sign out
	)
	if u := location(t, ctx); u.Path != "/" {
		t.Fatalf("after setting the password: at %s, want /", u)
	}
	if text := pageText(t, ctx); !strings.Contains(text, "Signed in as") || !strings.Contains(text, e.Owner.User.Email) {
		t.Fatalf("not signed in after setting the password:\n%s", text)
	}
	noOverflow(t, ctx, "signed in")
	browsertest.Screenshot(t, ctx, "signed-in")
	u, err := e.Server.Store.UserByID(context.Background(), e.Owner.User.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !account.PasswordMatches(u.PasswordHash, "a long new password") {
		t.Errorf("the password typed twice is not the account's password")
	}

	do(t, ctx, "the link again", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`p.error`)))
	if text := pageText(t, ctx); !strings.Contains(text, "already used") {
		t.Fatalf("a used link:\n%s", text)
	}
	browsertest.Screenshot(t, ctx, "setup-link-used")

	do(t, ctx, "sign out", chromedp.Navigate(e.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`button.secondary`)),
		browsertest.Click(chromedp.CSS(`button.secondary`)), chromedp.WaitVisible(chromedp.ID("email")))
	if u := location(t, ctx); u.Path != "/signin" {
		t.Fatalf("after signing out: at %s", u)
	}
}

// TestBrowserConsentWarning: a client whose ID is its metadata document's
// URL, on one host, sending the person back to another host, is flagged
// on the consent page.
func TestBrowserConsentWarning(t *testing.T) {
	t.Parallel()
	app := newClientApp(t)
	redirect := "http://localhost:" + app.URL[strings.LastIndex(app.URL, ":")+1:] + "/cb"
	docURL, fetch := serveClientDocument(t, "Elsewhere Assistant", redirect)
	e, ctx := startBrowserEnv(t, server.Config{ClientMetadataHTTP: fetch})

	_, challenge := pkce()
	do(t, ctx, "open the authorization link", chromedp.Navigate(authorizeURL(e.URL, docURL, redirect, "state-"+rand.Text(), challenge, auth.ScopeRead)))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "consent page", chromedp.WaitVisible(chromedp.CSS(`p.warn`)))
	warn := run(t, ctx, "warning", chromedp.Text(chromedp.CSS(`p.warn`)))
	if !strings.Contains(warn, "127.0.0.1") || !strings.Contains(warn, "localhost") {
		t.Fatalf("the warning does not name both hosts: %q", warn)
	}
	if text := pageText(t, ctx); !strings.Contains(text, "Elsewhere Assistant") {
		t.Fatalf("the consent page does not name the client from its document:\n%s", text)
	}
	noOverflow(t, ctx, "consent-warning")
	browsertest.Screenshot(t, ctx, "consent-warning")

	// Deny: the client hears access_denied, with iss.
	do(t, ctx, "deny", browsertest.Click(chromedp.CSS(`button[value=deny]`)), chromedp.WaitVisible(chromedp.ID("connected")))
	got := app.received()
	if len(got) != 1 || got[0].Get("error") != "access_denied" || got[0].Get("iss") != e.URL || got[0].Get("code") != "" {
		t.Fatalf("after Deny the client received %v", got)
	}
}

// TestBrowserAuthorizeError: a link naming a client nobody registered is
// an error page on the server (no redirect anywhere), laid out like the
// others.
func TestBrowserAuthorizeError(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	app := newClientApp(t)
	_, challenge := pkce()
	link := authorizeURL(e.URL, "no-such-client", app.URL+"/callback", "state-"+rand.Text(), challenge, auth.ScopeRead)
	do(t, ctx, "open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`p.error`)))
	if u := location(t, ctx); u.Host != strings.TrimPrefix(e.URL, "http://") || u.Path != "/authorize" {
		t.Fatalf("an unknown client: at %s, want the error page at /authorize", u)
	}
	text := pageText(t, ctx)
	if !strings.Contains(text, "This connection cannot go on") || !strings.Contains(text, "invalid_client") {
		t.Fatalf("the error page:\n%s", text)
	}
	if n := len(app.received()); n != 0 {
		t.Fatalf("the unregistered redirect URI was sent %d requests", n)
	}
	if n := run(t, ctx, "stylesheet", chromedp.Evaluate[int](`document.styleSheets.length`)); n != 1 {
		t.Errorf("the error page has %d stylesheets, want the one shared stylesheet", n)
	}
	noOverflow(t, ctx, "authorize-error")
	browsertest.Screenshot(t, ctx, "authorize-error")

	do(t, ctx, "phone width", browsertest.Phone())
	noOverflow(t, ctx, "authorize-error at 390 px")
}

// TestConsentPageHeaders: the consent and error pages keep the headers of
// every people-facing page (no caching, no framing, nothing loaded but the
// one stylesheet), and the consent page's form-action allows exactly this
// server and the client's redirect origin.
func TestConsentPageHeaders(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	if err := account.SetPassword(context.Background(), e.Server.Store, e.Owner.User, "password", ownerPassword); err != nil {
		t.Fatal(err)
	}
	redirect := "http://127.0.0.1:9/callback"
	client, _, err := clients.Add(context.Background(), e.Server.Store, clients.Spec{Name: "Headers", RedirectURIs: []string{redirect}})
	if err != nil {
		t.Fatal(err)
	}
	_, challenge := pkce()
	link := authorizeURL(e.URL, client.ID, redirect, "state-"+rand.Text(), challenge, auth.ScopeRead)
	b := newBrowser(t, redirect)
	p := b.get(link)
	p = b.submit(p, "", map[string]string{"email": e.Owner.User.Email, "password": ownerPassword})
	if !strings.Contains(p.Body, "consent_decision") {
		t.Fatalf("no consent page: %d\n%s", p.Status, p.Body)
	}
	check := func(name, u, wantCSP string) {
		t.Helper()
		res, err := b.c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		h := res.Header
		if got := h.Get("Content-Security-Policy"); got != wantCSP {
			t.Errorf("%s CSP %q, want %q", name, got, wantCSP)
		}
		if h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Errorf("%s headers: %v", name, h)
		}
		if !strings.Contains(string(body), `<link rel="stylesheet" href="`+account.StylesheetPath+`">`) || strings.Contains(string(body), "<style") {
			t.Errorf("%s does not use the shared stylesheet alone:\n%s", name, body)
		}
	}
	check("consent", link, "default-src 'none'; style-src 'self'; form-action 'self' http://127.0.0.1:9; frame-ancestors 'none'")
	check("error", authorizeURL(e.URL, "no-such-client", redirect, "state-"+rand.Text(), challenge, auth.ScopeRead), account.ContentSecurityPolicy)
}

// TestPolicyWithFormTargets: the consent page's policy lets its form lead
// to the client's redirect origin (or a native client's scheme) and to
// nothing a crafted redirect URI could smuggle into the header.
func TestPolicyWithFormTargets(t *testing.T) {
	t.Parallel()
	base := account.ContentSecurityPolicy
	with := func(src string) string {
		return strings.Replace(base, "form-action 'self'", "form-action 'self' "+src, 1)
	}
	for _, c := range []struct {
		targets []string
		want    string
	}{
		{nil, base},
		{[]string{"http://127.0.0.1:43123/callback?x=1"}, with("http://127.0.0.1:43123")},
		{[]string{"https://App.Example.com/oauth/cb"}, with("https://app.example.com")},
		{[]string{"http://[::1]:8080/cb"}, with("http://[::1]:8080")},
		{[]string{"com.example.app:/oauth2redirect"}, with("com.example.app:")},
		{[]string{"https://a.example.com/x", "https://a.example.com/y"}, with("https://a.example.com")},
		{[]string{""}, base},
		{[]string{"/relative"}, base},
		{[]string{"https:///no-host"}, base},
		{[]string{"https://a.example.com;script-src *"}, base},
		{[]string{"https://a.example.com%3Bscript-src/"}, base},
		{[]string{"https://\u0000"}, base},
		{[]string{"x y:"}, base},
	} {
		if got := account.PolicyWithFormTargets(c.targets...); got != c.want {
			t.Errorf("PolicyWithFormTargets(%q) = %q, want %q", c.targets, got, c.want)
		}
	}
}
