package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"foundry/internal/account"
	"foundry/internal/browsertest"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/web"
)

// How the web app loads: what JavaScript a page fetches (compressed, as
// served), when the Notes list is painted, and whether anything on the
// page breaks the Content-Security-Policy. The browser tests and the
// benchmark below share this watcher.

// pageWatch records what a tab fetched and what went wrong on its page.
type pageWatch struct {
	mu      sync.Mutex
	scripts []fetchedScript
	errors  []string
}

// fetchedScript is one script response as the server sent it.
type fetchedScript struct {
	URL      string
	Encoding string // Content-Encoding ("" for none)
	Bytes    int64  // Content-Length: the body's bytes as sent
}

// pageProbe runs in every document of the tab before any of the page's
// own scripts: it collects the page's CSP violations (the
// securitypolicyviolation event), and marks the Notes list's row titles
// for the Element Timing API as they arrive, so that __listAt is the
// time the first of them was painted (the app renders the whole list at
// once, as a static page's parser does).
const pageProbe = `(() => {
	window.__csp = [];
	document.addEventListener("securitypolicyviolation", (e) => {
		window.__csp.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") + (e.sample ? " (" + e.sample + ")" : "") + " at " + e.sourceFile + ":" + e.lineNumber);
	});
	new MutationObserver(() => {
		for (const s of document.querySelectorAll("#notes-list li.note:not([elementtiming]), #notes-list li.note *:not([elementtiming])")) s.setAttribute("elementtiming", "row");
	}).observe(document, { childList: true, subtree: true });
	new PerformanceObserver((list) => {
		for (const e of list.getEntries()) {
			if (e.identifier === "row" && window.__listAt === undefined) window.__listAt = e.renderTime || e.loadTime;
		}
	}).observe({ type: "element", buffered: true });
})()`

// watchPage starts recording ctx's tab: script responses, console errors,
// uncaught exceptions and the browser's own error messages (a refused
// style or script is one), and installs pageProbe.
func watchPage(tb testing.TB, ctx context.Context) *pageWatch {
	tb.Helper()
	w := &pageWatch{}
	err := chromedp.Listen(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventResponseReceived:
			if e.Type != network.ResourceTypeScript || e.Response == nil {
				return
			}
			n, _ := strconv.ParseInt(header(e.Response.Headers, "Content-Length"), 10, 64)
			w.scripts = append(w.scripts, fetchedScript{URL: e.Response.URL, Encoding: header(e.Response.Headers, "Content-Encoding"), Bytes: n})
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				w.errors = append(w.errors, "console.error: "+consoleText(e.Args))
			}
		case *runtime.EventExceptionThrown:
			if d := e.ExceptionDetails; d != nil {
				msg := d.Text
				if d.Exception != nil {
					msg += " " + d.Exception.Description
				}
				w.errors = append(w.errors, "uncaught: "+msg)
			}
		case *log.EventEntryAdded:
			if e.Entry != nil && e.Entry.Level == log.EntryLevelError {
				w.errors = append(w.errors, fmt.Sprintf("%s: %s (%s)", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		}
	})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: pageProbe}); err != nil {
		tb.Fatal(err)
	}
	// Every load is a first visit: nothing comes from the browser's cache.
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		tb.Fatal(err)
	}
	return w
}

// take answers what was recorded since the last take, and forgets it.
func (w *pageWatch) take() ([]fetchedScript, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, e := w.scripts, w.errors
	w.scripts, w.errors = nil, nil
	return s, e
}

// consoleText is a console call's arguments as the console prints them.
func consoleText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if a.Description != "" {
			parts = append(parts, a.Description)
		} else {
			parts = append(parts, string(a.Value))
		}
	}
	return strings.Join(parts, " ")
}

