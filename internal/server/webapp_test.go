package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"foundry/internal/account"
	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/web"
)

// The people's web app (internal/web): its page on every client route for
// a signed-in person, sign-in first for anyone else, its content-named
// assets cached for good, and the other doors where they were.

// TestWebAppServing checks the app's routes and headers over plain HTTP.
func TestWebAppServing(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	if err := account.SetPassword(context.Background(), e.Server.Store, e.Owner.User, "password", ownerPassword); err != nil {
		t.Fatal(err)
	}

	// Signed out: every app route sends to sign-in, and back after.
	out := newBrowser(t, e.URL+"/signin")
	for path, want := range map[string]string{
		"/":                     "/signin",
		"/notes":                "/signin?next=" + url.QueryEscape("/notes"),
		"/notes/n1?tab=t%C3%A9": "/signin?next=" + url.QueryEscape("/notes/n1?tab=t%C3%A9"),
		"/connected":            "/signin?next=" + url.QueryEscape("/connected"),
	} {
		p := out.get(e.URL + path)
		if p.Status != http.StatusSeeOther || p.Location != want {
			t.Errorf("signed out, GET %s: %d to %q, want 303 to %q", path, p.Status, p.Location, want)
		}
	}

	b := newBrowser(t, "")
	signin := b.get(e.URL + "/signin")
	home := b.submit(signin, "", map[string]string{"email": e.Owner.User.Email, "password": ownerPassword})
	if home.Status != http.StatusOK || home.URL.Path != "/" || !strings.Contains(home.Body, `<div id="root">`) {
		t.Fatalf("after signing in: %d at %s:\n%s", home.Status, home.URL, home.Body)
	}
	m := regexp.MustCompile(`<script type="module" src="(/assets/app-[A-Z0-9]+\.js)"></script>`).FindStringSubmatch(home.Body)
	c := regexp.MustCompile(`<link rel="stylesheet" href="(/assets/app-[A-Z0-9]+\.css)">`).FindStringSubmatch(home.Body)
	if m == nil || c == nil {
		t.Fatalf("the page does not load one app-HASH.js and one app-HASH.css:\n%s", home.Body)
	}

	// The page on each client route, never cached, under the policy.
	for _, path := range []string{"/", "/notes", "/notes/", "/notes/some-id", "/notes/x/history", "/connected"} {
		resp, body := fetch(t, b.c, http.MethodGet, e.URL+path)
		h := resp.Header
		if resp.StatusCode != http.StatusOK || body != home.Body {
			t.Errorf("GET %s: %d, want 200 with the app's page", path, resp.StatusCode)
		}
		if got := h.Get("Content-Security-Policy"); got != web.CSP {
			t.Errorf("GET %s: Content-Security-Policy %q, want %q", path, got, web.CSP)
		}
		if !strings.Contains(web.CSP, "default-src 'self'") || !strings.Contains(web.CSP, "frame-ancestors 'none'") || strings.Contains(web.CSP, "unsafe") {
			t.Errorf("the policy %q must keep everything on this server, unframed, nothing unsafe", web.CSP)
		}
		if h.Get("Cache-Control") != "no-cache" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v", path, h)
		}
	}
	if resp, body := fetch(t, b.c, http.MethodHead, e.URL+"/notes"); resp.StatusCode != http.StatusOK || body != "" {
		t.Errorf("HEAD /notes: %d with %d bytes", resp.StatusCode, len(body))
	}

	// The assets: public, content-named, cached for a year.
	for _, a := range []struct{ path, ctype, has string }{{m[1], "text/javascript", "createRoot"}, {c[1], "text/css", ".topbar"}} {
		resp, body := fetch(t, http.DefaultClient, http.MethodGet, e.URL+a.path)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), a.ctype) || !strings.Contains(body, a.has) {
			t.Errorf("GET %s: %d %s, %d bytes", a.path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		if got := resp.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q", a.path, got)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", a.path)
		}
		// A conditional GET is answered 304.
		req, _ := http.NewRequest(http.MethodGet, e.URL+a.path, nil)
		req.Header.Set("If-Modified-Since", "Mon, 02 Jan 2006 15:04:05 GMT")
		if r2, err := http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		} else {
			r2.Body.Close()
			if r2.StatusCode != http.StatusOK {
				t.Errorf("GET %s with If-Modified-Since: %d (the embedded files have no time: always 200)", a.path, r2.StatusCode)
			}
		}
	}

	// Everything else is where it was.
	for _, x := range []struct {
		method, path string
		status       int
		ctype        string
	}{
		{"GET", "/assets/app-NOSUCHHASH.js", http.StatusNotFound, ""},
		{"GET", "/assets/account.css", http.StatusOK, "text/css"},
		{"GET", "/signin", http.StatusOK, "text/html"},
		{"GET", "/api/me", http.StatusOK, "application/json"},
		{"GET", "/api/connections", http.StatusOK, "application/json"},
		{"GET", "/healthz", http.StatusOK, "application/json"},
		{"GET", "/.well-known/oauth-protected-resource/mcp", http.StatusOK, "application/json"},
		{"GET", "/.well-known/oauth-authorization-server", http.StatusOK, "application/json"},
		{"POST", "/", http.StatusMethodNotAllowed, ""},
		{"GET", "/no-such-page", http.StatusNotFound, ""},
	} {
		resp, body := fetch(t, b.c, x.method, e.URL+x.path)
		if resp.StatusCode != x.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), x.ctype) {
			t.Errorf("%s %s: %d %s, want %d %s\n%.300s", x.method, x.path, resp.StatusCode, resp.Header.Get("Content-Type"), x.status, x.ctype, body)
		}
	}
}

