package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// The web app's search: Ctrl+K (or the header's field) opens the palette,
// results come as the person types, grouped by Note with the tab, the
// place and a snippet whose matched words are marked; Enter opens the
// Note at the place (the markdown line, the slide, the sheet's cell), in
// an address that back, forward and a reload go to again. A query that
// matches nothing says so, a refused one says why, and Esc closes the
// palette with the focus back where it was.

// searchSeed is the Note the search test finds things in.
type searchSeed struct {
	id, sheetTab, sheetID, deckTab, slide3 string
}

// searchSeedNote makes a Note whose markdown has "zebrafinch" on line 80
// and "北京" (no spaces around it) on line 90, a sheet tab with "quokka
// ledger" in D40, and a slides tab whose third slide's body says "narwhal
// migration"; line 80, D40, slide 3 and another Note's title say
// "heliotrope".
func searchSeedNote(t *testing.T, e *servertest.Env) searchSeed {
	t.Helper()
	ctx := context.Background()
	me := asOwner(e)
	if _, err := e.Server.Service.CreateNote(ctx, me, service.CreateNoteArgs{Title: "Heliotrope launch", Approved: true}); err != nil {
		t.Fatal(err)
	}
	n, err := e.Server.Service.CreateNote(ctx, me, service.CreateNoteArgs{Title: "Field survey", Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	v := n.Version
	lines := make([]string, 100)
	for i := range lines {
		lines[i] = fmt.Sprintf("Line %d of the survey notes.", i+1)
	}
	lines[0] = "# Field survey"
	lines[79] = "At dawn a zebrafinch sang by the heliotrope hedge."
	lines[89] = "会议在北京举行。"
	text := strings.Join(lines, "\n") + "\n"
	w, err := e.Server.Service.EditNoteTab(ctx, me, service.EditTabArgs{NoteID: n.NoteID, TabID: "markdown", ExpectedVersion: v, Operation: "replace_text", Text: &text})
	if err != nil {
		t.Fatal(err)
	}
	v = w.Version

	sheet, err := e.Server.Service.CreateNoteTab(ctx, me, service.CreateTabArgs{NoteID: n.NoteID, ExpectedVersion: v, TabType: "sheet", Label: "Budget"})
	if err != nil {
		t.Fatal(err)
	}
	v = sheet.Version
	sheets := sheetxSheets(t, e, n.NoteID, sheet.TabID)
	if len(sheets) == 0 {
		t.Fatal("the new sheet tab has no sheet")
	}
	sheetID, _, _ := strings.Cut(sheets[0], "=")
	row, col := 39, 3 // D40
	w, err = e.Server.Service.EditNoteTab(ctx, me, service.EditTabArgs{NoteID: n.NoteID, TabID: sheet.TabID, ExpectedVersion: v, Operation: "sheet_set_range",
		SheetID: &sheetID, StartRow: &row, StartCol: &col, Values: [][]any{{"quokka ledger heliotrope"}}})
	if err != nil {
		t.Fatal(err)
	}
	v = w.Version

	deck, err := e.Server.Service.CreateNoteTab(ctx, me, service.CreateTabArgs{NoteID: n.NoteID, ExpectedVersion: v, TabType: "slides", Label: "Findings"})
	if err != nil {
		t.Fatal(err)
	}
	v = deck.Version
	for i, s := range []struct{ title, body string }{{"Where we went", "Three valleys."}, {"What we saw", "Birds and hedges."}, {"What moved", "A narwhal migration, seen from the heliotrope cliffs."}} {
		w, err = e.Server.Service.EditNoteTab(ctx, me, service.EditTabArgs{NoteID: n.NoteID, TabID: deck.TabID, ExpectedVersion: v, Operation: "slide_add", Title: &s.title, Body: &s.body,
			IdempotencyKey: fmt.Sprintf("search-slide-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		v = w.Version
	}
	ss, _ := slidesDeck(t, e, n.NoteID, deck.TabID)
	if len(ss) != 3 {
		t.Fatalf("the deck has %d slides, want 3", len(ss))
	}
	return searchSeed{id: n.NoteID, sheetTab: sheet.TabID, sheetID: sheetID, deckTab: deck.TabID, slide3: ss[2].ID}
}

// openPalette presses Ctrl+K and waits for the palette's field to have
// the focus.
func openPalette() chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.KeyEvent("k", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		browsertest.Poll(`document.querySelector("dialog.search-dialog")?.open === true && document.activeElement?.id === "search-input"`),
	)
}

// searchFor replaces the palette's query with q, typed.
func searchFor(q string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(selectAll("#search-input"), insertText(q))
}

// waitHit waits until the palette shows, for query typed, a hit in the
// Note titled note whose place reads where.
func waitHit(typed, note, where string) chromedp.Action[chromedp.Void] {
	return browsertest.Poll(fmt.Sprintf(`(() => {
		if (document.getElementById("search-input")?.value !== %q) return false;
		if (document.querySelector("#search-results.is-stale")) return false;
		return [...document.querySelectorAll("#search-results [role=group]")].some(g => g.querySelector(".search-note")?.innerText.trim() === %q &&
			[...g.querySelectorAll("[role=option]")].some(o => (o.querySelector(".search-where")?.innerText ?? "") === %q));
	})()`, typed, note, where), chromedp.WithPollingTimeout(stepTimeout))
}

// activeHit is the text of the palette's active option's parts.
func activeHit(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	return run(t, ctx, "active hit", chromedp.Evaluate[map[string]string](`(() => {
		const id = document.getElementById("search-input").getAttribute("aria-activedescendant");
		const o = id && document.getElementById(id);
		if (!o || o.getAttribute("aria-selected") !== "true") return {};
		return {note: o.closest("[role=group]").querySelector(".search-note").innerText.trim(), type: o.querySelector(".search-type")?.textContent ?? "",
			tab: o.querySelector(".search-tab")?.innerText ?? "", where: o.querySelector(".search-where")?.innerText ?? "",
			snippet: o.querySelector(".search-snippet").innerText, marks: [...o.querySelectorAll(".search-snippet mark")].map(m => m.innerText.toLowerCase()).join(","),
			html: String(o.querySelector(".search-snippet").children.length === o.querySelector(".search-snippet").querySelectorAll(":scope > mark, :scope > span").length)};
	})()`))
}

// moveTo presses ↓ until the active option is in the Note titled note at
// the place where (at most 20 times).
func moveTo(t *testing.T, ctx context.Context, note, where string) map[string]string {
	t.Helper()
	for range 20 {
		h := activeHit(t, ctx)
		if h["note"] == note && h["where"] == where {
			return h
		}
		do(t, ctx, "↓", chromedp.KeyEvent(kb.ArrowDown))
	}
	t.Fatalf("↓ never reached the hit in %q at %q", note, where)
	return nil
}

func TestBrowserSearch(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	seed := searchSeedNote(t, e)
	signInToNotes(t, ctx, e)

	// Ctrl+K from the Notes list: the palette, its field focused, a
	// labelled combobox.
	do(t, ctx, "Ctrl+K", openPalette())
	if role := run(t, ctx, "combobox", chromedp.Evaluate[string](`(() => { const i = document.getElementById("search-input"); return i.getAttribute("role") + " " + (i.getAttribute("aria-label") || "") + " " + document.querySelector("dialog.search-dialog").getAttribute("aria-labelledby"); })()`)); role != "combobox Search Notes search-title" {
		t.Errorf("the palette's field: %q", role)
	}

	// A word most places share: the hits grouped by Note, each with its tab,
	// its place and the matched word marked.
	do(t, ctx, "type heliotro", insertText("heliotro"), waitHit("heliotro", "Field survey", "line 80"), waitHit("heliotro", "Field survey", "D40"), waitHit("heliotro", "Field survey", "slide 3"))
	groups := run(t, ctx, "groups", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#search-results [role=group]")].map(g => g.querySelector(".search-note").innerText.trim() + ": " + g.querySelectorAll("[role=option]").length)`))
	if len(groups) != 2 || !strings.HasPrefix(groups[0], "Heliotrope launch") && !strings.HasPrefix(groups[1], "Heliotrope launch") {
		t.Errorf("the groups are %v, want Field survey and Heliotrope launch", groups)
	}
	if n := run(t, ctx, "marks", chromedp.Evaluate[int](`[...document.querySelectorAll("#search-results mark")].filter(m => m.innerText.toLowerCase().startsWith("heliotrop")).length`)); n < 4 {
		t.Errorf("%d snippets mark the word, want 4 (three places and a title)", n)
	}
	if n := run(t, ctx, "markers", chromedp.Evaluate[int](`[...document.querySelectorAll("#search-results .search-snippet")].filter(s => /[«»]/.test(s.innerText)).length`)); n != 0 {
		t.Errorf("%d snippets show the server's « » markers", n)
	}
	accessible(t, ctx, "search-palette")
	noOverflow(t, ctx, "search-palette")
	browsertest.Screenshot(t, ctx, "search-palette")
	do(t, ctx, "dark", browsertest.ColorScheme("dark"))
	accessible(t, ctx, "search-palette-dark")
	browsertest.Screenshot(t, ctx, "search-palette-dark")
	do(t, ctx, "light", browsertest.ColorScheme(""))

	// Enter on the markdown hit: the Note at its markdown tab, the cursor
	// on line 80 and that line in view.
	h := moveTo(t, ctx, "Field survey", "line 80")
	if h["type"] != "Text" || !strings.Contains(h["marks"], "heliotrop") {
		t.Errorf("the markdown hit shows %v", h)
	}
	do(t, ctx, "Enter on line 80", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(cmContent),
		browsertest.Poll(`document.querySelector(".md-editor")?.shadowRoot?.querySelector(".cm-activeLineGutter")?.innerText === "80"`))
	if open := run(t, ctx, "palette", chromedp.Evaluate[bool](`document.querySelector("dialog.search-dialog").open`)); open {
		t.Errorf("the palette stays open after Enter")
	}
	u := location(t, ctx)
	if u.Path != "/notes/"+seed.id || u.Query().Get("tab") != "markdown" || u.Query().Get("line") != "80" {
		t.Errorf("Enter on line 80 went to %s", u)
	}
	landed := run(t, ctx, "line 80", chromedp.Evaluate[string](`(() => {
		const root = document.querySelector(".md-editor").shadowRoot;
		const line = root.querySelector(".cm-activeLine");
		if (!line) return "no active line";
		const r = line.getBoundingClientRect();
		if (r.top < 0 || r.bottom > innerHeight) return "line at " + Math.round(r.top) + "–" + Math.round(r.bottom) + " in a window " + innerHeight + " high";
		if (!root.activeElement?.classList.contains("cm-content")) return "the focus is not in the editor";
		return line.innerText;
	})()`))
	if !strings.Contains(landed, "zebrafinch") {
		t.Errorf("on line 80: %s", landed)
	}

	// Ctrl+K from the editor, a word in a cell: Enter opens the sheet tab
	// with D40 selected.
	do(t, ctx, "Ctrl+K in the editor", openPalette())
	if sel := run(t, ctx, "selected", chromedp.Evaluate[string](`(() => { const i = document.getElementById("search-input"); return i.value.slice(i.selectionStart, i.selectionEnd); })()`)); sel != "heliotro" {
		t.Errorf("the palette opens again with %q selected, want the last query", sel)
	}
	do(t, ctx, "type quokka", searchFor("quokka"), waitHit("quokka", "Field survey", "D40"))
	h = activeHit(t, ctx)
	if h["type"] != "Sheet" || h["tab"] != "Budget" || !strings.Contains(h["marks"], "quokka") {
		t.Errorf("the cell's hit shows %v", h)
	}
	focusedCell := `(async () => { const g = document.querySelector(".sheet-grid revo-grid"); const f = g && await g.getFocused(); return f ? f.cell.x + "," + f.cell.y : ""; })()`
	do(t, ctx, "Enter on D40", chromedp.KeyEvent(kb.Enter), browsertest.Poll(sheetxDOMCell(39, 3)+` === "quokka ledger heliotrope"`, chromedp.WithPollingTimeout(stepTimeout)))
	if f := run(t, ctx, "focused cell", chromedp.Evaluate[string](focusedCell, chromedp.EvalAwaitPromise)); f != "3,39" {
		t.Errorf("the selected cell is %q, want D40 (3,39)", f)
	}
	u = location(t, ctx)
	if u.Query().Get("tab") != seed.sheetTab || u.Query().Get("cell") != "D40" || u.Query().Get("sheet") != seed.sheetID {
		t.Errorf("Enter on D40 went to %s", u)
	}
	if v := run(t, ctx, "D40 in view", chromedp.Evaluate[string](`(() => {
		const c = document.querySelector('.sheet-grid revogr-data[col-type=rgCol][type=rgRow] .rgCell[data-rgrow="39"][data-rgcol="3"]');
		const g = document.querySelector(".sheet-grid").getBoundingClientRect(), r = c.getBoundingClientRect();
		return r.top >= g.top && r.bottom <= g.bottom && r.left >= g.left && r.right <= g.right ? "" : "D40 is outside the grid's box";
	})()`)); v != "" {
		t.Error(v)
	}
	browsertest.Screenshot(t, ctx, "search-landed-cell")

	// The header's field: typing in it opens the palette with what was
	// typed; a hit on slide 3 selects that slide.
	do(t, ctx, "the header field", browsertest.Click(chromedp.ID("header-search")), insertText("narwh"),
		browsertest.Poll(`document.querySelector("dialog.search-dialog")?.open === true && document.activeElement?.id === "search-input"`),
		waitHit("narwh", "Field survey", "slide 3"))
	if v := run(t, ctx, "header field", chromedp.Evaluate[string](`document.getElementById("header-search").value`)); v != "" {
		t.Errorf("the header field keeps %q once the palette has it", v)
	}
	moveTo(t, ctx, "Field survey", "slide 3")
	slide3 := `document.querySelector(".sl-card[aria-current=true]")?.closest("[data-slide-id]")?.dataset.slideId === %q && document.getElementById("sl-editor-title")?.innerText === "Slide 3"`
	do(t, ctx, "Enter on slide 3", chromedp.KeyEvent(kb.Enter), browsertest.Poll(fmt.Sprintf(slide3, seed.slide3)))
	u = location(t, ctx)
	if u.Query().Get("tab") != seed.deckTab || u.Query().Get("slide") != seed.slide3 {
		t.Errorf("Enter on slide 3 went to %s", u)
	}
	if f := run(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement?.closest("[data-slide-id]")?.dataset.slideId ?? ""`)); f != seed.slide3 {
		t.Errorf("after landing the focus is on slide %q, want slide 3's card", f)
	}

	// The addresses are the page's: back goes to the cell again, forward
	// and a reload to the slide.
	do(t, ctx, "back", chromedp.NavigateBack(), browsertest.Poll(sheetxDOMCell(39, 3)+` === "quokka ledger heliotrope"`, chromedp.WithPollingTimeout(stepTimeout)))
	do(t, ctx, "back: D40", browsertest.Poll(`(async () => { const g = document.querySelector(".sheet-grid revo-grid"); const f = g && await g.getFocused(); return !!f && f.cell.x === 3 && f.cell.y === 39; })()`, chromedp.WithPollingTimeout(stepTimeout)))
	do(t, ctx, "forward", chromedp.NavigateForward(), browsertest.Poll(fmt.Sprintf(slide3, seed.slide3)))
	do(t, ctx, "reload", chromedp.Reload(), browsertest.Poll(fmt.Sprintf(slide3, seed.slide3)))

	// Chinese needs no spaces: a word inside a sentence is found as typed.
	do(t, ctx, "北京", openPalette(), searchFor("北京"), waitHit("北京", "Field survey", "line 90"))
	if h := moveTo(t, ctx, "Field survey", "line 90"); h["marks"] != "北京" {
		t.Errorf("the hit on line 90 marks %q, want 北京", h["marks"])
	}

	// No match says so; a query with no word is refused, inline.
	do(t, ctx, "no match", searchFor("xylophonequartz"),
		browsertest.Poll(`document.querySelector(".search-status")?.innerText === "No matches for “xylophonequartz”."`, chromedp.WithPollingTimeout(stepTimeout)))
	if n := run(t, ctx, "options", chromedp.Evaluate[int](`document.querySelectorAll("[role=option]").length`)); n != 0 {
		t.Errorf("no match shows %d options", n)
	}
	do(t, ctx, "no word", searchFor(`""`), browsertest.Poll(`(document.querySelector(".search-error")?.innerText ?? "") !== ""`, chromedp.WithPollingTimeout(stepTimeout)))
	t.Logf("a query with no word: %q", run(t, ctx, "refusal", chromedp.Text(chromedp.CSS(".search-error"))))

	// Esc closes the palette, and the focus goes back where it was.
	do(t, ctx, "Esc", chromedp.KeyEvent(kb.Escape), browsertest.Poll(`!document.querySelector("dialog.search-dialog").open`))
	do(t, ctx, "focus the header field", chromedp.Focus(chromedp.ID("header-search")), openPalette(), chromedp.KeyEvent(kb.Escape),
		browsertest.Poll(`!document.querySelector("dialog.search-dialog").open && document.activeElement?.id === "header-search"`))

	// A phone: the header has a search button; the palette fits.
	do(t, ctx, "phone", browsertest.Phone(), chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(row("Welcome", "")),
		browsertest.Click(chromedp.CSS(".topsearch-button")),
		browsertest.Poll(`document.querySelector("dialog.search-dialog")?.open === true && document.activeElement?.id === "search-input"`),
		searchFor("heliotrope"), waitHit("heliotrope", "Field survey", "D40"))
	noOverflow(t, ctx, "search-palette-phone")
	browsertest.Screenshot(t, ctx, "search-palette-phone")
	if w := run(t, ctx, "width", chromedp.Evaluate[float64](`document.querySelector("dialog.search-dialog").getBoundingClientRect().width`)); w > float64(browsertest.PhoneWidth) || w < float64(browsertest.PhoneWidth)-40 {
		t.Errorf("on a phone the palette is %.0f px wide in a %d px window", w, browsertest.PhoneWidth)
	}
}
