package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"foundry/internal/browsertest"
	"foundry/internal/note"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// A person's walk through every page of a Note, as they would meet it:
// the Notes list, each tab type, the tab strip, history, a phone and a
// wide screen, dark pages, hostile titles and labels, an agent writing
// meanwhile, a tab and then the Note deleted elsewhere, and signing out.
// Every console error, uncaught exception and failed request the page did
// not expect fails the walk.

// walkXWatch collects what went wrong in the page: console errors,
// uncaught exceptions, and answers of 400 or more (but those the walk
// expects, by method and path).
type walkXWatch struct {
	mu       sync.Mutex
	problems []string
	expected []*regexp.Regexp
	methods  map[network.RequestID]string
	requests []string // "METHOD path?query" of every /api/ request, in order
	sizes    map[string]int64
	ids      map[network.RequestID]string
}

func walkXWatchPage(t *testing.T, ctx context.Context) *walkXWatch {
	t.Helper()
	w := &walkXWatch{methods: map[network.RequestID]string{}, sizes: map[string]int64{}, ids: map[network.RequestID]string{}}
	err := chromedp.Listen(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type != runtime.ConsoleAPICalledTypeError && e.Type != runtime.ConsoleAPICalledTypeAssert {
				return
			}
			w.problems = append(w.problems, "console."+string(e.Type)+": "+consoleText(e.Args))
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg += " " + d.Exception.Description
			}
			w.problems = append(w.problems, fmt.Sprintf("uncaught exception: %s (%s:%d)", msg, d.URL, d.LineNumber+1))
		case *network.EventRequestWillBeSent:
			if e.Request == nil {
				return
			}
			w.methods[e.RequestID] = e.Request.Method
			if i := strings.Index(e.Request.URL, "/api/"); i >= 0 {
				w.requests = append(w.requests, e.Request.Method+" "+e.Request.URL[i:])
				w.ids[e.RequestID] = e.Request.Method + " " + e.Request.URL[i:]
			}
		case *network.EventResponseReceived:
			if e.Response == nil || e.Response.Status < 400 {
				return
			}
			what := w.methods[e.RequestID] + " " + walkXPath(e.Response.URL)
			for _, re := range w.expected {
				if re.MatchString(what) {
					return
				}
			}
			w.problems = append(w.problems, fmt.Sprintf("%s answered %d", what, e.Response.Status))
		case *network.EventLoadingFinished:
			if k, ok := w.ids[e.RequestID]; ok {
				w.sizes[k] = int64(e.EncodedDataLength)
			}
		}
	})
	if err == nil {
		_, err = chromedp.Call(ctx, runtime.Enable, struct{}{})
	}
	if err != nil {
		t.Fatalf("watching the page: %v", err)
	}
	return w
}

// walkXPath is a URL's path and query.
func walkXPath(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			return u[i+3+j:]
		}
	}
	return u
}

// expect lets answers of 400 or more to "METHOD path" matching re pass.
func (w *walkXWatch) expect(re string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expected = append(w.expected, regexp.MustCompile(re))
}

// reset expects no failed answer again.
func (w *walkXWatch) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expected = nil
}

// check fails the test with every problem seen since the last check.
func (w *walkXWatch) check(t *testing.T, where string) {
	t.Helper()
	time.Sleep(150 * time.Millisecond) // the events of the last step
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.problems {
		t.Errorf("%s: %s", where, p)
	}
	w.problems = nil
}

