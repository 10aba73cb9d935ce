package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// The Note page of the web app: the tab strip, and the markdown tab edited
// live: what the person types is pushed as they type, on the text's
// revision; a write an agent made in between is pulled and the person's
// change put after it, without asking; only when the server no longer
// keeps what changed since (a resync) and both changed the same lines is
// the choice left to the person, their text kept as a draft until the
// server has it.

// serverText is the markdown tab of the Note as the service reads it, and
// the Note's version.
func serverText(t *testing.T, e *servertest.Env, id string) (string, int64) {
	t.Helper()
	c, err := e.Server.Service.ReadNoteTab(context.Background(), asOwner(e), service.TabArgs{NoteID: id, TabID: "markdown"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Text == nil {
		t.Fatalf("the markdown tab of %s has no text", id)
	}
	return *c.Text, c.Version
}

// cmContent is the editor's text area, in its shadow root.
var cmContent = chromedp.JSPath(`document.querySelector(".md-editor")?.shadowRoot?.querySelector(".cm-content")`)

// editorText is the text the page's editor holds.
func editorText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return run(t, ctx, "editor text", chromedp.Evaluate[string](`[...document.querySelector(".md-editor").shadowRoot.querySelectorAll(".cm-line")].map(l => l.textContent).join("\n")`))
}

// typeAtEnd puts the cursor at the end of the editor's text and types s.
func typeAtEnd(s string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		browsertest.Click(cmContent),
		chromedp.KeyEvent(kb.End, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		insertText(s),
	)
}

// waitSaved waits until the page says the text is saved.
func waitSaved() chromedp.Action[chromedp.Void] {
	return browsertest.Poll(`document.getElementById("save-state")?.innerText === "Saved"`)
}

// savedOnServer waits until the page says Saved and the server holds the
// editor's text. The page shows a keystroke's change as unsaved on a
// render after the keystroke, so right after one it can still say Saved
// from before it: its word alone does not say the keystroke was saved.
func savedOnServer(t *testing.T, ctx context.Context, e *servertest.Env, id string) {
	t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		wctx, cancel := context.WithTimeout(ctx, stepTimeout)
		err := chromedp.Do(wctx, waitSaved())
		cancel()
		if err != nil {
			st := run(t, ctx, "state", chromedp.Evaluate[string](`(() => { const h = document.querySelector(".md-editor"); return document.getElementById("save-state")?.innerText + " rev " + h?.dataset.rev + " pending " + h?.dataset.pending + " " + (document.querySelector(".error-box")?.innerText ?? ""); })()`))
			t.Fatalf("saved: %v; the page says %s", err, st)
		}
		server, _ := serverText(t, e, id)
		editor := editorText(t, ctx)
		if editor == server {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page says Saved, but the editor holds %q and the server %q", editor, server)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// agentWrites replaces the markdown tab's text through MCP, as an agent
// does, on the Note's current version.
func agentWrites(t *testing.T, e *servertest.Env, id string, edit func(string) string) string {
	t.Helper()
	text, version := serverText(t, e, id)
	next := edit(text)
	agent := e.Client(t, e.WriteToken(t), "")
	r := servertest.MustCall(t, agent, "edit_note_tab", map[string]any{"note_id": id, "tab_id": "markdown", "expected_version": version,
		"operation": "replace_text", "text": next, "idempotency_key": fmt.Sprintf("webnote-%d", version)})
	if r.IsError {
		t.Fatalf("the agent's write: %s", r.Text)
	}
	if got, _ := serverText(t, e, id); got != next {
		t.Fatalf("after the agent's write the server has %q, want %q", got, next)
	}
	return next
}

func TestBrowserNoteMarkdown(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	// The live stream comes from the page itself, for blockURLs to
	// cut (a SharedWorker's requests are not the tab's).
	do(t, ctx, "no shared worker", withoutSharedWorker())
	signInToNotes(t, ctx, e)
	id := notesOf(t, e)["Welcome"].NoteID
	start, _ := serverText(t, e, id)

	// The Note from the list: its title, its tabs, the markdown tab open.
	do(t, ctx, "open the Note", browsertest.Click(row("Welcome", ".note-title")), chromedp.WaitVisible(cmContent), waitSaved())
	if u := location(t, ctx); u.Path != "/notes/"+id {
		t.Fatalf("the Note's link: at %s", u)
	}
	if h := run(t, ctx, "title", chromedp.Text(chromedp.ID("note-title"))); h != "Welcome" {
		t.Errorf("the Note page's heading is %q", h)
	}
	tabs := run(t, ctx, "tabs", chromedp.Evaluate[[]string](`[...document.querySelectorAll("[role=tablist] [role=tab]")].map(b => b.dataset.tabId + "=" + b.innerText.trim())`))
	if len(tabs) < 3 || !strings.HasPrefix(tabs[0], "markdown=") {
		t.Fatalf("the tab strip shows %v, want the markdown tab first, then the others", tabs)
	}
	if got := editorText(t, ctx); got != start {
		t.Fatalf("the editor holds %q, the server %q", got, start)
	}
	if d := run(t, ctx, "styled", chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".md-editor").shadowRoot.querySelector(".cm-editor")).display`)); d != "flex" {
		t.Errorf("the editor's own styles did not apply under the page's policy (display %q)", d)
	}
	if h := run(t, ctx, "preview", chromedp.Evaluate[string](`document.querySelector(".md-preview h1")?.innerText ?? ""`)); h != "Welcome to Foundry" {
		t.Errorf("the preview's heading is %q", h)
	}

	// Arrow keys and Ctrl+digit switch tabs; the URL names the tab.
	do(t, ctx, "arrow right", chromedp.Focus(chromedp.CSS(`[role=tab][aria-selected=true]`)), chromedp.KeyEvent(kb.ArrowRight),
		browsertest.Poll(`document.activeElement?.getAttribute("role") === "tab" && document.activeElement.getAttribute("aria-selected") === "true" && document.activeElement.dataset.tabId !== "markdown"`))
	second := strings.SplitN(tabs[1], "=", 2)[0]
	if u := location(t, ctx); u.Query().Get("tab") != second {
		t.Errorf("after ArrowRight the URL is %s, want ?tab=%s", u, second)
	}
	do(t, ctx, "the second tab's content", browsertest.Poll(`!document.querySelector(".tabpanel .loading")`))
	for _, tb := range tabs {
		tabID, label, _ := strings.Cut(tb, "=")
		if strings.Contains(label, "Intro deck") {
			do(t, ctx, "the slides tab", browsertest.Click(chromedp.CSS(fmt.Sprintf(`[role=tab][data-tab-id=%q]`, tabID))), waitText(".tabpanel", "Safe agent writes"))
		}
		if strings.Contains(label, "Budget") {
			do(t, ctx, "the sheet tab", browsertest.Click(chromedp.CSS(fmt.Sprintf(`[role=tab][data-tab-id=%q]`, tabID))), waitText(".tabpanel", "Hosting"))
			accessible(t, ctx, "note-sheet")
		}
	}
	do(t, ctx, "Ctrl+1", chromedp.KeyEvent("1", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.WaitVisible(cmContent))
	if u := location(t, ctx); u.Query().Get("tab") != "markdown" {
		t.Errorf("after Ctrl+1 the URL is %s", u)
	}

	// Typing saves (debounced); a reload shows what the server has.
	do(t, ctx, "type", typeAtEnd("A line the person typed.\n"), browsertest.Poll(`document.getElementById("save-state")?.innerText !== "Saved"`), waitSaved())
	want := start + "A line the person typed.\n"
	if got, _ := serverText(t, e, id); got != want {
		t.Fatalf("after Saved the server has %q, want %q", got, want)
	}
	do(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(cmContent), waitSaved())
	if got := editorText(t, ctx); got != want {
		t.Fatalf("after a reload the editor holds %q, want %q", got, want)
	}
	if n := run(t, ctx, "offers", chromedp.Evaluate[int](`document.querySelectorAll(".draft-offer").length`)); n != 0 {
		t.Errorf("a saved text is offered back as a draft")
	}
	noOverflow(t, ctx, "note-markdown")
	accessible(t, ctx, "note-markdown")
	browsertest.Screenshot(t, ctx, "note-markdown")

	// With the live stream cut (a flaky network), the page does not learn
	// of the agent's write until it pushes: its push on the old revision
	// is refused, it pulls the agent's change, puts the person's after it
	// and pushes again. Both are kept, and nothing asks the person.
	do(t, ctx, "cut the live stream", blockURLs(liveURLs), chromedp.Reload(), chromedp.WaitVisible(cmContent), waitSaved())
	agentWrites(t, e, id, func(s string) string {
		return strings.Replace(s, "# Welcome to Foundry", "# Welcome to Foundry, with an agent", 1)
	})
	do(t, ctx, "type elsewhere", typeAtEnd("The person's second line.\n"))
	savedOnServer(t, ctx, e, id)
	merged, _ := serverText(t, e, id)
	if !strings.Contains(merged, "# Welcome to Foundry, with an agent") || !strings.Contains(merged, "A line the person typed.") || !strings.Contains(merged, "The person's second line.") {
		t.Fatalf("after the refused push the server has %q: want the agent's and the person's edits", merged)
	}
	if got := editorText(t, ctx); got != merged {
		t.Errorf("after the refused push the editor holds %q, the server %q", got, merged)
	}

	// Both write the same place: both lines are kept, the agent's first
	// (the server took it first).
	agentWrites(t, e, id, func(s string) string { return s + "The agent's closing line.\n" })
	do(t, ctx, "type in the same place", typeAtEnd("The person's closing line.\n"))
	savedOnServer(t, ctx, e, id)
	if got, _ := serverText(t, e, id); !strings.HasSuffix(got, "The agent's closing line.\nThe person's closing line.\n") {
		t.Errorf("after both wrote the end the server has %q", got)
	}
	if n := run(t, ctx, "cards", chromedp.Evaluate[int](`document.querySelectorAll(".conflict, .draft-offer, .error-box").length`)); n != 0 {
		t.Errorf("edits the server could put together put up %d cards", n)
	}

	// Offline (the text's requests fail): the person's lines wait in the
	// page, which says so, and in a draft. Meanwhile more is written than
	// the server keeps of the text's changes: back online, the page gets
	// the whole text (a resync), and the person's lines can only be put on
	// it line by line; both changed the end, so the card shows both side
	// by side. A reload offers the draft back; restored, it meets the
	// conflict again; Edit both keeps both.
	do(t, ctx, "offline", blockURLs(liveURLs, textURLs))
	do(t, ctx, "type offline", typeAtEnd("The person's offline line.\n"), waitText("#save-state", "Offline"))
	agentFloods(t, e, id, "The agent's many edits:", service.TextLogKeep+10)
	// Back online, as the browser tells a page when its network returns.
	// The live stream stays cut (blocking the text alone used to let it
	// back, and a page that heard the agent's edits live had no conflict
	// to show): the page learns of them only by pulling.
	do(t, ctx, "online", blockURLs(liveURLs), chromedp.Evaluate[chromedp.Void](`window.dispatchEvent(new Event("online"))`),
		chromedp.WaitVisible(chromedp.CSS(`.conflict .side-by-side`)))
	if s := run(t, ctx, "state", chromedp.Text(chromedp.ID("save-state"))); s != "Conflict" {
		t.Errorf("the page says %q during a conflict", s)
	}
	if th := run(t, ctx, "theirs", chromedp.Text(chromedp.CSS(`.side-by-side pre.theirs`))); !strings.Contains(th, "The agent's many edits:") {
		t.Errorf("the theirs side shows %q", th)
	}
	if mi := run(t, ctx, "mine", chromedp.Text(chromedp.CSS(`.side-by-side pre.mine`))); !strings.Contains(mi, "The person's offline line.") {
		t.Errorf("the mine side shows %q", mi)
	}
	noOverflow(t, ctx, "note-conflict")
	accessible(t, ctx, "note-conflict")
	browsertest.Screenshot(t, ctx, "note-conflict")
	do(t, ctx, "reload during the conflict", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.draft-offer`)))
	if msg := run(t, ctx, "offer", chromedp.Text(chromedp.CSS(`.draft-offer`))); !strings.Contains(msg, "You have unsaved text from") || !strings.Contains(msg, "The person's offline line.") {
		t.Errorf("after a reload the page offers:\n%s", msg)
	}
	if st := run(t, ctx, "state", chromedp.Text(chromedp.ID("save-state"))); st != "Unsaved changes" {
		t.Errorf("with a draft offered back the page says %q", st)
	}
	accessible(t, ctx, "note-draft")
	browsertest.Screenshot(t, ctx, "note-draft")
	do(t, ctx, "restore", browsertest.Click(chromedp.CSS(`.draft-offer button.primary`)), chromedp.WaitVisible(chromedp.CSS(`.conflict .side-by-side`)))
	do(t, ctx, "edit both", browsertest.Click(chromedp.CSS(`.conflict-actions button:last-child`)), chromedp.WaitNotPresent(chromedp.CSS(`.conflict`)), waitSaved())
	final, _ := serverText(t, e, id)
	for _, s := range []string{"The agent's closing line.", "The person's closing line.", "with an agent", "The person's second line.", "The agent's many edits:", "The person's offline line."} {
		if !strings.Contains(final, s) {
			t.Errorf("after resolving, the server's text lacks %q:\n%s", s, final)
		}
	}
	if got := editorText(t, ctx); got != final {
		t.Errorf("after resolving the editor holds %q, the server %q", got, final)
	}
	if n := run(t, ctx, "draft gone", chromedp.Evaluate[int](`Object.keys(localStorage).filter(k => k.startsWith("foundry.draft:")).length`)); n != 0 {
		t.Errorf("after the save %d drafts are still kept", n)
	}
	do(t, ctx, "the live stream back", blockURLs(), chromedp.Reload(), chromedp.WaitVisible(cmContent), waitSaved())

	// Ctrl+S saves at once; then a phone's width, stacked.
	do(t, ctx, "Ctrl+S", typeAtEnd("Saved with a shortcut."), chromedp.KeyEvent("s", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	savedOnServer(t, ctx, e, id)
	if got, _ := serverText(t, e, id); !strings.HasSuffix(got, "Saved with a shortcut.") {
		t.Errorf("after Ctrl+S the server has %q", got)
	}

	// Leaving the tab before the pause saves what was typed.
	do(t, ctx, "type and leave the tab", typeAtEnd(" Left at once."), chromedp.KeyEvent("2", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		browsertest.Poll(`!document.querySelector(".md-editor")`))
	left := false
	for range 600 {
		if got, _ := serverText(t, e, id); strings.HasSuffix(got, "Saved with a shortcut. Left at once.") {
			left = true
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !left {
		got, _ := serverText(t, e, id)
		t.Fatalf("after leaving the tab the server has %q: the typed text was not saved", got)
	}
	do(t, ctx, "back to the text", chromedp.KeyEvent("1", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.WaitVisible(cmContent), waitSaved())
	if n := run(t, ctx, "offers", chromedp.Evaluate[int](`document.querySelectorAll(".draft-offer").length`)); n != 0 {
		t.Errorf("a text saved on leaving the tab is offered back as a draft")
	}

	do(t, ctx, "phone width", browsertest.Phone(), chromedp.WaitVisible(cmContent))
	if cols := run(t, ctx, "stacked", chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".md-split")).gridTemplateColumns`)); strings.Count(cols, "px") != 1 {
		t.Errorf("on a phone the editor and preview are not stacked: columns %q", cols)
	}
	noOverflow(t, ctx, "note-phone")
	accessible(t, ctx, "note-phone")
	browsertest.Screenshot(t, ctx, "note-phone")
	do(t, ctx, "desktop width", browsertest.Desktop())

	// Dark, when the system asks for it: the editor follows the palette.
	do(t, ctx, "dark", browsertest.ColorScheme("dark"), chromedp.WaitVisible(cmContent))
	if bg := run(t, ctx, "editor background", chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".md-editor").shadowRoot.querySelector(".cm-editor")).backgroundColor`)); bg != "rgb(30, 32, 36)" {
		t.Errorf("in dark mode the editor's background is %s", bg)
	}
	accessible(t, ctx, "note-dark")
	browsertest.Screenshot(t, ctx, "note-dark")
	do(t, ctx, "light", browsertest.ColorScheme("light"))

	// A Note that is not there, and an address that is not an ID.
	for _, path := range []string{"/notes/no-such-note", "/notes/not%20an%20id"} {
		do(t, ctx, "open "+path, chromedp.Navigate(e.URL+path), chromedp.WaitVisible(chromedp.CSS(`.error-box`)))
		if msg := run(t, ctx, "error", chromedp.Text(chromedp.CSS(`.error-box p`))); msg == "" {
			t.Errorf("%s: the error box says nothing", path)
		}
		if n := run(t, ctx, "back link", chromedp.Evaluate[int](`document.querySelectorAll(".page a.back[href='/']").length`)); n != 1 {
			t.Errorf("%s: no way back to the Notes", path)
		}
	}
	accessible(t, ctx, "note-missing")
}

// agentFloods appends line and then n-1 dots to the markdown text, one
// change set each, pushed as a live editor does (100 to a push): more
// updates than the server keeps when n passes service.TextLogKeep.
func agentFloods(t *testing.T, e *servertest.Env, id, line string, n int) {
	t.Helper()
	ctx := context.Background()
	text, _ := serverText(t, e, id)
	c, err := e.Server.Service.ReadNoteTab(ctx, asOwner(e), service.TabArgs{NoteID: id, TabID: "markdown"})
	if err != nil || c.TextRev == nil {
		t.Fatalf("the markdown tab's revision: %v", err)
	}
	rev := *c.TextRev
	size := len(utf16.Encode([]rune(text)))
	var ups []json.RawMessage
	flush := func() {
		r, err := e.Server.Service.PushText(ctx, asOwner(e), service.PushTextArgs{NoteID: id, Rev: rev, ClientID: "agent-flood", Updates: ups})
		if err != nil || !r.Accepted {
			t.Fatalf("the agent's push on rev %d: accepted %v (%v)", rev, r.Accepted, err)
		}
		rev = r.Rev
		ups = nil
	}
	for i := range n {
		ins := "."
		if i == 0 {
			ins = line
		}
		b, _ := json.Marshal([]any{size, []any{0, ins}})
		ups = append(ups, b)
		size += len(utf16.Encode([]rune(ins)))
		if len(ups) == service.MaxPushUpdates {
			flush()
		}
	}
	if len(ups) > 0 {
		flush()
	}
}

// The page's requests blockURLs can fail: the markdown text's pulls and
// pushes, and the live event stream (the page's own: a SharedWorker's
// requests are not the tab's).
const (
	textURLs = "*://*:*/api/notes/*/text*"
	liveURLs = "*://*:*/api/live?*"
)

// blockURLs makes the page's requests matching patterns fail, as a network
// that is down fails them, and lets every other one through. Chromium's
// Network.setBlockedURLs replaces the list, so each call names all that
// stays blocked: blocking the text alone would let the live stream back.
func blockURLs(patterns ...string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		ps := make([]*network.BlockPattern, len(patterns))
		for i, p := range patterns {
			ps[i] = &network.BlockPattern{URLPattern: p, Block: true}
		}
		_, err := cdp.Call(ctx, t, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: ps})
		return err
	})
}
