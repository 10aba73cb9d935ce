package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// The open Note follows what agents write, live: the markdown editor takes
// an agent's text in without a reload and without moving the person's
// cursor, the header names the agent that is writing, a new tab appears in
// the strip, and text the person has not pushed yet is kept and pushed
// along with the agent's, wherever the two wrote.

// liveAgent connects an MCP client with a write token named name, as a
// connected agent is.
func liveAgent(t *testing.T, e *servertest.Env, name string) *mcp.ClientSession {
	t.Helper()
	secret, _, err := auth.CreateToken(context.Background(), e.Server.Store, auth.NewTokenSpec{
		Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: name, Scopes: []string{auth.ScopeRead, auth.ScopeWrite},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e.Client(t, secret, "")
}

// liveWrite replaces the markdown tab's text through MCP on the Note's
// current version, and answers the new text.
func liveWrite(t *testing.T, e *servertest.Env, agent *mcp.ClientSession, id, key string, edit func(string) string) string {
	t.Helper()
	text, version := serverText(t, e, id)
	next := edit(text)
	r := servertest.MustCall(t, agent, "edit_note_tab", map[string]any{"note_id": id, "tab_id": "markdown", "expected_version": version,
		"operation": "replace_text", "text": next, "idempotency_key": key})
	if r.IsError {
		t.Fatalf("the agent's write: %s", r.Text)
	}
	return next
}

// liveCaret is the text around the editor's cursor as the page's DOM
// selection has it in the editor's shadow root: up to 8 characters of its
// line on each side of "|" ("" when the selection is not a cursor in a
// line).
const liveCaret = `(() => {
	const sr = document.querySelector(".md-editor")?.shadowRoot;
	const sel = sr?.getSelection ? sr.getSelection() : document.getSelection();
	if (!sel || sel.rangeCount === 0 || !sel.isCollapsed) return "";
	const line = (sel.anchorNode.nodeType === 1 ? sel.anchorNode : sel.anchorNode.parentElement)?.closest(".cm-line");
	if (!line) return "";
	const r = document.createRange();
	r.setStart(line, 0);
	r.setEnd(sel.anchorNode, sel.anchorOffset);
	const col = r.toString().length;
	const s = line.textContent;
	return s.slice(Math.max(0, col - 8), col) + "|" + s.slice(col, col + 8);
})()`

// liveFocused says whether the editor's text area has the focus.
const liveFocused = `document.activeElement === document.querySelector(".md-editor") && !!document.querySelector(".md-editor").shadowRoot.activeElement?.classList.contains("cm-content")`

func TestBrowserNoteLive(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	signInToNotes(t, ctx, e)
	id := notesOf(t, e)["Welcome"].NoteID
	do(t, ctx, "open the Note", browsertest.Click(row("Welcome", ".note-title")), chromedp.WaitVisible(cmContent), waitSaved(),
		browsertest.Poll(`document.querySelector("#live-marker") && !document.querySelector("#live-marker").innerText.trim()`))
	// A mark on the page's window: a reload would lose it.
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.liveProbe = "still here"`))
	agent := liveAgent(t, e, "Claude")

	// The agent writes the whole text: the editor shows it, unreloaded.
	plan := "# Plan\n\nAlpha paragraph one.\n\nBravo paragraph two, with the cursor here.\n\nCharlie paragraph three.\n"
	liveWrite(t, e, agent, id, "live-0001", func(string) string { return plan })
	do(t, ctx, "the agent's text, live", browsertest.Poll(`[...document.querySelector(".md-editor").shadowRoot.querySelectorAll(".cm-line")].some(l => l.textContent === "Charlie paragraph three.")`))
	if got := editorText(t, ctx); got != plan {
		t.Fatalf("after the agent's write the editor holds %q, want %q", got, plan)
	}
	if s := run(t, ctx, "state", chromedp.Text(chromedp.ID("save-state"))); s != "Saved" {
		t.Errorf("after taking in the agent's text the page says %q, want Saved", s)
	}

	// The person puts the cursor in the middle of the second paragraph.
	do(t, ctx, "place the cursor", browsertest.Click(cmContent), chromedp.KeyEvent(kb.Home, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	for range 4 {
		do(t, ctx, "down", chromedp.KeyEvent(kb.ArrowDown))
	}
	do(t, ctx, "line start", chromedp.KeyEvent(kb.Home))
	for range len("Bravo paragraph two, ") {
		do(t, ctx, "right", chromedp.KeyEvent(kb.ArrowRight))
	}
	const at = "ph two, |with the"
	do(t, ctx, "the cursor", browsertest.Poll(liveCaret+` === "`+at+`"`))

	// The agent writes far before the cursor: two lines above it change,
	// one more comes in. The editor takes it in; the cursor stays beside
	// the same characters, the focus stays, nothing is unsaved.
	revised := liveWrite(t, e, agent, id, "live-0002", func(s string) string {
		return strings.Replace(s, "# Plan\n\nAlpha paragraph one.\n", "# Plan, revised\n\nAn agent added this first.\n\nAlpha paragraph one, longer now.\n", 1)
	})
	do(t, ctx, "the agent's edit, live", browsertest.Poll(`[...document.querySelector(".md-editor").shadowRoot.querySelectorAll(".cm-line")].some(l => l.textContent === "An agent added this first.")`))
	if got := editorText(t, ctx); got != revised {
		t.Fatalf("after the agent's edit the editor holds %q, want %q", got, revised)
	}
	if got := run(t, ctx, "the cursor after", chromedp.Evaluate[string](liveCaret)); got != at {
		t.Errorf("after the agent's edit the cursor is at %q, want %q", got, at)
	}
	if !run(t, ctx, "focus", chromedp.Evaluate[bool](liveFocused)) {
		t.Errorf("after the agent's edit the editor lost the focus")
	}
	if p := run(t, ctx, "no reload", chromedp.Evaluate[string](`window.liveProbe ?? ""`)); p != "still here" {
		t.Fatalf("the page was reloaded to show the agent's edit")
	}
	if s := run(t, ctx, "state", chromedp.Text(chromedp.ID("save-state"))); s != "Saved" {
		t.Errorf("after the agent's edit the page says %q, want Saved", s)
	}
	if n := run(t, ctx, "banners", chromedp.Evaluate[int](`document.querySelectorAll(".conflict, .draft-offer, .error-box").length`)); n != 0 {
		t.Errorf("an agent's edit with nothing unsaved put up %d banners", n)
	}
	// The preview follows too.
	do(t, ctx, "the preview", waitText(".md-preview", "An agent added this first."))

	// The header names the agent while it writes.
	do(t, ctx, "the marker", waitText("#live-marker", "Claude is writing"))
	if role := run(t, ctx, "marker role", chromedp.Evaluate[string](`document.getElementById("live-marker").getAttribute("role") + " " + document.getElementById("live-marker").getAttribute("aria-live")`)); role != "status polite" {
		t.Errorf("the marker is %q to a screen reader, want a polite status", role)
	}
	noOverflow(t, ctx, "note-live")
	accessible(t, ctx, "note-live")
	browsertest.Screenshot(t, ctx, "note-live")
	// The header does not move when the marker comes and goes.
	withMarker := run(t, ctx, "the header with the marker", chromedp.Evaluate[string](`(() => { const r = document.querySelector(".note-head").getBoundingClientRect(); const v = document.querySelector(".note-status .version").getBoundingClientRect(); return r.height + " " + v.left + " " + v.top })()`))
	do(t, ctx, "the marker goes", browsertest.Poll(`!document.getElementById("live-marker").innerText.trim()`, chromedp.WithPollingTimeout(20*time.Second)))
	without := run(t, ctx, "the header without", chromedp.Evaluate[string](`(() => { const r = document.querySelector(".note-head").getBoundingClientRect(); const v = document.querySelector(".note-status .version").getBoundingClientRect(); return r.height + " " + v.left + " " + v.top })()`))
	if withMarker != without {
		t.Errorf("the header moves with the marker: %s with it, %s without", withMarker, without)
	}

	// Ctrl+Z undoes the person's own typing only, never the agent's write.
	do(t, ctx, "undo", chromedp.Focus(cmContent), chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if got := editorText(t, ctx); got != revised {
		t.Errorf("Ctrl+Z with nothing typed changed the text to %q: the agent's write was in the person's undo history", got)
	}

	// An agent adds a tab: the strip shows it, live.
	_, v := serverText(t, e, id)
	r := servertest.MustCall(t, agent, "create_note_tab", map[string]any{"note_id": id, "expected_version": v, "idempotency_key": "live-tab-0001",
		"tab_type": "slides", "label": "Live deck"})
	if r.IsError {
		t.Fatalf("create_note_tab: %s", r.Text)
	}
	do(t, ctx, "the new tab", browsertest.Poll(fmt.Sprintf(`[...document.querySelectorAll("[role=tab]")].some(b => b.dataset.tabId === %q && b.innerText.includes("Live deck"))`, r.Str("tab_id"))))
	if !run(t, ctx, "still in the editor", chromedp.Evaluate[bool](`document.querySelector("[role=tab][aria-selected=true]")?.dataset.tabId === "markdown" && !!document.querySelector(".md-editor")`)) {
		t.Errorf("a new tab by an agent moved the person off the markdown tab")
	}

	// The person types, unsaved, while the agent writes another paragraph:
	// the agent's paragraph comes into the editor around the person's
	// text, and after the save the server has both.
	do(t, ctx, "type at the cursor", browsertest.Click(cmContent))
	// The click moved the cursor: put it back after "with the ".
	do(t, ctx, "place again", chromedp.KeyEvent(kb.Home, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	for range 6 {
		do(t, ctx, "down", chromedp.KeyEvent(kb.ArrowDown))
	}
	do(t, ctx, "line start", chromedp.KeyEvent(kb.Home))
	for range len("Bravo paragraph two, ") {
		do(t, ctx, "right", chromedp.KeyEvent(kb.ArrowRight))
	}
	do(t, ctx, "the cursor", browsertest.Poll(liveCaret+` === "`+at+`"`))
	do(t, ctx, "type", insertText("(typed) "))
	liveWrite(t, e, agent, id, "live-0003", func(s string) string { return s + "\nDelta, the agent's new paragraph.\n" })
	do(t, ctx, "the agent's paragraph beside the person's text",
		browsertest.Poll(`[...document.querySelector(".md-editor").shadowRoot.querySelectorAll(".cm-line")].some(l => l.textContent === "Delta, the agent's new paragraph.")`))
	if got := editorText(t, ctx); !strings.Contains(got, "two, (typed) with the cursor") {
		t.Errorf("the person's unsaved text was lost when the agent's paragraph came in: %q", got)
	}
	if got := run(t, ctx, "the cursor after the merge", chromedp.Evaluate[string](liveCaret)); got != "(typed) |with the" {
		t.Errorf("after the merge the cursor is at %q, want right after what the person typed", got)
	}
	// The person's own undo history survived the agent's paragraph: Ctrl+Z
	// takes back what they typed (only that), Ctrl+Y puts it back.
	do(t, ctx, "undo the typing", chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if got := editorText(t, ctx); strings.Contains(got, "(typed)") || !strings.Contains(got, "Delta, the agent's new paragraph.") {
		t.Errorf("after Ctrl+Z the editor holds %q: want the person's typing undone, the agent's paragraph kept", got)
	}
	do(t, ctx, "redo the typing", chromedp.KeyEvent("y", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if got := run(t, ctx, "the cursor after redo", chromedp.Evaluate[string](liveCaret)); got != "(typed) |with the" {
		t.Errorf("after Ctrl+Y the cursor is at %q", got)
	}
	savedOnServer(t, ctx, e, id)
	final, _ := serverText(t, e, id)
	for _, s := range []string{"Bravo paragraph two, (typed) with the cursor here.", "Delta, the agent's new paragraph.", "An agent added this first."} {
		if !strings.Contains(final, s) {
			t.Errorf("after the save the server's text lacks %q:\n%s", s, final)
		}
	}
	if got := editorText(t, ctx); got != final {
		t.Errorf("after the save the editor holds %q, the server %q", got, final)
	}
	if n := run(t, ctx, "banners", chromedp.Evaluate[int](`document.querySelectorAll(".conflict, .draft-offer, .error-box").length`)); n != 0 {
		t.Errorf("a write on other lines than the person's put up %d banners", n)
	}

	// The page's own save comes back on the stream: nothing reloads, the
	// marker stays quiet.
	do(t, ctx, "the marker goes", browsertest.Poll(`!document.getElementById("live-marker").innerText.trim()`, chromedp.WithPollingTimeout(20*time.Second)))
	do(t, ctx, "own save", insertText("!"))
	savedOnServer(t, ctx, e, id)
	time.Sleep(300 * time.Millisecond) // the save's event reaches the page
	if m := run(t, ctx, "marker", chromedp.Evaluate[string](`document.getElementById("live-marker").innerText.trim()`)); m != "" {
		t.Errorf("the person's own save shows the marker %q", m)
	}
	if got := run(t, ctx, "the cursor after the own save", chromedp.Evaluate[string](liveCaret)); got != "typed) !|with the" {
		t.Errorf("after the page's own save the cursor is at %q", got)
	}

	// Both write the same place, live: the agent's line and the person's
	// words are both kept, with no card to choose from.
	do(t, ctx, "type at the end", typeAtEnd("The person's last words."))
	liveWrite(t, e, agent, id, "live-0007", func(s string) string { return s + "The agent's last words.\n" })
	do(t, ctx, "the agent's words beside the person's", browsertest.Poll(`document.querySelector(".md-preview").innerText.includes("The agent's last words.")`))
	savedOnServer(t, ctx, e, id)
	both, _ := serverText(t, e, id)
	for _, s := range []string{"The person's last words.", "The agent's last words.", "(typed) !with the cursor"} {
		if !strings.Contains(both, s) {
			t.Errorf("after both wrote the same place the server's text lacks %q:\n%s", s, both)
		}
	}
	if n := run(t, ctx, "banners", chromedp.Evaluate[int](`document.querySelectorAll(".conflict, .draft-offer, .error-box").length`)); n != 0 {
		t.Errorf("both writing the same place put up %d banners", n)
	}

	// A phone's width: the header with the marker fits.
	do(t, ctx, "phone", browsertest.Phone(), chromedp.WaitVisible(cmContent))
	liveWrite(t, e, agent, id, "live-0004", func(s string) string { return "Echo.\n" + s })
	do(t, ctx, "the marker on a phone", waitText("#live-marker", "Claude is writing"))
	noOverflow(t, ctx, "note-live-phone")
	accessible(t, ctx, "note-live-phone")
	browsertest.Screenshot(t, ctx, "note-live-phone")
	do(t, ctx, "desktop", browsertest.Desktop())

	// A long text, read far down: an agent's lines above what is in view
	// do not move what the person is looking at.
	var long strings.Builder
	for i := range 120 {
		fmt.Fprintf(&long, "Line %03d of a long text.\n", i)
	}
	liveWrite(t, e, agent, id, "live-0005", func(string) string { return long.String() })
	do(t, ctx, "the long text", waitText(".md-preview", "Line 119 of a long text."))
	// The editor draws only the lines near the window: scroll down, then
	// take the first line drawn in view.
	do(t, ctx, "scroll down", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.querySelector(".md-editor").getBoundingClientRect().top + window.scrollY + 1500)`))
	time.Sleep(200 * time.Millisecond) // the editor draws the lines now in view
	seen := run(t, ctx, "a line in view", chromedp.Evaluate[string](`[...document.querySelector(".md-editor").shadowRoot.querySelectorAll(".cm-line")].find(l => l.getBoundingClientRect().top > 60)?.textContent ?? ""`))
	if !strings.HasPrefix(seen, "Line ") || seen < "Line 020" {
		t.Fatalf("after scrolling down the first line in view is %q", seen)
	}
	lineTop := fmt.Sprintf(`[...document.querySelector(".md-editor").shadowRoot.querySelectorAll(".cm-line")].find(l => l.textContent === %q)?.getBoundingClientRect().top ?? -1`, seen)
	before := run(t, ctx, "its place", chromedp.Evaluate[float64](lineTop))
	liveWrite(t, e, agent, id, "live-0006", func(s string) string { return "Five lines on top.\n\nTwo.\n\nThree.\n" + s })
	do(t, ctx, "the lines on top", waitText(".md-preview", "Five lines on top."))
	time.Sleep(200 * time.Millisecond) // the editor measures its layout again
	after := run(t, ctx, "its place after", chromedp.Evaluate[float64](lineTop))
	t.Logf("%q was %.1f px from the top of the window before the agent's lines above it, %.1f after", seen, before, after)
	if d := after - before; d > 2 || d < -2 {
		t.Errorf("the agent's lines above moved the text in view by %.1f px", d)
	}

	// The Note is deleted while open: the page says so.
	liveWrite(t, e, agent, id, "live-0008", func(string) string { return "# Plan\n\nShort again.\n" })
	do(t, ctx, "short again", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`), waitText(".md-preview", "Short again."))
	_, v = serverText(t, e, id)
	if _, err := e.Server.Service.DeleteNote(context.Background(), asOwner(e), service.NoteArgs{NoteID: id, Guard: service.Guard{ExpectedVersion: v}}); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "the Note deleted", waitText(".live-gone", "deleted this Note"))
	accessible(t, ctx, "note-live-deleted")
	browsertest.Screenshot(t, ctx, "note-live-deleted")
}

// TestBrowserSavedMeansOnTheServer: the page says Saved only when the
// server holds the editor's text. The person types and it is saved, undoes
// it, and while the push of the undo is under way (its answer held back
// here) redoes it: the editor holds the saved text again, but the push
// under way is about to take it away on the server, so the page must not
// say Saved until its next push has put the text back.
func TestBrowserSavedMeansOnTheServer(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	signInToNotes(t, ctx, e)
	id := notesOf(t, e)["Welcome"].NoteID
	do(t, ctx, "open the Note", browsertest.Click(row("Welcome", ".note-title")), chromedp.WaitVisible(cmContent), waitSaved())
	do(t, ctx, "type", typeAtEnd("Typed, then undone and redone."), browsertest.Poll(`document.getElementById("save-state")?.innerText !== "Saved"`), waitSaved())
	if text, _ := serverText(t, e, id); !strings.HasSuffix(text, "Typed, then undone and redone.") {
		t.Fatalf("the typed text was not saved: %q", text)
	}
	// The answers to the page's saves wait until the test lets them go.
	do(t, ctx, "hold the answers", chromedp.Evaluate[chromedp.Void](`(() => { const f = window.fetch.bind(window); window.heldSaves = [];
		window.fetch = async (u, o) => { const r = await f(u, o); if ((o?.method ?? u?.method) === "POST" && /\/text$/.test(new URL(u?.url ?? u, location.href).pathname)) await new Promise((go) => window.heldSaves.push(go)); return r; }; })()`))
	do(t, ctx, "undo, and its save under way", chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		browsertest.Poll(`window.heldSaves.length === 1 && document.getElementById("save-state")?.innerText === "Saving…"`))
	do(t, ctx, "redo", chromedp.KeyEvent("y", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if got := editorText(t, ctx); !strings.HasSuffix(got, "Typed, then undone and redone.") {
		t.Fatalf("Ctrl+Y did not put the text back: %q", got)
	}
	if s := run(t, ctx, "state", chromedp.Text(chromedp.ID("save-state"))); s == "Saved" {
		t.Errorf("with the save of the undone text under way the page says Saved")
	}
	do(t, ctx, "let the answers go", chromedp.Evaluate[chromedp.Void](`(() => { const held = window.heldSaves; window.heldSaves = { push: (go) => go() }; held.forEach((go) => go()); })()`), waitSaved())
	text, _ := serverText(t, e, id)
	if !strings.HasSuffix(text, "Typed, then undone and redone.") {
		t.Errorf("the page says Saved, but the server's text lacks the redone typing: %q", text)
	}
	if got := editorText(t, ctx); got != text {
		t.Errorf("the page says Saved with the editor holding %q, the server %q", got, text)
	}
}