func header(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// jsBytes is the compressed bytes of the scripts, as served.
func jsBytes(ss []fetchedScript) int64 {
	var n int64
	for _, s := range ss {
		n += s.Bytes
	}
	return n
}

// tbRun is run for tests and benchmarks alike.
func tbRun[T any](tb testing.TB, ctx context.Context, what string, a chromedp.Action[T]) T {
	tb.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	return v
}

func tbDo(tb testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	tbRun(tb, ctx, what, chromedp.Steps(steps...))
}

// loadEnv is a server whose workspace has notes Notes in all (the demo
// Note and notes-1 more), its owner signed in on a tab of Chromium that
// a pageWatch records. The same server answers staticPath with the page
// *static holds, once it holds one.
func loadEnv(tb testing.TB, notes int, static *atomic.Pointer[[]byte]) (*servertest.Env, context.Context, *pageWatch) {
	tb.Helper()
	e := servertest.Start(tb, servertest.Options{})
	app := e.HTTP.Config.Handler
	// (Set before the first request: every connection's goroutine starts after.)
	e.HTTP.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body := static.Load()
		if r.URL.Path != staticPath || body == nil {
			app.ServeHTTP(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.Header().Set("Content-Security-Policy", web.CSP)
		rw.Header().Set("Cache-Control", "no-cache")
		rw.Write(*body)
	})
	if err := account.SetPassword(context.Background(), e.Server.Store, e.Owner.User, "password", ownerPassword); err != nil {
		tb.Fatal(err)
	}
	pc := asOwner(e)
	for i := 1; i < notes; i++ {
		if _, err := e.Server.Service.CreateNote(context.Background(), pc, service.CreateNoteArgs{Title: fmt.Sprintf("Project note %02d: plans, budgets and minutes", i), Approved: i%3 == 0}); err != nil {
			tb.Fatal(err)
		}
	}
	ctx := browsertest.New(tb)
	w := watchPage(tb, ctx)
	tbDo(tb, ctx, "sign in",
		chromedp.Navigate(e.URL+"/notes"),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("email"), e.Owner.User.Email),
		chromedp.SendKeys(chromedp.ID("password"), ownerPassword),
		browsertest.Click(chromedp.CSS(`button[type=submit]`)),
	)
	tbDo(tb, ctx, "the Notes list", chromedp.WaitVisible(chromedp.ID("notes-title")),
		browsertest.Poll(fmt.Sprintf(`document.querySelectorAll("#notes-list li.note").length === %d`, notes)),
	)
	w.take()
	return e, ctx, w
}

// paint is what one load of a page measured, in milliseconds from the
// start of the navigation.
type paint struct {
	FCP  float64 // first-contentful-paint
	List float64 // the list's rows painted (Element Timing)
}

// loadPaint navigates to u and waits for the whole Notes list.
func loadPaint(tb testing.TB, ctx context.Context, u string) paint {
	tb.Helper()
	tbDo(tb, ctx, "load "+u, chromedp.Navigate(u), browsertest.Poll(`typeof window.__listAt === "number" && performance.getEntriesByName("first-contentful-paint").length > 0`))
	return tbRun(tb, ctx, "paint timings", chromedp.Evaluate[paint](`({FCP: performance.getEntriesByName("first-contentful-paint")[0].startTime, List: window.__listAt})`))
}

// staticNotesPage is the Notes list as the app rendered it, as a static
// page: the same markup and stylesheet, no script.
func staticNotesPage(tb testing.TB, ctx context.Context) []byte {
	tb.Helper()
	html := tbRun(tb, ctx, "the rendered list", chromedp.Evaluate[string](`(() => {
		const d = document.documentElement.cloneNode(true);
		d.querySelectorAll("script, link[rel=modulepreload]").forEach((s) => s.remove());
		return "<!doctype html>\n" + d.outerHTML;
	})()`))
	if !strings.Contains(html, `id="notes-list"`) || !regexp.MustCompile(`<link rel="stylesheet" href="/assets/app-[A-Z0-9]+\.css">`).MatchString(html) {
		tb.Fatalf("the rendered page has no Notes list or no stylesheet:\n%.2000s", html)
	}
	return []byte(html)
}

// staticPath is where BenchmarkWebNotesFirstPage serves the static copy,
// from the same server.
const staticPath = "/bench/notes-static"

