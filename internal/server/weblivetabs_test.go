package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// One live connection per browser: every tab of the web app follows its
// Notes, the approvals badge and the inbox through one stream the tabs
// share (a SharedWorker's; where a browser has none, the stream of the tab
// elected leader), so a dozen tabs never use up the six connections
// HTTP/1.1 gives a host. A page that goes into the back/forward cache
// holds no stream and is live again when it comes back; a stream the
// server drops resumes after the last event heard.

// streamCount samples the event streams the server has open for people's
// sessions (Service.OpenStreams; agents' tokens count under the session
// "") every 5 ms while the test runs, keeping the most held at once: a
// count that lasted heldFor. The tests sign in one browser, so that is the
// browser's. A hub that changes what it follows closes its stream before
// it opens the next, but the server sees the close only once it has read
// it from the connection, which on a loaded machine can come after the
// new stream's request: that moment of handing over is not two streams
// held, and a second stream the browser keeps lasts far longer.
type streamCount struct {
	e       *servertest.Env
	mu      sync.Mutex
	most    int
	changes []string // when the count changed, for a failure's message
}

// heldFor is how long a count must last to be counted as held.
const heldFor = 300 * time.Millisecond

// streamSample is a count read at a time.
type streamSample struct {
	at time.Time
	n  int
}

func countStreams(t *testing.T, e *servertest.Env) *streamCount {
	t.Helper()
	c := &streamCount{e: e}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var recent []streamSample // the samples of the last heldFor, oldest first
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				n := c.now()
				if len(recent) > 0 && recent[len(recent)-1].n != n {
					c.mu.Lock()
					if len(c.changes) < 200 {
						c.changes = append(c.changes, fmt.Sprintf("%s %d→%d", now.Format("15:04:05.000"), recent[len(recent)-1].n, n))
					}
					c.mu.Unlock()
				}
				recent = append(recent, streamSample{now, n})
				for len(recent) > 1 && now.Sub(recent[1].at) >= heldFor {
					recent = recent[1:]
				}
				if now.Sub(recent[0].at) < heldFor {
					continue // not yet a window's worth of samples
				}
				held := recent[0].n
				for _, s := range recent {
					held = min(held, s.n)
				}
				c.mu.Lock()
				c.most = max(c.most, held)
				c.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return c
}

// now is how many streams people's sessions hold open.
func (c *streamCount) now() int {
	n := 0
	for s, k := range c.e.Server.Service.OpenStreams().BySession {
		if s != "" {
			n += k
		}
	}
	return n
}

// timeline says when the count changed, for a failure's message.
func (c *streamCount) timeline() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.changes, ", ")
}

// reset forgets the most held so far: what follows is counted anew.
func (c *streamCount) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.most = 0
	c.changes = nil
}

// max is the most streams held open at once so far.
func (c *streamCount) max() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.most
}

// waitStreams waits until the browser holds n streams (and fails the test
// after 20 s).
func (c *streamCount) wait(t *testing.T, what string, n int) {
	t.Helper()
	for range 2000 {
		if c.now() == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: the browser holds %d event streams, want %d", what, c.now(), n)
}

// withoutSharedWorker runs the tab's pages as a browser without
// SharedWorker does (Chrome on Android, some embedded browsers).
func withoutSharedWorker() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: `delete window.SharedWorker`})
		return err
	})
}

// newTab opens another tab in the browser (and browser context, so with
// the same cookies and the same SharedWorker) of ctx's tab, laid out as
// the first.
func newTab(t *testing.T, ctx context.Context, setup ...chromedp.Action[chromedp.Void]) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	steps := append([]chromedp.Action[chromedp.Void]{browsertest.Desktop(), chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	})}, setup...)
	// The tab's first run opens it, and ties it to the context it is given:
	// the tab's own, not one that a step's timeout ends.
	if err := chromedp.Do(tab, steps...); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return tab
}

