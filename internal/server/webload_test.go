package server_test

import (
	"context"
	"fmt"
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
				var parts []string
				for _, a := range e.Args {
					if a.Description != "" {
						parts = append(parts, a.Description)
					} else {
						parts = append(parts, string(a.Value))
					}
				}
				w.errors = append(w.errors, "console.error: "+strings.Join(parts, " "))
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