// BenchmarkWebNotesFirstPage loads the Notes list of a workspace of 50
// Notes in a fresh tab state (no cache), as a person's first visit does,
// and reports the compressed bytes of the JavaScript the page fetched
// and how much later than the same content as a static page (the list's
// markup and stylesheet, no script, from the same server) its first
// paint and its whole list are painted.
func BenchmarkWebNotesFirstPage(b *testing.B) {
	const notes = 50
	var static atomic.Pointer[[]byte]
	e, ctx, w := loadEnv(b, notes, &static)
	html := staticNotesPage(b, ctx)
	static.Store(&html)
	// One load of each first, so that both start from the same warm server.
	loadPaint(b, ctx, e.URL+"/notes")
	loadPaint(b, ctx, e.URL+staticPath)
	w.take()

	var appFCP, appList, staticFCP, staticList, js float64
	b.ResetTimer()
	for range b.N {
		a := loadPaint(b, ctx, e.URL+"/notes")
		scripts, _ := w.take()
		s := loadPaint(b, ctx, e.URL+staticPath)
		w.take()
		appFCP += a.FCP
		appList += a.List
		staticFCP += s.FCP
		staticList += s.List
		js += float64(jsBytes(scripts))
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(js/n, "js-bytes/load")
	b.ReportMetric(appFCP/n, "app-fcp-ms")
	b.ReportMetric(staticFCP/n, "static-fcp-ms")
	b.ReportMetric(appFCP/staticFCP, "fcp-ratio")
	b.ReportMetric(appList/n, "app-list-ms")
	b.ReportMetric(staticList/n, "static-list-ms")
	b.ReportMetric(appList/staticList, "list-paint-ratio")
}

// assetBody is the file at u as it is, uncompressed.
func assetBody(t *testing.T, u string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	resp, body := fetchReq(t, req)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("GET %s: %d %q", u, resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	return body
}

func fetchReq(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, io.LimitReader(resp.Body, 8<<20)); err != nil {
		t.Fatal(err)
	}
	return resp, b.String()
}

// openInApp goes to path the way the app's own links do (no reload).
func openInApp(path string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`history.pushState(null, "", %q); dispatchEvent(new PopStateEvent("popstate"))`, path))
}

// gridCell is true once the sheet's grid shows its first cell.
const gridCell = `!!document.querySelector(".sheet-grid revogr-data .rgCell")`

// firstPageBudget is the most JavaScript, compressed as served, that the
// Notes list may fetch.
const firstPageBudget = 250_000

// TestBrowserWebAppFirstPage: the Notes list of a 50-Note workspace (one
// page of it)
// fetches at most firstPageBudget bytes of JavaScript, every script
// compressed, none of it an editor's; opening a sheet tab then fetches
// the grid's chunk.
func TestBrowserWebAppFirstPage(t *testing.T) {
	t.Parallel()
	var none atomic.Pointer[[]byte]
	e, ctx, w := loadEnv(t, 49, &none)
	id, tab := sheetxNote(t, e, "Budget sheet") // the 50th: one page of the list

	tbDo(t, ctx, "load the Notes list", chromedp.Navigate(e.URL+"/notes"), browsertest.Poll(`document.querySelectorAll("#notes-list li.note").length === 50`))
	first, errs := w.take()
	for _, m := range errs {
		t.Errorf("the Notes list: %s", m)
	}
	if len(first) == 0 {
		t.Fatal("the Notes list fetched no script")
	}
	loaded := map[string]bool{}
	for _, s := range first {
		loaded[s.URL] = true
		if s.Encoding != "br" && s.Encoding != "gzip" {
			t.Errorf("%s came with Content-Encoding %q, want br or gzip", s.URL, s.Encoding)
		}
		if s.Bytes <= 0 {
			t.Errorf("%s came without its length", s.URL)
		}
		if body := assetBody(t, s.URL); strings.Contains(body, "revo-grid") || strings.Contains(body, "cm-editor") {
			t.Errorf("the Notes list fetched %s, which has an editor's code (the grid or CodeMirror)", s.URL)
		}
	}
	total := jsBytes(first)
	t.Logf("the Notes list fetched %d scripts, %d bytes compressed (%s)", len(first), total, first[0].Encoding)
	if total > firstPageBudget {
		t.Errorf("the Notes list fetched %d bytes of JavaScript, compressed: over its budget of %d", total, firstPageBudget)
	}

	tbDo(t, ctx, "open the sheet tab", openInApp("/notes/"+id+"?tab="+tab), browsertest.Poll(gridCell))
	then, errs := w.take()
	for _, m := range errs {
		t.Errorf("opening the sheet tab: %s", m)
	}
	grid := ""
	for _, s := range then {
		if loaded[s.URL] {
			t.Errorf("opening the sheet tab fetched %s again", s.URL)
		}
		if strings.Contains(assetBody(t, s.URL), "revo-grid") {
			grid = s.URL
		}
	}
	if grid == "" {
		t.Errorf("opening the sheet tab fetched %v, none of it the grid", then)
	}
}

