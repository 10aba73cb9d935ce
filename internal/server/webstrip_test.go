package server_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"foundry/internal/auth"
	"foundry/internal/browsertest"
	"foundry/internal/note"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// The Note page's tab strip (add, rename, drag, delete), its Sources tab,
// and its History (view a version, restore it), driven as a person does
// in a real browser and checked in the service.

// stripTabs is the Note's tab strip as the service has it: tab_id=label
// by type, in order.
func stripTabs(t *testing.T, e *servertest.Env, id string) []note.TabRef {
	t.Helper()
	tabs, err := e.Server.Service.ListNoteTabs(context.Background(), asOwner(e), id)
	if err != nil {
		t.Fatal(err)
	}
	return tabs.Tabs
}

func stripOfType(t *testing.T, e *servertest.Env, id, typ string) []note.TabRef {
	t.Helper()
	var out []note.TabRef
	for _, r := range stripTabs(t, e, id) {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// stripVersion is the Note's version.
func stripVersion(t *testing.T, e *servertest.Env, id string) int64 {
	t.Helper()
	_, v := serverText(t, e, id)
	return v
}

// stripTab is the selector of the strip's tab tabID.
func stripTab(tabID string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`.strip-bar [role=tab][data-tab-id=%q]`, tabID))
}

// stripPick opens the menu id (add-tab or tab-actions) and picks item.
func stripPick(id, item string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		browsertest.Click(chromedp.ID(id+"-button")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#%s-menu [data-item=%q]`, id, item))),
		browsertest.Click(chromedp.CSS(fmt.Sprintf(`#%s-menu [data-item=%q]`, id, item))),
	)
}