func fetch(t *testing.T, c *http.Client, method, u string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Origin", strings.TrimSuffix(u, req.URL.Path))
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// notesOf is the owner's Notes as the service lists them, by title.
func notesOf(t *testing.T, e *servertest.Env) map[string]service.NoteSummary {
	t.Helper()
	out := map[string]service.NoteSummary{}
	for cursor := ""; ; {
		l, err := e.Server.Service.ListNotes(context.Background(), asOwner(e), service.ListNotesArgs{Page: service.Page{Cursor: cursor, Limit: service.MaxPage}})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range l.Notes {
			out[n.Title] = n
		}
		if cursor = l.NextCursor; cursor == "" {
			return out
		}
	}
}

// insertText puts text at the focused element's cursor, as a paste or an
// input method does.
func insertText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// selectAll focuses the field sel and selects its text, as a person's
// Ctrl+A does, so that the next keys replace it.
func selectAll(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Focus(chromedp.CSS(sel)), chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).select()`, sel)))
}

// accessible runs axe-core (web/node_modules, installed by npm ci --prefix
// web) on the page and fails the test on any serious or critical
// violation. Without axe-core installed it says so and checks nothing,
// unless FOUNDRY_TEST_NODE=required (as .ci/run sets), where it fails.
func accessible(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	root, err := browsertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "web", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("FOUNDRY_TEST_NODE") == "required" {
			t.Fatalf("FOUNDRY_TEST_NODE=required: the accessibility check needs axe-core: %v (run npm ci --prefix web)", err)
		}
		t.Logf("accessibility check of %s skipped: %v (run npm ci --prefix web, or set FOUNDRY_TEST_NODE=required to fail instead)", name, err)
		return
	}
	run(t, ctx, "load axe-core", chromedp.Evaluate[chromedp.Void](string(src)+";undefined"))
	found := run(t, ctx, "axe-core on "+name, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.id + " (" + v.impact + "): " + v.help + " at " + v.nodes.map(n => n.target.join(" ")).join(", ")))`, chromedp.EvalAwaitPromise))
	for _, v := range found {
		t.Errorf("%s: %s", name, v)
	}
}