// pageReady is true once the page of the address it is on has loaded:
// nothing says Loading or Opening, and its content is there.
const pageReady = `(() => {
	if (!document.querySelector("#main") || document.querySelector(".loading, .boot")) return false;
	const p = location.pathname;
	if (p.startsWith("/notes/")) return !!document.querySelector(".md-editor")?.shadowRoot?.querySelector(".cm-content") && document.getElementById("save-state")?.innerText === "Saved";
	if (p === "/notes" || p === "/") return !!document.querySelector("#notes-list li.note");
	if (p === "/rooms") return !!document.querySelector("#rooms-list");
	if (p.startsWith("/rooms/")) return !!document.querySelector("h1");
	if (p === "/approvals") return !!document.getElementById("approvals-title");
	if (p === "/connected") return !!document.querySelector("h1");
	return true;
})()`

// evalPoll waits until expression is true in the tab's page, evaluating it
// every 50 ms in the page's current document: unlike chromedp.Poll, it
// needs neither animation frames nor the execution context chromedp
// learned of, which a page taken back from the back/forward cache does
// not announce again.
func evalPoll(expression string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for {
			ok, err := chromedp.Evaluate[bool]("!!("+expression+")")(ctx, t)
			if err == nil && ok {
				return nil
			}
			select {
			case <-ctx.Done():
				if err != nil {
					return fmt.Errorf("%v (last: %v)", ctx.Err(), err)
				}
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// goTo opens path by its address in ctx's tab and waits for the page.
func goTo(t *testing.T, ctx context.Context, e *servertest.Env, path string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(c, chromedp.Navigate(e.URL+path), evalPoll(pageReady)); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + ": " + document.body.innerText.slice(0, 300)`))
		t.Fatalf("open %s: %v; the page is %s", path, err, got)
	}
}

// editorHas is true once the Note page's editor has a line that is line.
func editorHas(line string) chromedp.Action[chromedp.Void] {
	return evalPoll(fmt.Sprintf(`[...(document.querySelector(".md-editor")?.shadowRoot?.querySelectorAll(".cm-line") ?? [])].some(l => l.textContent === %q)`, line))
}

// markerSays is true once the Note's live marker says who is writing.
func markerSays(who string) chromedp.Action[chromedp.Void] {
	return evalPoll(fmt.Sprintf(`(document.getElementById("live-marker")?.innerText ?? "").includes(%q)`, who+" is writing"))
}

// tabNotes makes n Notes with connected access, named prefix 1…n, and
// answers their IDs.
func tabNotes(t *testing.T, e *servertest.Env, prefix string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		c, err := e.Server.Service.CreateNote(context.Background(), asOwner(e), service.CreateNoteArgs{Title: fmt.Sprintf("%s %d", prefix, i+1), Approved: true})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.NoteID)
	}
	return ids
}

// TestBrowserLiveTabs: twelve tabs of one browser (the Notes list, Notes,
// the approvals inbox, Connected, the Rooms and a Room) all load, one of
// them then goes to ten more pages by address, and every page stays live:
// an agent's write shows in every tab open on its Note, a proposal in
// every tab's badge. The server never has more than two event streams
// open for the browser at once. Then the same with no SharedWorker in the
// browser: the tab elected leader holds the stream for all.
func TestBrowserLiveTabs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		tabs  int
		setup []chromedp.Action[chromedp.Void]
	}{{"shared worker", 12, nil}, {"leader tab", 8, []chromedp.Action[chromedp.Void]{withoutSharedWorker()}}} {
		t.Run(c.name, func(t *testing.T) {
			liveTabs(t, c.tabs, c.setup)
		})
	}
}

func liveTabs(t *testing.T, tabs int, setup []chromedp.Action[chromedp.Void]) {
	e, first := startBrowserEnv(t, server.Config{})
	do(t, first, "set up", setup...)
	streams := countStreams(t, e)
	signInToNotes(t, first, e)
	welcome := notesOf(t, e)["Welcome"].NoteID
	ids := append([]string{welcome}, tabNotes(t, e, "Tab note", 6)...)
	note := func(i int) string { return "/notes/" + ids[i] }
	paths := []string{"/notes", note(0), note(1), note(2), "/approvals", "/rooms", note(3), "/connected", note(4), note(5), note(6), "/rooms/" + e.RoomID}[:tabs]

	ctxs := []context.Context{first}
	for i, p := range paths {
		if i == 0 {
			goTo(t, first, e, p)
			continue
		}
		tab := newTab(t, first, setup...)
		goTo(t, tab, e, p)
		ctxs = append(ctxs, tab)
	}
	t.Logf("%d tabs open: at most %d event streams at once so far", len(ctxs), streams.max())

	// Ten pages more by address in the first tab, ending on a Note that
	// another tab has open too.
	walk := []string{note(1), "/rooms", note(0), "/approvals", note(2), "/notes", note(3), "/connected", "/notes", note(2)}
	for _, p := range walk {
		goTo(t, first, e, p)
	}
	paths[0] = walk[len(walk)-1]

	// Every open Note follows the agent's writes.
	agent := liveAgent(t, e, "Claude")
	written := map[string]string{}
	for i, id := range ids {
		for _, p := range paths {
			if p == "/notes/"+id && written[id] == "" {
				written[id] = fmt.Sprintf("Written live into note %d.", i)
				line := written[id]
				liveWrite(t, e, agent, id, fmt.Sprintf("live-tabs-%d", i), func(s string) string { return s + "\n" + line + "\n" })
			}
		}
	}
	for i, p := range paths {
		id, ok := strings.CutPrefix(p, "/notes/")
		if !ok {
			continue
		}
		do(t, ctxs[i], fmt.Sprintf("tab %d (%s) shows the agent's write", i+1, p), editorHas(written[id]), markerSays("Claude"))
	}
	// Every tab's badge follows the proposals.
	if r := propose(t, agent, e.RoomID, "Tally", map[string]string{"src/App.tsx": "export default function App() { return <p>Tally</p>; }\n"}, "live-tabs-tally"); r.IsError {
		t.Fatalf("propose: %s", r.Text)
	}
	for i := range ctxs {
		do(t, ctxs[i], fmt.Sprintf("tab %d (%s) shows the proposal", i+1, paths[i]), waitText(".nav-badge", "1"))
	}
	if strings.Contains(paths[4], "/approvals") {
		do(t, ctxs[4], "the inbox shows the proposal", browsertest.Poll(`document.querySelectorAll("article.proposal-card").length === 1`))
	}
	t.Logf("%d tabs, %d pages visited: at most %d event streams at once, %d open now", len(ctxs), len(paths)+len(walk), streams.max(), streams.now())
	if n := streams.max(); n > 2 || n == 0 {
		t.Errorf("the browser had up to %d event streams open at once, want 1 or 2 (the count: %s)", n, streams.timeline())
	}
	screenshotTab(t, ctxs[2], "live-tabs")
}

// screenshotTab photographs ctx's page (and checks it renders).
func screenshotTab(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	browsertest.Screenshot(t, ctx, name)
}

// elsewhere is a page of another site on 127.0.0.1 (so the browser's
// back/forward cache keeps the Foundry page left for it).
func elsewhere(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Elsewhere</title><p id="elsewhere">Another site.</p>`)
	}))
	t.Cleanup(s.Close)
	return s.URL + "/"
}