// TestBrowserWebAppEditorsUnderCSP: a sheet, a markdown and a slides tab
// open without one violation of the page's Content-Security-Policy (a
// listener installed before the app's first script) and without a
// console error, the grid styled all the same; a chunk that does not
// arrive says so, and Try again loads it.
func TestBrowserWebAppEditorsUnderCSP(t *testing.T) {
	t.Parallel()
	var none atomic.Pointer[[]byte]
	e, ctx, w := loadEnv(t, 1, &none)
	sheetID, sheetTab := sheetxNote(t, e, "Sheet")
	n, err := e.Server.Service.CreateNote(context.Background(), asOwner(e), service.CreateNoteArgs{Title: "Deck"})
	if err != nil {
		t.Fatal(err)
	}
	deck, err := e.Server.Service.CreateNoteTab(context.Background(), asOwner(e), service.CreateTabArgs{NoteID: n.NoteID, ExpectedVersion: n.Version, TabType: "slides", Label: "Deck"})
	if err != nil {
		t.Fatal(err)
	}

	clean := func(what string) {
		t.Helper()
		csp := tbRun(t, ctx, "violations", chromedp.Evaluate[[]string](`window.__csp`))
		_, errs := w.take()
		for _, v := range append(csp, errs...) {
			t.Errorf("%s: %s", what, v)
		}
		if n := tbRun(t, ctx, "style elements", chromedp.Evaluate[int](`document.querySelectorAll("style").length`)); n != 0 {
			t.Errorf("%s: the page has %d <style> elements", what, n)
		}
	}
	// One load of the app (the listener is there before its first script),
	// then each tab the way its links open it. (A reload per tab would
	// leave the pages before it in the browser's back-forward cache with
	// their event streams open, and HTTP/1.1's six connections to the
	// server run out.)
	tbDo(t, ctx, "the slides tab", chromedp.Navigate(e.URL+"/notes/"+n.NoteID+"?tab="+deck.TabID), chromedp.WaitVisible(chromedp.CSS(`.sl-empty button.primary`)),
		browsertest.Click(chromedp.CSS(`.sl-empty button.primary`)), chromedp.WaitVisible(chromedp.ID("sl-field-title")))
	clean("the slides tab")
	tbDo(t, ctx, "the sheet tab", openInApp("/notes/"+sheetID+"?tab="+sheetTab), browsertest.Poll(gridCell))
	clean("the sheet tab")
	// The grid's stylesheets are the app's: the grid is laid out by them.
	if got := tbRun(t, ctx, "grid style", chromedp.Evaluate[string](`getComputedStyle(document.querySelector("revo-grid")).display + " " + getComputedStyle(document.querySelector("revogr-header")).position`)); got != "flex relative" {
		t.Errorf("the grid is not styled: revo-grid's display and revogr-header's position are %q, want flex relative", got)
	}

	// CodeMirror styles its shadow root with constructed stylesheets
	// (adoptedStyleSheets), which the policy does not govern.
	tbDo(t, ctx, "the markdown tab", openInApp("/notes/"+e.NoteID), browsertest.Poll(`!!document.querySelector(".md-editor")?.shadowRoot?.querySelector(".cm-content")`))
	clean("the markdown tab")
	if got := tbRun(t, ctx, "editor style", chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".md-editor").shadowRoot.querySelector(".cm-editor")).display`)); got != "flex" {
		t.Errorf("CodeMirror is not styled: .cm-editor's display is %q, want flex", got)
	}

	// The grid's chunk does not arrive: the tab says so; then it does.
	tbDo(t, ctx, "the Notes list", chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(chromedp.ID("notes-title")))
	w.take()
	block := func(patterns ...string) {
		var ps []*network.BlockPattern
		for _, p := range patterns {
			ps = append(ps, &network.BlockPattern{URLPattern: p, Block: true})
		}
		if _, err := chromedp.Call(ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: ps}); err != nil {
			t.Fatal(err)
		}
	}
	block("*://*:*/assets/*")
	tbDo(t, ctx, "open the sheet tab, its chunk blocked", openInApp("/notes/"+sheetID+"?tab="+sheetTab), chromedp.WaitVisible(chromedp.CSS(`.error-box`)))
	if msg := tbRun(t, ctx, "the failure", chromedp.Text(chromedp.CSS(`.error-box`))); !strings.Contains(msg, "The sheet editor could not be loaded") || !strings.Contains(msg, "Try again") {
		t.Errorf("a chunk that did not arrive shows %q", msg)
	}
	browsertest.Screenshot(t, ctx, "note-chunk-failed")
	block()
	w.take()
	tbDo(t, ctx, "try again", browsertest.Click(chromedp.CSS(`.error-box button`)), browsertest.Poll(gridCell))
	if _, errs := w.take(); len(errs) > 0 {
		t.Errorf("after Try again: %v", errs)
	}
}