// waitText waits until the element sel's text contains want.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	return browsertest.Poll(fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? "").includes(%q)`, sel, want))
}

// row is a JSPath to part of the Notes list's row titled title (the row
// itself for part "").
func row(title, part string) chromedp.JSPath {
	find := fmt.Sprintf(`[...document.querySelectorAll("#notes-list li.note")].find(li => li.querySelector(".note-title")?.innerText.trim() === %q)`, title)
	if part == "" {
		return chromedp.JSPath(find)
	}
	return chromedp.JSPath(fmt.Sprintf(`%s?.querySelector(%q)`, find, part))
}

// listed is the titles the Notes list shows, in order.
func listed(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return run(t, ctx, "listed titles", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#notes-list .note-title")].map(a => a.innerText.trim())`))
}

// TestBrowserWebAppNotes: a person signs in from an app link, lands on the
// Notes list, deletes the demo Note (cancelling once), creates Notes from
// the empty state and the New Note button, renames one (trimmed), lets
// agents reach one, searches, meets a refused search, changes a Note that
// an agent's write had moved on (412: the list reloads, nothing is lost),
// looks at it on a phone, and signs out. Every change is checked in the
// service, not only on the page.
func TestBrowserWebAppNotes(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	email := e.Owner.User.Email

	do(t, ctx, "open the app", chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(chromedp.ID("password")))
	if u := location(t, ctx); u.Path != "/signin" || u.Query().Get("next") != "/notes" {
		t.Fatalf("signed out, /notes: at %s, want /signin?next=/notes", u)
	}
	signIn(t, ctx, email, ownerPassword)
	do(t, ctx, "the Notes list", chromedp.WaitVisible(chromedp.ID("notes-title")), chromedp.WaitVisible(row("Welcome", "")))
	if u := location(t, ctx); u.Path != "/notes" {
		t.Fatalf("after signing in: at %s, want /notes", u)
	}
	if who := run(t, ctx, "who", chromedp.Text(chromedp.CSS(`.topbar .who`))); !strings.Contains(who, email) {
		t.Errorf("the top bar says %q, want the signed-in person's email %s", who, email)
	}
	if cur := run(t, ctx, "nav", chromedp.Text(chromedp.CSS(`.sidenav [aria-current=page]`))); cur != "Notes" {
		t.Errorf("the nav marks %q as the current page, want Notes", cur)
	}

	// Move to trash with confirmation: Cancel keeps the Note, Move to trash
	// takes it out of the list (the trash keeps it, see TestBrowserTrash).
	do(t, ctx, "move to trash, then cancel",
		browsertest.Click(chromedp.CSS(`button[aria-label="Move to trash: Welcome"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
	)
	if text := run(t, ctx, "dialog", chromedp.Text(chromedp.CSS(`dialog[open]`))); !strings.Contains(text, "Move this Note to the trash?") || !strings.Contains(text, "“Welcome”") {
		t.Fatalf("the confirmation says:\n%s", text)
	}
	do(t, ctx, "cancel", browsertest.Click(chromedp.CSS(`dialog[open] button.secondary`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if _, ok := notesOf(t, e)["Welcome"]; !ok {
		t.Fatal("Cancel deleted the Note")
	}
	do(t, ctx, "move to trash for real",
		browsertest.Click(chromedp.CSS(`button[aria-label="Move to trash: Welcome"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)),
		chromedp.WaitVisible(chromedp.CSS(`.empty`)),
		waitText(".empty", "No Notes yet — create one"),
	)
	if n := len(notesOf(t, e)); n != 0 {
		t.Fatalf("after deleting the only Note the service lists %d", n)
	}
	do(t, ctx, "dismiss the undo", browsertest.Click(chromedp.CSS(`.notice.undo button[aria-label="Dismiss this message"]`)), chromedp.WaitNotPresent(chromedp.CSS(`.notice.undo`)))
	noOverflow(t, ctx, "notes-empty")
	accessible(t, ctx, "notes-empty")
	browsertest.Screenshot(t, ctx, "notes-empty")

	// Create from the empty state: the Note opens with its title field
	// focused; a title emptied on rename is refused on the page.
	do(t, ctx, "create from the empty state",
		browsertest.Click(chromedp.CSS(`.empty button.primary`)),
		browsertest.Poll(`document.activeElement?.id === "note-title-input"`),
		chromedp.KeyEvent("Quarterly plan\r"),
		chromedp.WaitNotPresent(chromedp.ID("note-title-input")),
		waitText("#note-title", "Quarterly plan"),
		browsertest.Click(chromedp.ID("note-actions-button")),
		browsertest.Click(chromedp.CSS(`#note-actions-menu [data-item=rename]`)),
		chromedp.WaitVisible(chromedp.ID("note-title-input")),
		selectAll("#note-title-input"),
		chromedp.KeyEvent("\b\r"),
		chromedp.WaitVisible(chromedp.ID("note-title-error")),
	)
	if msg := run(t, ctx, "title error", chromedp.Text(chromedp.ID("note-title-error"))); !strings.Contains(msg, "title") {
		t.Errorf("an empty title: the page says %q", msg)
	}
	noOverflow(t, ctx, "notes-create")
	accessible(t, ctx, "notes-create")
	browsertest.Screenshot(t, ctx, "notes-create")
	do(t, ctx, "Escape keeps it", chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(chromedp.ID("note-title-input")), waitText("#note-title", "Quarterly plan"),
		browsertest.Click(chromedp.CSS(".note-head .back")), chromedp.WaitVisible(row("Quarterly plan", "")))
	for _, title := range []string{"Research log", "Team offsite"} {
		do(t, ctx, "create "+title, newNote(title))
	}
	notes := notesOf(t, e)
	if len(notes) != 3 || notes["Quarterly plan"].NoteID == "" || notes["Research log"].NoteID == "" || notes["Team offsite"].NoteID == "" {
		t.Fatalf("after creating three Notes the service lists %v", notes)
	}

	// Rename inline: the title is trimmed; Escape keeps the old one.
	researchID := notes["Research log"].NoteID
	do(t, ctx, "rename",
		browsertest.Click(chromedp.CSS(`button[aria-label="Rename Research log"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.rename input`)),
		selectAll(`form.rename input`),
		chromedp.KeyEvent("  Research notes  \r"),
		chromedp.WaitVisible(row("Research notes", "")),
	)
	notes = notesOf(t, e)
	if _, old := notes["Research log"]; old || notes["Research notes"].NoteID != researchID {
		t.Fatalf("after renaming, the service lists %v", notes)
	}
	do(t, ctx, "rename, then Escape",
		browsertest.Click(chromedp.CSS(`button[aria-label="Rename Team offsite"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.rename input`)),
		chromedp.SendKeys(chromedp.CSS(`form.rename input`), " (draft)"),
		chromedp.KeyEvent("\x1b"),
		chromedp.WaitNotPresent(chromedp.CSS(`form.rename`)),
	)
	if _, ok := notesOf(t, e)["Team offsite"]; !ok {
		t.Fatal("Escape renamed the Note")
	}
	if at := run(t, ctx, "focus after Escape", chromedp.Evaluate[string](`document.activeElement?.getAttribute("aria-label") ?? ""`)); at != "Rename Team offsite" {
		t.Errorf("after Escape the focus is on %q, want back on the Rename Team offsite button", at)
	}

	// The connected-access switch.
	sw := row("Quarterly plan", "[role=switch]")
	if name := run(t, ctx, "switch name", chromedp.Evaluate[string](`(() => { const b = `+string(sw)+`; return b.getAttribute("aria-labelledby").split(" ").map(id => document.getElementById(id).innerText).join(" "); })()`)); name != "Agents can reach this Note Quarterly plan" {
		t.Errorf("the switch is named %q", name)
	}
	do(t, ctx, "let agents reach it", browsertest.Click(sw), chromedp.WaitVisible(row("Quarterly plan", `[role=switch][aria-checked=true]`)))
	if !notesOf(t, e)["Quarterly plan"].Approved {
		t.Fatal("the switch is on, but the service says agents cannot reach the Note")
	}
	do(t, ctx, "and back", browsertest.Click(sw), chromedp.WaitVisible(row("Quarterly plan", `[role=switch][aria-checked=false]`)))
	if notesOf(t, e)["Quarterly plan"].Approved {
		t.Fatal("the switch is off, but the service says agents can reach the Note")
	}
	do(t, ctx, "on again, by its label", browsertest.Click(row("Quarterly plan", ".switch-label")), chromedp.WaitVisible(row("Quarterly plan", `[role=switch][aria-checked=true]`)))
	if !notesOf(t, e)["Quarterly plan"].Approved {
		t.Fatal("the label switched the page, not the Note")
	}

	// Search (debounced; "/" goes to the box), no match, and a search the
	// server refuses.
	do(t, ctx, "slash", chromedp.Focus(chromedp.CSS(`.page-head button`)), chromedp.KeyEvent("/"))
	if focused := run(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.type`)); focused != "search" {
		t.Errorf(`"/" focused a %q, want the search box`, focused)
	}
	// (The DevTools protocol's separate char event types the "/" that a
	// browser's own keyboard would drop: the box is emptied first.)
	do(t, ctx, "search", selectAll(`input[type=search]`), chromedp.KeyEvent("offsite"),
		browsertest.Poll(`document.querySelectorAll("#notes-list li.note").length === 1`))
	if got := listed(t, ctx); len(got) != 1 || got[0] != "Team offsite" {
		t.Fatalf("searching offsite lists %v", got)
	}
	do(t, ctx, "no match", chromedp.SendKeys(chromedp.CSS(`input[type=search]`), "zzz"), waitText(".empty", "No Notes match “offsitezzz”"))
	// A bidi control, as a paste would bring it (keys cannot type it).
	do(t, ctx, "a refused search", chromedp.Focus(chromedp.CSS(`input[type=search]`)), insertText("\u202e"), chromedp.WaitVisible(chromedp.CSS(`.error-box`)))
	if msg := run(t, ctx, "error", chromedp.Text(chromedp.CSS(`.error-box p`))); !strings.Contains(msg, "Query") || !strings.Contains(msg, "U+202E") {
		t.Errorf("a refused search shows %q, want the problem's detail about the query", msg)
	}
	browsertest.Screenshot(t, ctx, "notes-error")
	do(t, ctx, "clear the search", selectAll(`input[type=search]`), chromedp.KeyEvent("\b"),
		browsertest.Poll(`document.querySelectorAll("#notes-list li.note").length === 3`))

	// A change based on what the list showed, after an agent's write moved
	// the Note on (through MCP, with a token named "test"): refused (412),
	// said so with who wrote, and the list reloads.
	n := notesOf(t, e)["Quarterly plan"]
	agent := e.Client(t, e.WriteToken(t), "")
	if r := servertest.MustCall(t, agent, "create_note_tab", map[string]any{"note_id": n.NoteID, "expected_version": n.Version, "tab_type": "sheet", "label": "Budget", "idempotency_key": "webapp-test-budget"}); r.IsError {
		t.Fatalf("the agent's write: %s", r.Text)
	}
	do(t, ctx, "switch a Note that changed meanwhile", browsertest.Click(row("Quarterly plan", "[role=switch]")),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)))
	if msg := run(t, ctx, "notice", chromedp.Text(chromedp.CSS(`.notice p`))); !strings.Contains(msg, "“Quarterly plan” was changed by test since the list was loaded") || !strings.Contains(msg, "your change was not made") {
		t.Errorf("a 412 shows %q", msg)
	}
	if got := notesOf(t, e)["Quarterly plan"]; !got.Approved || got.Version <= n.Version {
		t.Errorf("the refused switch changed the Note, or the agent's write is gone: %+v (was %+v)", got, n)
	}
	do(t, ctx, "the list reloaded", chromedp.WaitVisible(row("Quarterly plan", `[role=switch][aria-checked=true]`)))
	browsertest.Screenshot(t, ctx, "notes-conflict")
	do(t, ctx, "dismiss", browsertest.Click(chromedp.CSS(`.notice button`)), chromedp.WaitNotPresent(chromedp.CSS(`.notice`)))
	noOverflow(t, ctx, "notes-list")
	accessible(t, ctx, "notes-list")
	browsertest.Screenshot(t, ctx, "notes-list")

	// Dark, when the person's system asks for it.
	do(t, ctx, "dark", browsertest.ColorScheme("dark"))
	if bg := run(t, ctx, "background", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)); bg != "rgb(20, 21, 24)" {
		t.Errorf("in dark mode the page's background is %s", bg)
	}
	accessible(t, ctx, "notes-dark")
	browsertest.Screenshot(t, ctx, "notes-dark")
	do(t, ctx, "light", browsertest.ColorScheme("light"))

	// A phone's width.
	do(t, ctx, "phone width", browsertest.Phone(), chromedp.WaitVisible(row("Quarterly plan", "")))
	noOverflow(t, ctx, "notes-phone")
	accessible(t, ctx, "notes-phone")
	browsertest.Screenshot(t, ctx, "notes-phone")
	do(t, ctx, "a wide screen", chromedp.EmulateViewport(1440, 900), chromedp.WaitVisible(row("Quarterly plan", "")))
	noOverflow(t, ctx, "notes at 1440 px")
	if w := run(t, ctx, "list width", chromedp.Evaluate[int](`Math.round(document.getElementById("notes-list").getBoundingClientRect().width)`)); w > 1000 {
		t.Errorf("at 1440 px the list is %d px wide: it should keep a readable measure", w)
	}
	do(t, ctx, "desktop width", browsertest.Desktop())

	// The Connected page lists the workspace's tokens; then sign out.
	do(t, ctx, "Connected", browsertest.Click(chromedp.CSS(`.sidenav a[href="/connected"]`)), chromedp.WaitVisible(chromedp.ID("connected-title")))
	if u := location(t, ctx); u.Path != "/connected" {
		t.Errorf("the Connected link: at %s", u)
	}
	do(t, ctx, "the connections", browsertest.Poll(`!document.querySelector(".loading")`))
	if text := run(t, ctx, "connections", chromedp.Text(chromedp.CSS(`.page`))); !strings.Contains(text, "Personal access token") || !strings.Contains(text, "test") {
		t.Errorf("the Connected page does not list the agent's token:\n%s", text)
	}
	accessible(t, ctx, "connected")
	browsertest.Screenshot(t, ctx, "connected")
	do(t, ctx, "revoke the token",
		browsertest.Click(chromedp.CSS(`button[aria-label="Revoke test"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)),
		waitText(".empty", "Nothing is connected"),
	)
	entries, err := e.Server.Service.ListConnections(context.Background(), asOwner(e))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !entries[0].Revoked {
		t.Errorf("after Revoke the workspace's connections are %+v, want the one token, revoked", entries)
	}
	do(t, ctx, "sign out", browsertest.Click(chromedp.CSS(`.topbar button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("password")))
	if u := location(t, ctx); u.Path != "/signin" {
		t.Fatalf("after signing out: at %s", u)
	}
	do(t, ctx, "the app again", chromedp.Navigate(e.URL+"/"), chromedp.WaitVisible(chromedp.ID("password")))
	if u := location(t, ctx); u.Path != "/signin" {
		t.Fatalf("signed out, /: at %s", u)
	}
}