// TestBrowserLiveBackForward: a Note left for another site goes into the
// back/forward cache holding no stream (the browser has none open while
// it is there); back, it is the same page (not loaded again), it reads
// what was written while it was away, and it is live again. Then the same
// with no SharedWorker (the page's own stream).
func TestBrowserLiveBackForward(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup []chromedp.Action[chromedp.Void]
	}{{"shared worker", nil}, {"no shared worker", []chromedp.Action[chromedp.Void]{withoutSharedWorker()}}} {
		t.Run(c.name, func(t *testing.T) {
			e, ctx := startBrowserEnv(t, server.Config{})
			do(t, ctx, "set up", c.setup...)
			streams := countStreams(t, e)
			other := elsewhere(t)
			signInToNotes(t, ctx, e)
			id := notesOf(t, e)["Welcome"].NoteID
			agent := liveAgent(t, e, "Claude")
			goTo(t, ctx, e, "/notes/"+id)
			streams.wait(t, "the Note open", 1)
			// From here on the page is one page (the way from the Notes
			// list to the Note is TestBrowserLiveTabs's to count).
			streams.reset()
			do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.bfProbe = "kept"`))

			var mu sync.Mutex
			var notCached []string
			lctx, stop := context.WithCancel(ctx)
			defer stop()
			if err := chromedp.Listen(lctx, func(ev any) {
				if e, ok := ev.(*cdppage.EventBackForwardCacheNotUsed); ok {
					mu.Lock()
					for _, r := range e.NotRestoredExplanations {
						notCached = append(notCached, string(r.Reason))
					}
					mu.Unlock()
				}
			}); err != nil {
				t.Fatal(err)
			}

			do(t, ctx, "leave for another site", chromedp.Navigate(other), chromedp.WaitVisible(chromedp.ID("elsewhere")))
			streams.wait(t, "the Note in the back/forward cache", 0)
			liveWrite(t, e, agent, id, "bfcache-away", func(s string) string { return s + "\nWritten while the page was away.\n" })

			do(t, ctx, "back", chromedp.Evaluate[chromedp.Void](`history.back()`), evalPoll(`location.pathname.startsWith("/notes/") && document.readyState === "complete"`))
			mu.Lock()
			reasons := strings.Join(notCached, ", ")
			mu.Unlock()
			if kept := run(t, ctx, "the same page", chromedp.Evaluate[string](`window.bfProbe ?? ""`)); kept != "kept" {
				t.Fatalf("back, the Note was loaded again, not taken from the back/forward cache (%s)", reasons)
			}
			do(t, ctx, "what was written meanwhile", editorHas("Written while the page was away."))
			streams.wait(t, "the Note back", 1)
			liveWrite(t, e, agent, id, "bfcache-back", func(s string) string { return s + "\nWritten after the page came back.\n" })
			do(t, ctx, "live again", editorHas("Written after the page came back."), markerSays("Claude"))
			if n := streams.max(); n > 1 {
				t.Errorf("the browser had up to %d event streams open at once for one page (the count: %s)", n, streams.timeline())
			}
			if n := run(t, ctx, "banners", chromedp.Evaluate[int](`document.querySelectorAll(".live-gone, .conflict, .error-box").length`)); n != 0 {
				t.Errorf("back from the cache the page shows %d banners", n)
			}
		})
	}
}

// TestBrowserLiveResume: the server drops every connection of the browser;
// an agent writes before the stream is back; the Note shows the write as
// the agent's (resumed after the last event heard, not read again), and
// goes on following. Then the person signs out in another tab: the stream
// ends and is refused, and the Note says so.
func TestBrowserLiveResume(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	streams := countStreams(t, e)
	signInToNotes(t, ctx, e)
	id := notesOf(t, e)["Welcome"].NoteID
	agent := liveAgent(t, e, "Claude")
	goTo(t, ctx, e, "/notes/"+id)
	streams.wait(t, "the Note open", 1)
	// What is counted is the drop and the resume: the Notes list's stream,
	// which on a loaded machine the server saw end seconds after the
	// Note's began (CI: 5 s), is the navigation's, not this test's.
	streams.reset()
	liveWrite(t, e, agent, id, "resume-1", func(s string) string { return s + "\nBefore the drop.\n" })
	do(t, ctx, "the first write", editorHas("Before the drop."), markerSays("Claude"))
	do(t, ctx, "the marker goes", browsertest.Poll(`!document.getElementById("live-marker").innerText.trim()`, chromedp.WithPollingTimeout(20*time.Second)))

	// The drop, and a write before the stream is back (the page waits a
	// second before it opens the stream again).
	e.HTTP.CloseClientConnections()
	// (The agent's client finds its kept-alive connection closed too, once
	// its transport has read the close.)
	time.Sleep(100 * time.Millisecond)
	liveWrite(t, e, agent, id, "resume-2", func(s string) string { return s + "\nDuring the drop.\n" })
	do(t, ctx, "the write made during the drop", editorHas("During the drop."), markerSays("Claude"))
	streams.wait(t, "the stream back", 1)
	liveWrite(t, e, agent, id, "resume-3", func(s string) string { return s + "\nAfter the drop.\n" })
	do(t, ctx, "the write after", editorHas("After the drop."))
	if text, _ := serverText(t, e, id); editorText(t, ctx) != text {
		t.Errorf("after the drop the editor holds %q, the server %q", editorText(t, ctx), text)
	}

	if n := streams.max(); n > 1 {
		t.Errorf("the browser had up to %d event streams open at once (the count: %s)", n, streams.timeline())
	}

	// Signed out in another tab: the stream ends and is refused; the Note
	// says so (and the page's next call sends it to sign in).
	other := newTab(t, ctx)
	goTo(t, other, e, "/notes")
	do(t, other, "sign out", browsertest.Click(chromedp.JSPath(`[...document.querySelectorAll("button")].find(b => /sign out/i.test(b.innerText))`)), chromedp.WaitVisible(chromedp.ID("password")))
	do(t, ctx, "the Note says so", evalPoll(`location.pathname === "/signin" || (document.querySelector(".live-gone")?.innerText ?? "").includes("ign in again")`))
	streams.wait(t, "signed out", 0)
}

// liveRefuse answers the tab's requests for the live stream with a 503
// while on is true (Chromium's Fetch domain; the stream must be the page's
// own, not a SharedWorker's).
func liveRefuse(t *testing.T, ctx context.Context) (refused func() int, on func(bool)) {
	t.Helper()
	var mu sync.Mutex
	refusing, n := true, 0
	lctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	if err := chromedp.Listen(lctx, func(ev any) {
		e, ok := ev.(*cdpfetch.EventRequestPaused)
		if !ok {
			return
		}
		go func() {
			mu.Lock()
			r := refusing
			if r {
				n++
			}
			mu.Unlock()
			if r {
				_, _ = chromedp.Call(ctx, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: 503,
					ResponseHeaders: []*cdpfetch.HeaderEntry{{Name: "Content-Type", Value: "application/problem+json"}}, Body: []byte(`{"detail":"unavailable"}`)})
			} else {
				_, _ = chromedp.Call(ctx, cdpfetch.ContinueRequest, cdpfetch.ContinueRequestParams{RequestID: e.RequestID})
			}
		}()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdpfetch.Enable, cdpfetch.EnableParams{Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*/api/live?*"}}}); err != nil {
		t.Fatal(err)
	}
	return func() int {
			mu.Lock()
			defer mu.Unlock()
			return n
		}, func(b bool) {
			mu.Lock()
			refusing = b
			mu.Unlock()
		}
}

// TestBrowserLiveStopped: the live stream is refused, again and again: the
// open Note says live updates stopped (the badge polls the count
// meanwhile); once a page opens the stream again and it is answered, the
// Note is live again and reads what it missed.
func TestBrowserLiveStopped(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	do(t, ctx, "no shared worker", withoutSharedWorker())
	signInToNotes(t, ctx, e)
	id := notesOf(t, e)["Welcome"].NoteID
	agent := liveAgent(t, e, "Claude")
	refused, refuse := liveRefuse(t, ctx)
	goTo(t, ctx, e, "/notes/"+id)
	do(t, ctx, "the Note says live updates stopped", evalPoll(`(document.querySelector(".live-gone")?.innerText ?? "").includes("Live updates stopped")`))
	if n := refused(); n < 3 {
		t.Errorf("the page stopped after %d refused streams, want 3", n)
	}
	if text := run(t, ctx, "the line", chromedp.Text(chromedp.CSS(".live-gone"))); !strings.Contains(text, "reload the page") {
		t.Errorf("the line says %q", text)
	}
	accessible(t, ctx, "note-live-stopped")
	screenshotTab(t, ctx, "note-live-stopped")
	// An agent writes meanwhile; then the stream is answered again, and the
	// next page of the browser opens it (here: a second tab).
	liveWrite(t, e, agent, id, "stopped-1", func(s string) string { return s + "\nWritten while live updates were stopped.\n" })
	refuse(false)
	other := newTab(t, ctx, withoutSharedWorker())
	goTo(t, other, e, "/notes")
	do(t, ctx, "live again", evalPoll(`!document.querySelector(".live-gone")`), editorHas("Written while live updates were stopped."))
	liveWrite(t, e, agent, id, "stopped-2", func(s string) string { return s + "\nWritten once live again.\n" })
	do(t, ctx, "following again", editorHas("Written once live again."), markerSays("Claude"))
}