// stripDrag drags the tab from onto the tab to, as HTML5 drag and drop
// does: dragstart, dragenter/dragover, drop, dragend, a task apart each.
func stripDrag(from, to string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(async () => {
		const tab = id => document.querySelector('.strip-bar [role=tab][data-tab-id="' + id + '"]');
		const src = tab(%q), dst = tab(%q);
		const dt = new DataTransfer();
		const fire = (el, type) => el.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: dt}));
		const tick = () => new Promise(r => setTimeout(r, 30));
		fire(src, "dragstart"); await tick();
		fire(dst, "dragenter"); fire(dst, "dragover"); await tick();
		fire(dst, "drop"); await tick();
		fire(src, "dragend");
	})()`, from, to), chromedp.EvalAwaitPromise)
}

// stripAgentWrite replaces the markdown tab's text through MCP as a token
// named name does.
func stripAgentWrite(t *testing.T, e *servertest.Env, id, name, text string) {
	t.Helper()
	secret, _, err := auth.CreateToken(context.Background(), e.Server.Store, auth.NewTokenSpec{
		Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: name, Scopes: []string{auth.ScopeRead, auth.ScopeWrite},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, version := serverText(t, e, id)
	r := servertest.MustCall(t, e.Client(t, secret, ""), "edit_note_tab", map[string]any{"note_id": id, "tab_id": "markdown", "expected_version": version,
		"operation": "replace_text", "text": text, "idempotency_key": fmt.Sprintf("webstrip-%d", version)})
	if r.IsError {
		t.Fatalf("the agent's write: %s", r.Text)
	}
}

func TestBrowserNoteStrip(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	signInToNotes(t, ctx, e)

	// A new Note, its first text saved: the version restored at the end.
	do(t, ctx, "create a Note",
		newNote("Launch plan"),
		browsertest.Click(row("Launch plan", ".note-title")),
		chromedp.WaitVisible(cmContent), waitSaved(),
	)
	id := notesOf(t, e)["Launch plan"].NoteID
	do(t, ctx, "type the first text", typeAtEnd("# Launch\n\nThe first plan.\n"), browsertest.Poll(`document.getElementById("save-state")?.innerText !== "Saved"`), waitSaved())
	oldText, oldVersion := serverText(t, e, id)
	if !strings.Contains(oldText, "The first plan.") {
		t.Fatalf("the server has %q after the first save", oldText)
	}

	// Add a Slides and a Sheet tab from "+": each opens.
	do(t, ctx, "add a Slides tab", stripPick("add-tab", "slides"), browsertest.Poll(`document.querySelector(".strip-bar [role=tab][aria-selected=true]")?.dataset.tabId.startsWith("slides-")`))
	do(t, ctx, "add a Sheet tab", stripPick("add-tab", "sheet"), browsertest.Poll(`document.querySelector(".strip-bar [role=tab][aria-selected=true]")?.dataset.tabId.startsWith("sheet-")`))
	slides, sheets := stripOfType(t, e, id, "slides"), stripOfType(t, e, id, "sheet")
	if len(slides) != 1 || len(sheets) != 1 {
		t.Fatalf("after adding a Slides and a Sheet tab the service has %v", stripTabs(t, e, id))
	}
	deck, grid := slides[0].TabID, sheets[0].TabID
	if u := location(t, ctx); u.Query().Get("tab") != grid {
		t.Errorf("the new Sheet tab is not the one open: at %s", u)
	}

	// Rename both to the same label: by double-click, and by F2. An empty
	// label is refused on the page, and Escape keeps the old one.
	do(t, ctx, "rename the Slides tab",
		browsertest.DoubleClick(stripTab(deck)),
		chromedp.WaitVisible(chromedp.ID("rename-tab-input")),
		selectAll("#rename-tab-input"),
		chromedp.KeyEvent("  Plan  \r"),
		chromedp.WaitNotPresent(chromedp.ID("rename-tab-input")),
		waitText(fmt.Sprintf(`.strip-bar [data-tab-id=%q]`, deck), "Plan"),
	)
	do(t, ctx, "an empty label",
		browsertest.Click(stripTab(grid)),
		chromedp.KeyEvent(kb.F2),
		chromedp.WaitVisible(chromedp.ID("rename-tab-input")),
		selectAll("#rename-tab-input"),
		chromedp.KeyEvent("   \r"),
		chromedp.WaitVisible(chromedp.CSS(`.tab-rename-error`)),
	)
	if msg := run(t, ctx, "empty label", chromedp.Text(chromedp.CSS(`.tab-rename-error`))); !strings.Contains(msg, "needs a name") {
		t.Errorf("an empty label: the page says %q", msg)
	}
	do(t, ctx, "Escape", chromedp.KeyEvent(kb.Escape), chromedp.WaitNotPresent(chromedp.ID("rename-tab-input")))
	if l := stripOfType(t, e, id, "sheet")[0].Label; l != "Sheet" {
		t.Fatalf("Escape after an empty label: the sheet tab is %q on the server", l)
	}
	do(t, ctx, "rename the Sheet tab to the same label",
		chromedp.Focus(stripTab(grid)),
		chromedp.KeyEvent(kb.F2),
		chromedp.WaitVisible(chromedp.ID("rename-tab-input")),
		selectAll("#rename-tab-input"),
		chromedp.KeyEvent("Plan\r"),
		chromedp.WaitNotPresent(chromedp.ID("rename-tab-input")),
		waitText(fmt.Sprintf(`.strip-bar [data-tab-id=%q]`, grid), "Plan"),
	)
	if s, g := stripOfType(t, e, id, "slides")[0].Label, stripOfType(t, e, id, "sheet")[0].Label; s != "Plan" || g != "Plan" {
		t.Fatalf("after renaming both to \"  Plan  \" and \"Plan\" the server has %q and %q", s, g)
	}

	// Reorder: drag the Sheet tab onto the first tab; then Alt+Shift+→
	// moves it one place right. The server's order follows.
	order := func() []string {
		var ids []string
		for _, r := range stripTabs(t, e, id) {
			ids = append(ids, r.TabID)
		}
		return ids
	}
	do(t, ctx, "drag the Sheet tab to the front", stripDrag(grid, "markdown"),
		browsertest.Poll(fmt.Sprintf(`document.querySelector(".strip-bar [role=tab]")?.dataset.tabId === %q && document.querySelector(".strip-bar").getAttribute("aria-busy") === "false"`, grid)))
	if o := order(); o[0] != grid || o[1] != "markdown" {
		t.Fatalf("after dragging the Sheet tab to the front the server's order is %v", o)
	}
	do(t, ctx, "Alt+Shift+Right", chromedp.Focus(stripTab(grid)), chromedp.KeyEvent(kb.ArrowRight, chromedp.KeyModifiers(chromedp.ModifierAlt|chromedp.ModifierShift)),
		browsertest.Poll(fmt.Sprintf(`document.querySelectorAll(".strip-bar [role=tab]")[1]?.dataset.tabId === %q && document.querySelector(".strip-bar").getAttribute("aria-busy") === "false"`, grid)))
	if o := order(); o[0] != "markdown" || o[1] != grid {
		t.Fatalf("after Alt+Shift+Right the server's order is %v", o)
	}
	shown := run(t, ctx, "strip", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".strip-bar [role=tab]")].map(b => b.dataset.tabId)`))
	if !slices.Equal(shown, order()) {
		t.Errorf("the page shows the strip %v, the server %v", shown, order())
	}
	do(t, ctx, "open the add menu", browsertest.Click(chromedp.ID("add-tab-button")), chromedp.WaitVisible(chromedp.ID("add-tab-menu")))
	noOverflow(t, ctx, "note-strip")
	accessible(t, ctx, "note-strip")
	browsertest.Screenshot(t, ctx, "note-strip")
	do(t, ctx, "close the menu", chromedp.KeyEvent(kb.Escape), chromedp.WaitNotPresent(chromedp.ID("add-tab-menu")))
	do(t, ctx, "phone width", browsertest.Phone(), chromedp.Sleep(200))
	noOverflow(t, ctx, "note-strip at 390 px")
	if sw := run(t, ctx, "strip scrolls", chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".strip-bar .tabstrip")).overflowX`)); sw != "auto" {
		t.Errorf("the tab strip's overflow-x is %q at phone width; want it to scroll", sw)
	}
	accessible(t, ctx, "note-strip-phone")
	browsertest.Screenshot(t, ctx, "note-strip-phone")
	do(t, ctx, "desktop width", browsertest.Desktop(), chromedp.Sleep(200))

	// Delete: a fixed tab's Delete is disabled; the Slides tab goes after
	// a confirmation (Cancel first keeps it).
	do(t, ctx, "the markdown tab's actions", browsertest.Click(stripTab("markdown")), browsertest.Click(chromedp.ID("tab-actions-button")), chromedp.WaitVisible(chromedp.ID("tab-actions-menu")))
	if dis := run(t, ctx, "fixed", chromedp.Evaluate[bool](`document.querySelector('#tab-actions-menu [data-item=delete]').disabled`)); !dis {
		t.Errorf("the markdown tab's Delete is offered")
	}
	do(t, ctx, "close", chromedp.KeyEvent(kb.Escape), chromedp.WaitNotPresent(chromedp.ID("tab-actions-menu")))
	do(t, ctx, "delete, then cancel", browsertest.Click(stripTab(deck)), stripPick("tab-actions", "delete"), chromedp.WaitVisible(chromedp.CSS(`dialog[open] #delete-tab-confirm`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.secondary`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if len(stripOfType(t, e, id, "slides")) != 1 {
		t.Fatal("Cancel deleted the tab")
	}
	do(t, ctx, "delete the Slides tab", stripPick("tab-actions", "delete"), chromedp.WaitVisible(chromedp.CSS(`dialog[open] #delete-tab-confirm`)),
		browsertest.Click(chromedp.CSS(`dialog[open] #delete-tab-confirm`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)),
		chromedp.WaitNotPresent(stripTab(deck)))
	if n := len(stripOfType(t, e, id, "slides")); n != 0 || len(stripTabs(t, e, id)) != 4 {
		t.Fatalf("after deleting the Slides tab the service has %v", stripTabs(t, e, id))
	}

	// Sources: add a page; the same page in another spelling is refused.
	do(t, ctx, "the Sources tab", browsertest.Click(stripTab("sources")), chromedp.WaitVisible(chromedp.ID("source-url")))
	if msg := run(t, ctx, "empty", chromedp.Text(chromedp.CSS(`.sources .empty`))); !strings.Contains(msg, "No sources attached yet") {
		t.Errorf("the empty Sources tab says %q", msg)
	}
	do(t, ctx, "add a source",
		chromedp.SendKeys(chromedp.ID("source-url"), "https://Example.com/a/"),
		chromedp.SendKeys(chromedp.ID("source-title"), "  Launch checklist "),
		browsertest.Click(chromedp.CSS(`.source-submit`)),
		waitText(".source-list", "Launch checklist"),
	)
	do(t, ctx, "the same page again",
		chromedp.SendKeys(chromedp.ID("source-url"), "https://example.com/a?utm_source=x"),
		browsertest.Click(chromedp.CSS(`.source-submit`)),
		chromedp.WaitVisible(chromedp.ID("source-url-error")),
	)
	if msg := run(t, ctx, "dup", chromedp.Text(chromedp.ID("source-url-error"))); msg != "This source is already attached" {
		t.Errorf("the same page in another spelling: the page says %q", msg)
	}
	do(t, ctx, "another page, no title",
		selectAll("#source-url"), chromedp.KeyEvent("https://example.org/guide"),
		browsertest.Click(chromedp.CSS(`.source-submit`)),
		waitText(".source-list", "example.org/guide"),
	)
	c, err := e.Server.Service.ReadNoteTab(context.Background(), asOwner(e), service.TabArgs{NoteID: id, TabID: "sources"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sources) != 2 || c.Sources[0].Title != "Launch checklist" || c.Sources[1].Title != "example.org/guide" {
		t.Fatalf("the service has the sources %+v", c.Sources)
	}
	noOverflow(t, ctx, "note-sources")
	accessible(t, ctx, "note-sources")
	browsertest.Screenshot(t, ctx, "note-sources")
	do(t, ctx, "delete a source",
		browsertest.Click(chromedp.CSS(fmt.Sprintf(`[data-source-id=%q] button`, c.Sources[1].ID))),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] #delete-source-confirm`)),
		browsertest.Click(chromedp.CSS(`dialog[open] #delete-source-confirm`)),
		chromedp.WaitNotPresent(chromedp.CSS(fmt.Sprintf(`[data-source-id=%q]`, c.Sources[1].ID))),
	)
	if c, _ = e.Server.Service.ReadNoteTab(context.Background(), asOwner(e), service.TabArgs{NoteID: id, TabID: "sources"}); len(c.Sources) != 1 {
		t.Fatalf("after deleting one the service has the sources %+v", c.Sources)
	}

	// An agent rewrites the markdown; History names it and the person.
	approved := true
	if _, err := e.Server.Service.UpdateNote(context.Background(), asOwner(e), service.UpdateNoteArgs{NoteID: id, Approved: &approved, Guard: service.Guard{ExpectedVersion: stripVersion(t, e, id)}}); err != nil {
		t.Fatal(err)
	}
	stripAgentWrite(t, e, id, "Research agent", "# Launch\n\nThe agent's plan.\n")
	do(t, ctx, "History", browsertest.Click(chromedp.ID("history-button")), chromedp.WaitVisible(chromedp.CSS(`.history-list`)), waitText(".history-list", "Research agent"))
	if u := location(t, ctx); !u.Query().Has("history") {
		t.Errorf("History is not in the URL: %s", u)
	}
	// The entries: one per writer's run of versions, newest first, that
	// together name every version once.
	type entry struct {
		Version  string `json:"version"`
		Versions string `json:"versions"`
		Text     string `json:"text"`
	}
	headers := func() []entry {
		return run(t, ctx, "entries", chromedp.Evaluate[[]entry](`[...document.querySelectorAll(".history-group > .history-entry")].map(b => ({version: b.dataset.version ?? "", versions: b.dataset.versions ?? "", text: b.innerText.replace(/\s+/g, " ")}))`))
	}
	covered := func(es []entry) []int64 {
		var vs []int64
		for _, x := range es {
			lo, hi := x.Version, x.Version
			if x.Versions != "" {
				lo, hi, _ = strings.Cut(x.Versions, "-")
			}
			a, _ := strconv.ParseInt(lo, 10, 64)
			b, _ := strconv.ParseInt(hi, 10, 64)
			for v := b; v >= a && a > 0; v-- {
				vs = append(vs, v)
			}
		}
		return vs
	}
	_, now := serverText(t, e, id)
	hs := headers()
	want := make([]int64, 0, now)
	for v := now; v >= 1; v-- {
		want = append(want, v)
	}
	if got := covered(hs); !slices.Equal(got, want) {
		t.Fatalf("the History's entries name the versions %v; want %d down to 1, each once: %+v", got, now, hs)
	}
	if hs[0].Version != fmt.Sprint(now) || !strings.Contains(hs[0].Text, "Research agent") || !strings.Contains(hs[0].Text, "Edited · Note") {
		t.Errorf("the newest entry is %+v; want the agent's version %d alone", hs[0], now)
	}
	grouped := ""
	for _, x := range hs {
		if x.Versions != "" && strings.Contains(x.Text, "(you)") && strings.Contains(x.Text, " changes") {
			grouped = x.Versions
		}
	}
	if grouped == "" {
		t.Fatalf("no entry groups the person's quick edits: %+v", hs)
	}
	// Opened, each run shows what it changed together and its versions.
	do(t, ctx, "open every run", browsertest.Poll(`(() => { const b = document.querySelector(".history-group > .history-entry[aria-expanded=false]"); if (b) { b.click(); return false } return true })()`),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`.history-entry[data-versions=%q] + .history-group-body .diff-tab`, grouped))))
	all := run(t, ctx, "versions", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".history-entry[data-version]")].map(b => b.dataset.version + "|" + b.innerText.replace(/\s+/g, " "))`))
	if len(all) != int(now) {
		t.Errorf("with every run open, the History lists %d versions; want %d", len(all), now)
	}
	if j := strings.Join(all, "\n"); !strings.Contains(j, "Renamed a tab · Plan") || !strings.Contains(j, "a Slides tab since deleted") {
		t.Errorf("History does not name what each version did:\n%s", j)
	}
	if d := run(t, ctx, "a run's diff", chromedp.Text(chromedp.CSS(fmt.Sprintf(`.history-entry[data-versions=%q] + .history-group-body .history-group-diff`, grouped)))); !strings.Contains(d, "Plan") {
		t.Errorf("what the run %s changed together reads %q", grouped, d)
	}

	// Open the first text's version: what it changed, then the Note as it
	// was, rendered; restore it.
	do(t, ctx, "open the old version", browsertest.Click(chromedp.CSS(fmt.Sprintf(`.history-entry[data-version="%d"]`, oldVersion))),
		chromedp.WaitVisible(chromedp.ID("version-title")), waitText(".version-panel", "The first plan."), waitText(".version-changes", "The first plan."))
	if u := location(t, ctx); u.Query().Get("history") != fmt.Sprint(oldVersion) {
		t.Errorf("the open version is not in the URL: %s", u)
	}
	if added := run(t, ctx, "added lines", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".version-changes .diff-lines ins")].map(x => x.textContent.trim())`)); !slices.Contains(added, "The first plan.") {
		t.Errorf("version %d's changes add the lines %q; want \"The first plan.\"", oldVersion, added)
	}
	if h := run(t, ctx, "rendered", chromedp.Evaluate[string](`document.querySelector(".version-md h1")?.innerText ?? ""`)); h != "Launch" {
		t.Errorf("the old version's markdown renders its heading as %q", h)
	}
	vtabs := run(t, ctx, "version strip", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".version-strip [role=tab]")].map(b => b.innerText.trim())`))
	if slices.Contains(vtabs, "Plan") {
		t.Errorf("the strip at version %d shows %v: the tabs added later are not in it", oldVersion, vtabs)
	}
	run(t, ctx, "list to the top", chromedp.Evaluate[chromedp.Void](`document.querySelector(".history-list").scrollTop = 0; window.scrollTo(0, 0)`))
	noOverflow(t, ctx, "note-history")
	accessible(t, ctx, "note-history")
	browsertest.Screenshot(t, ctx, "note-history")
	do(t, ctx, "phone width", browsertest.Phone(), chromedp.Sleep(200))
	noOverflow(t, ctx, "note-history at 390 px")
	browsertest.Screenshot(t, ctx, "note-history-phone")
	do(t, ctx, "desktop width", browsertest.Desktop(), chromedp.Sleep(200))

	do(t, ctx, "restore", browsertest.Click(chromedp.ID("restore-button")), chromedp.WaitVisible(chromedp.CSS(`dialog[open] #restore-confirm`)))
	accessible(t, ctx, "note-restore")
	do(t, ctx, "confirm", browsertest.Click(chromedp.CSS(`dialog[open] #restore-confirm`)))
	do(t, ctx, "restored", chromedp.WaitNotPresent(chromedp.CSS(`.history`)), waitText(".strip-notice", "Restored"))
	do(t, ctx, "the restored markdown", chromedp.KeyEvent("1", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.WaitVisible(cmContent), waitSaved())
	text, v := serverText(t, e, id)
	if v != now+1 || text != oldText {
		t.Fatalf("after restoring version %d the server is at %d with %q; want version %d with %q", oldVersion, v, text, now+1, oldText)
	}
	if got := editorText(t, ctx); got != oldText {
		t.Errorf("after the restore the editor holds %q, want %q", got, oldText)
	}
	if o := order(); len(o) != 3 || slices.Contains(o, grid) {
		t.Errorf("the restored strip is %v: want the first version's three tabs", o)
	}
	shown = run(t, ctx, "strip", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".strip-bar [role=tab]")].map(b => b.dataset.tabId)`))
	if !slices.Equal(shown, order()) {
		t.Errorf("after the restore the page shows the strip %v, the server %v", shown, order())
	}
	h, err := e.Server.Service.NoteHistory(context.Background(), asOwner(e), service.HistoryArgs{NoteID: id})
	if err != nil {
		t.Fatal(err)
	}
	if last := h.Versions[0]; last.Kind != "restored" || last.Version != v {
		t.Errorf("the newest version is %+v; want a restore", last)
	}

	// A long history comes a page at a time: "Show older" reads the rest,
	// and the run of versions the page cut grows back into one entry.
	for i := range 60 {
		text := fmt.Sprintf("%s\nLine %d.\n", oldText, i)
		if _, err := e.Server.Service.EditNoteTab(context.Background(), asOwner(e), service.EditTabArgs{NoteID: id, TabID: "markdown", ExpectedVersion: v, Operation: "replace_text", Text: &text}); err != nil {
			t.Fatal(err)
		}
		v++
	}
	do(t, ctx, "History again", browsertest.Click(chromedp.ID("history-button")), chromedp.WaitVisible(chromedp.ID("history-older")),
		waitText(".history-list", fmt.Sprintf("Versions %d–%d", v-49, v)))
	if got := covered(headers()); len(got) != 50 || got[0] != v {
		t.Fatalf("the first page names %d versions from %v; want the newest 50", len(got), got[:1])
	}
	do(t, ctx, "Show older", browsertest.Click(chromedp.ID("history-older")), chromedp.WaitNotPresent(chromedp.ID("history-older")))
	hs = headers()
	if got := covered(hs); len(got) != int(v) || got[0] != v || got[len(got)-1] != 1 {
		t.Fatalf("after Show older the History names %d versions; want all %d", len(got), v)
	}
	if !strings.Contains(hs[0].Text, "60 changes") || hs[0].Versions != fmt.Sprintf("%d-%d", v-59, v) {
		t.Errorf("the 60 quick saves read %+v; want one entry of 60 changes", hs[0])
	}
}

// historyOpen opens version v in the History: its entry, or first the
// entry of the run of versions that holds it.
func historyOpen(v int64) chromedp.Action[chromedp.Void] {
	return browsertest.Poll(fmt.Sprintf(`(() => {
		const b = document.querySelector('.history-entry[data-version="%[1]d"]');
		if (b) { b.click(); return true }
		for (const g of document.querySelectorAll(".history-entry[data-versions][aria-expanded=false]")) {
			const [lo, hi] = g.dataset.versions.split("-").map(Number);
			if (lo <= %[1]d && %[1]d <= hi) g.click();
		}
		return false
	})()`, v))
}