// sent is the /api/ requests matching re, in order, and the body size of
// the last one.
func (w *walkXWatch) sent(re string) ([]string, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rx := regexp.MustCompile(re)
	var out []string
	for _, r := range w.requests {
		if rx.MatchString(r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, 0
	}
	return out, w.sizes[out[len(out)-1]]
}

// walkXREST calls the REST API as a script does, with a bearer token.
func walkXREST(t *testing.T, e *servertest.Env, token, method, path string, version int64, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if version > 0 {
		req.Header.Set("If-Match", fmt.Sprintf(`"%d"`, version))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// walkXServerDown makes every /api/ request of the page fail as if the
// server had stopped (connection refused), until the answered func is
// called.
func walkXServerDown(t *testing.T, ctx context.Context) (back func()) {
	t.Helper()
	lctx, stop := context.WithCancel(ctx)
	err := chromedp.Listen(lctx, func(ev any) {
		if e, ok := ev.(*cdpfetch.EventRequestPaused); ok {
			go func() {
				_, _ = chromedp.Call(ctx, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonConnectionRefused})
			}()
		}
	})
	if err == nil {
		_, err = chromedp.Call(ctx, cdpfetch.Enable, cdpfetch.EnableParams{Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*/api/*"}}})
	}
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := chromedp.Call(ctx, cdpfetch.Disable, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		stop()
	}
}

// walkXTab clicks the strip's tab whose label contains label and waits for
// its view.
func walkXTab(label string) chromedp.Action[chromedp.Void] {
	find := fmt.Sprintf(`[...document.querySelectorAll("[role=tablist][aria-labelledby=note-title] [role=tab]")].find(b => b.innerText.includes(%q))`, label)
	return chromedp.Steps(
		browsertest.Click(chromedp.JSPath(find)),
		browsertest.Poll(find+`?.getAttribute("aria-selected") === "true" && !document.querySelector(".tabpanel .loading")`),
	)
}

// walkXLayouts checks the page at a phone's width and a wide screen, and
// in dark mode, for overflow and (dark) accessibility.
func walkXLayouts(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	do(t, ctx, "phone", browsertest.Phone())
	noOverflow(t, ctx, name+" at 390 px")
	do(t, ctx, "wide", browsertest.Desktop(), chromedp.EmulateViewport(1440, 900))
	noOverflow(t, ctx, name+" at 1440 px")
	// (after the colours' transitions)
	do(t, ctx, "dark", browsertest.ColorScheme("dark"), chromedp.Sleep(400*time.Millisecond))
	accessible(t, ctx, name+" (dark)")
	do(t, ctx, "light", browsertest.ColorScheme("light"), browsertest.Desktop())
}

func TestBrowserWalkNotes(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	w := walkXWatchPage(t, ctx)
	bg := context.Background()
	me := asOwner(e)
	token := e.WriteToken(t)

	// Signed out, the app asks who the person is (401), then signs in.
	w.expect(`^GET /api/me$`)
	signInToNotes(t, ctx, e)
	w.check(t, "signing in")
	w.reset()

	// A Note with a hostile title: right-to-left text, emoji, 200 runes.
	title := "שלום עולם ✨🧪 " + strings.Repeat("x", 20) + strings.Repeat("long-title-without-spaces", 6)
	if r := []rune(title); len(r) > 200 {
		title = string(r[:200])
	}
	do(t, ctx, "create a Note",
		newNote(title),
	)
	id := notesOf(t, e)[title].NoteID
	if id == "" {
		t.Fatalf("the service has no Note titled %q", title)
	}
	// Agents reach it: the connected-access switch, by keyboard.
	do(t, ctx, "let agents reach it", chromedp.Focus(row(title, "[role=switch]")), chromedp.KeyEvent(" "),
		chromedp.WaitVisible(row(title, `[role=switch][aria-checked=true]`)))
	if !notesOf(t, e)[title].Approved {
		t.Fatal("the switch did not let agents reach the Note")
	}
	walkXLayouts(t, ctx, "the Notes list with a long title")
	w.check(t, "the Notes list")

	// A Note of 1 MiB of markdown opens and takes typing; past the limit
	// the page says why the text is not saved.
	big, err := e.Server.Service.CreateNote(bg, me, service.CreateNoteArgs{Title: "Big", Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("ünïcödé 🙂 ", 8) + "\n"
	text := strings.Repeat(line, (note.MaxMarkdownBytes-64)/len(line))
	if _, err := e.Server.Service.EditNoteTab(bg, me, service.EditTabArgs{NoteID: big.NoteID, TabID: note.TypeMarkdown, ExpectedVersion: big.Version, Operation: "replace_text", Text: &text}); err != nil {
		t.Fatal(err)
	}
	// A 1 MiB Note takes about 10 s to show on an idle two-core machine
	// (as it did before the text was live): this step has a minute.
	bigCtx, cancelBig := context.WithTimeout(ctx, time.Minute)
	defer cancelBig()
	if err := chromedp.Do(bigCtx, chromedp.Navigate(e.URL+"/notes/"+big.NoteID), chromedp.WaitVisible(cmContent)); err != nil {
		t.Fatalf("open the big Note: %v", err)
	}
	if err := chromedp.Do(ctx, waitSaved()); err != nil {
		t.Fatalf("the big Note: %v; %s", err, coeditState(t, ctx))
	}
	w.expect(`^POST /api/notes/` + big.NoteID + `/text$`)
	do(t, ctx, "type past the limit", typeAtEnd(strings.Repeat("x", 200)), browsertest.Poll(`document.getElementById("save-state")?.innerText === "Not saved"`),
		waitText(".error-box", "Not saved"))
	if msg := run(t, ctx, "why", chromedp.Text(chromedp.CSS(".error-box"))); !strings.Contains(msg, "MiB") && !strings.Contains(msg, "bytes") {
		t.Errorf("past the limit the page says %q, not the limit", msg)
	}
	noOverflow(t, ctx, "the big Note")
	w.check(t, "a 1 MiB markdown tab")
	w.reset()

	// The Note: the markdown tab; typing saves; Ctrl+S saves at once.
	do(t, ctx, "open the Note", chromedp.Navigate(e.URL+"/notes"), browsertest.Click(row(title, ".note-title")), chromedp.WaitVisible(cmContent), waitSaved())
	do(t, ctx, "type", typeAtEnd("\n\nמה נשמע? 👋 typed by a person"), chromedp.KeyEvent("s", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	savedOnServer(t, ctx, e, id)
	if text, _ := serverText(t, e, id); !strings.Contains(text, "מה נשמע? 👋 typed by a person") {
		t.Fatalf("the server has %q, without what was typed", text)
	}
	walkXLayouts(t, ctx, "the Note with a long title")
	w.check(t, "the markdown tab")

	// A sheet tab: it opens without reading every cell of the tab.
	do(t, ctx, "add a sheet tab", stripPick("add-tab", "sheet"), chromedp.WaitVisible(chromedp.CSS(`.sheet-grid`)))
	sheetTab := stripOfType(t, e, id, "sheet")[0].TabID
	reads, _ := w.sent(`^GET /api/notes/[^/]+/tabs/` + sheetTab + `(\?|$)`)
	for _, r := range reads {
		if !strings.HasSuffix(r, "?cells=none") {
			t.Errorf("the page read the sheet tab with all its cells: %s", r)
		}
	}
	if len(reads) == 0 {
		t.Error("the page never read the sheet tab")
	}
	do(t, ctx, "type a cell", sheetxType(0, 0, "שלום 👋"), browsertest.Poll(sheetxDOMCell(0, 0)+` === "שלום 👋"`), waitSaved())
	// A boolean shows as a spreadsheet shows it.
	do(t, ctx, "type a boolean", sheetxType(1, 0, "false"), browsertest.Poll(sheetxDOMCell(1, 0)+` === "FALSE"`), waitSaved())
	sheets := sheetxSheets(t, e, id, sheetTab)
	first := strings.SplitN(sheets[0], "=", 2)[0]
	if got := sheetxCells(t, e, id, sheetTab, first, 0, 0, 2, 1); got[0][0] != "שלום 👋" || got[1][0] != false {
		t.Fatalf("the typed cell on the server: %v", got)
	}

	// A script adds and renames sheets meanwhile: they show without
	// opening the tab again.
	v := stripVersion(t, e, id)
	st, res := walkXREST(t, e, token, "POST", "/api/notes/"+id+"/tabs/"+sheetTab+"/sheets", v, map[string]any{"name": "From the agent"})
	if st != http.StatusCreated {
		t.Fatalf("the agent's sheet: %d %v", st, res)
	}
	do(t, ctx, "the agent's sheet shows", waitText(".sheet-tabs", "From the agent"))
	st, res = walkXREST(t, e, token, "PATCH", "/api/notes/"+id+"/tabs/"+sheetTab+"/sheets/"+first, stripVersion(t, e, id), map[string]any{"name": "Renamed by the agent"})
	if st != http.StatusOK {
		t.Fatalf("the agent's rename: %d %v", st, res)
	}
	do(t, ctx, "the agent's rename shows", waitText(".sheet-tabs", "Renamed by the agent"),
		browsertest.Poll(sheetxDOMCell(0, 0)+` === "שלום 👋"`))
	// The outline read: sizes, no cells; a wrong parameter names itself.
	st, res = walkXREST(t, e, token, "GET", "/api/notes/"+id+"/tabs/"+sheetTab+"?cells=none", 0, nil)
	if ss, _ := res["sheets"].([]any); st != 200 || len(ss) != 2 {
		t.Fatalf("GET ?cells=none: %d %v", st, res)
	} else if s0 := ss[0].(map[string]any); s0["rows"] != float64(2) || s0["cols"] != float64(1) || len(s0["cells"].([]any)) != 0 {
		t.Errorf("GET ?cells=none: the first sheet is %v; want rows 2, cols 1, no cells", s0)
	}
	if st, res = walkXREST(t, e, token, "GET", "/api/notes/"+id+"/tabs/"+sheetTab+"?cells=some", 0, nil); st != 400 || res["field"] != "cells" {
		t.Errorf("GET ?cells=some: %d %v; want 400 naming cells", st, res)
	}
	walkXLayouts(t, ctx, "the sheet tab")
	w.check(t, "the sheet tab")

	// A slides tab: add a slide, choose a theme.
	do(t, ctx, "add a slides tab", stripPick("add-tab", "slides"), chromedp.WaitVisible(chromedp.CSS(`.tabpanel`)),
		browsertest.Poll(`!document.querySelector(".tabpanel .loading")`))
	do(t, ctx, "add a slide", browsertest.Click(chromedp.CSS(`.tabpanel .empty button.primary`)), chromedp.WaitVisible(chromedp.ID("sl-field-title")),
		selectAll("#sl-field-title"), insertText("Slide 🚀 שקופית"),
		browsertest.Click(chromedp.CSS(`.tabpanel button[data-add-slide]`)),
		browsertest.Poll(`document.querySelectorAll(".tabpanel [data-slide-id]").length === 2`),
		browsertest.Click(chromedp.CSS(`input[name=sl-theme]:not(:checked)`)), waitSaved())
	slidesTab := stripOfType(t, e, id, "slides")[0].TabID
	deck := slidesWait(t, e, id, slidesTab, "two slides, the second themed", func(ss []note.Slide) bool {
		return len(ss) == 2 && ss[0].Title == "Slide 🚀 שקופית" && ss[1].Theme != ""
	})
	t.Logf("the deck: %v, theme %q", slidesTitles(deck), deck[1].Theme)
	walkXLayouts(t, ctx, "the slides tab")
	// Keyboard: Delete on the strip asks; Escape closes the dialog and
	// deletes nothing.
	do(t, ctx, "Delete asks", chromedp.Focus(chromedp.CSS(`[role=tab][aria-selected=true]`)), chromedp.KeyEvent(kb.Delete),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open]`)), chromedp.KeyEvent(kb.Escape), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if len(stripOfType(t, e, id, "slides")) != 1 {
		t.Fatal("Escape on the delete dialog deleted the tab")
	}
	// Tab moves through the page, and where the focus is shows.
	do(t, ctx, "focus the strip", chromedp.Focus(chromedp.CSS(`[role=tab][aria-selected=true]`)))
	for i := 0; i < 12; i++ {
		do(t, ctx, "Tab", chromedp.KeyEvent(kb.Tab))
		if f := run(t, ctx, "focus", chromedp.Evaluate[string](`(() => { const a = document.activeElement; if (!a || a === document.body) return "the page"; const s = getComputedStyle(a); return s.outlineStyle !== "none" || s.boxShadow !== "none" ? "" : a.tagName.toLowerCase() + (a.id ? "#" + a.id : "") + "." + a.className; })()`)); f != "" {
			t.Errorf("Tab %d: the focus on %s does not show", i+1, f)
		}
	}
	w.check(t, "the slides tab")

	// Rename the sheet tab to a long right-to-left label with emoji.
	// 100 characters, the server's rule, with emoji (two UTF-16 units each).
	label := strings.Repeat("גיליון 📊 ", 12)
	label = string([]rune(label)[:99]) + "📊"
	do(t, ctx, "rename a tab", walkXTab("Sheet"), chromedp.KeyEvent(kb.F2), chromedp.WaitVisible(chromedp.ID("rename-tab-input")),
		selectAll("#rename-tab-input"), insertText(label), chromedp.KeyEvent("\r"), chromedp.WaitNotPresent(chromedp.ID("rename-tab-input")))
	if got := stripOfType(t, e, id, "sheet")[0].Label; got != strings.TrimSpace(label) {
		t.Errorf("the sheet tab's label on the server is %q, want %q", got, strings.TrimSpace(label))
	}
	walkXLayouts(t, ctx, "a long tab label")

	// Sources and Files.
	do(t, ctx, "sources", walkXTab("ources"), chromedp.WaitVisible(chromedp.ID("source-url")),
		chromedp.SendKeys(chromedp.ID("source-url"), "HTTPS://Example.org/a/../walk?b=2&a=1#x"), chromedp.KeyEvent("\r"),
		waitText(".tabpanel", "example.org"))
	walkXLayouts(t, ctx, "the sources tab")
	do(t, ctx, "files", walkXTab("iles"), chromedp.WaitVisible(chromedp.ID("files-limits")))
	walkXLayouts(t, ctx, "the files tab")
	w.check(t, "sources and files")

	// Ctrl+1 goes back to the markdown tab; an agent writes meanwhile and
	// the editor shows it.
	do(t, ctx, "Ctrl+1", chromedp.KeyEvent("1", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.WaitVisible(cmContent))
	agentWrites(t, e, id, func(s string) string { return s + "\n\nAn agent's line." })
	do(t, ctx, "the agent's line shows", browsertest.Poll(`[...document.querySelector(".md-editor").shadowRoot.querySelectorAll(".cm-line")].some(l => l.textContent === "An agent's line.")`))
	w.check(t, "an agent writing")

	// The server cannot be reached while the person types: the page says
	// it is offline and keeps the text, and pushes it once the server is
	// back.
	down := walkXServerDown(t, ctx)
	do(t, ctx, "type while the server is away", typeAtEnd("\nTyped while the server was away."),
		browsertest.Poll(`document.getElementById("save-state")?.innerText === "Offline: kept here"`))
	walkXLayouts(t, ctx, "the markdown tab, offline")
	if got := editorText(t, ctx); !strings.HasSuffix(got, "Typed while the server was away.") {
		t.Errorf("with the server away, the editor holds %q", got)
	}
	down()
	do(t, ctx, "the server is back", waitSaved(), chromedp.WaitNotPresent(chromedp.CSS(".error-box")))
	if text, _ := serverText(t, e, id); !strings.HasSuffix(text, "Typed while the server was away.") {
		t.Errorf("back online, the server has %q", text)
	}
	w.check(t, "the server away and back")

	// History: a version, then restoring the one before the last save.
	_, cur := serverText(t, e, id)
	do(t, ctx, "history", browsertest.Click(chromedp.ID("history-button")), chromedp.WaitVisible(chromedp.ID("history-title")),
		historyOpen(cur-1), chromedp.WaitVisible(chromedp.ID("version-title")),
		browsertest.Poll(`!document.querySelector(".loading")`))
	walkXLayouts(t, ctx, "a version")
	do(t, ctx, "restore", browsertest.Click(chromedp.ID("restore-button")), chromedp.WaitVisible(chromedp.ID("restore-confirm")),
		browsertest.Click(chromedp.ID("restore-confirm")), waitText(".strip-notice", "Restored"), chromedp.WaitVisible(cmContent))
	if text, v := serverText(t, e, id); strings.Contains(text, "Typed while the server was away.") || v != cur+1 {
		t.Errorf("after restoring version %d the server has version %d: %q", cur-1, v, text)
	}
	w.check(t, "restoring a version")

	// The open tab is deleted elsewhere: the page says so and shows
	// another tab.
	do(t, ctx, "the slides tab", walkXTab("Slides"))
	slides := stripOfType(t, e, id, "slides")[0].TabID
	if _, err := e.Server.Service.DeleteTab(bg, me, service.TabWriteArgs{NoteID: id, TabID: slides, Guard: service.Guard{ExpectedVersion: stripVersion(t, e, id)}}); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "the deleted tab is gone", browsertest.Poll(fmt.Sprintf(`!document.querySelector('[role=tab][data-tab-id=%q]') && !!document.querySelector("[role=tab][aria-selected=true]")`, slides)),
		browsertest.Poll(`!document.querySelector(".tabpanel .loading")`),
		waitText(".strip-notice", "You deleted it on another page"))
	w.check(t, "a tab deleted elsewhere")

	// A hundred tabs: the strip scrolls, the page does not.
	for i := len(stripTabs(t, e, id)); i < 100; i++ {
		if _, err := e.Server.Service.CreateNoteTab(bg, me, service.CreateTabArgs{NoteID: id, ExpectedVersion: stripVersion(t, e, id), TabType: "slides", Label: fmt.Sprintf("Deck %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	do(t, ctx, "a hundred tabs", browsertest.Poll(`document.querySelectorAll("[role=tablist][aria-labelledby=note-title] [role=tab]").length === 100`))
	walkXLayouts(t, ctx, "a hundred tabs")
	w.check(t, "a hundred tabs")

	// The Note is deleted in another window: the page says so.
	w.expect(`/api/notes/` + id)
	if _, err := e.Server.Service.DeleteNote(bg, me, service.NoteArgs{NoteID: id, Guard: service.Guard{ExpectedVersion: stripVersion(t, e, id)}}); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "the Note is gone", chromedp.WaitVisible(chromedp.CSS(".live-gone")))
	w.check(t, "the Note deleted elsewhere")
	w.reset()

	// Sign out.
	do(t, ctx, "back to the list", browsertest.Click(chromedp.CSS(".note-head .back")), chromedp.WaitVisible(chromedp.ID("notes-title")))
	w.expect(`^GET /api/me$`)
	do(t, ctx, "sign out", browsertest.Click(chromedp.JSPath(`[...document.querySelectorAll("button")].find(b => /sign out/i.test(b.innerText))`)),
		chromedp.WaitVisible(chromedp.ID("password")))
	w.check(t, "signing out")
}
