package server_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"foundry/internal/browsertest"
	"foundry/internal/note"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// Presenting a deck (keyboard only), a new slide's title, the markdown
// preview's tables, the tab strip's scrollbars and a markdown list
// continued by Enter, as a person meets them in Chromium.

// presentText is the text of the element sel in the present view ("" when
// there is none).
func presentText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return run(t, ctx, sel, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q)?.innerText.trim() ?? ""`, sel)))
}

// presentKey presses key in the page and waits for the counter to say want.
func presentKey(key, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.KeyEvent(key), browsertest.Poll(fmt.Sprintf(`document.querySelector("[data-present-count]")?.innerText.trim() === %q`, want)))
}

// pressEnter is the Enter key as a keyboard sends it: down and up. (Its
// "char" event, which chromedp's kb.Enter sends too, would type a second
// line break where the page has handled the key and cancelled it.)
func pressEnter() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{kb.KeyRawDown, kb.KeyUp} {
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}); err != nil {
				return err
			}
		}
		return nil
	})
}

// openDeck signs the owner in, adds a slides tab with slides to the
// Welcome Note and opens it; it answers the Note's ID and the tab's.
func openDeck(t *testing.T, e *servertest.Env, ctx context.Context, slides ...note.SlideInput) (string, string) {
	t.Helper()
	signInToNotes(t, ctx, e)
	id := notesOf(t, e)["Welcome"].NoteID
	_, v := serverText(t, e, id)
	tab, err := e.Server.Service.CreateNoteTab(context.Background(), asOwner(e), service.CreateTabArgs{NoteID: id, ExpectedVersion: v, TabType: "slides", Label: "Deck", Slides: slides})
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "open the deck", chromedp.Navigate(e.URL+"/notes/"+id+"?tab="+tab.TabID), chromedp.WaitVisible(chromedp.CSS(`[data-present]`)))
	return id, tab.TabID
}

func TestBrowserSlidesPresent(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	id, deck := openDeck(t, e, ctx,
		note.SlideInput{Title: "Launch overview", Body: "- Why now\n- What ships\n- Who it is for", Notes: "Welcome everyone; this takes ten minutes."},
		note.SlideInput{Title: "The numbers", Body: "Sign-ups doubled\n---\nChurn halved", Notes: "Say the growth figure first, then the churn."},
		note.SlideInput{Title: "Thank you", Body: "Questions welcome"})
	// A look on the first two slides, as the editor sets it.
	do(t, ctx, "ink on the first slide", browsertest.Click(chromedp.CSS(`input[name=sl-theme][value=ink]`)), waitSaved())
	do(t, ctx, "the second slide: two columns", browsertest.Click(chromedp.CSS(`.sl-list .sl-item:nth-child(2) .sl-card`)),
		browsertest.Poll(`document.getElementById("sl-field-title")?.value === "The numbers"`),
		browsertest.Click(chromedp.CSS(`input[name=sl-layout][value=two-column]`)), browsertest.Click(chromedp.CSS(`input[name=sl-theme][value=ink]`)), waitSaved(),
		browsertest.Click(chromedp.CSS(`.sl-list .sl-item:nth-child(1) .sl-card`)),
		browsertest.Poll(`document.getElementById("sl-field-title")?.value === "Launch overview"`))
	if title := run(t, ctx, "present title", chromedp.Evaluate[string](`document.querySelector("[data-present]").title`)); !strings.Contains(title, "Ctrl+Enter") {
		t.Errorf("the Present button's title %q does not name its shortcut", title)
	}
	editorLook := run(t, ctx, "editor look", chromedp.Evaluate[string](`(() => { const s = document.querySelector(".sl-preview .sl-slide"); return s.dataset.layout + " " + s.dataset.theme; })()`))

	// Keyboard only: Ctrl+Enter presents from the selected slide.
	do(t, ctx, "present", chromedp.Focus(chromedp.CSS(`.sl-list .sl-item:nth-child(1) .sl-card`)),
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.WaitVisible(chromedp.CSS(`.sl-present .sl-stage .sl-slide`)),
		browsertest.Poll(`document.activeElement?.classList.contains("sl-present")`))
	if c := presentText(t, ctx, "[data-present-count]"); c != "1 / 3" {
		t.Errorf("presenting starts at %q, want 1 / 3", c)
	}
	look := run(t, ctx, "present look", chromedp.Evaluate[string](`(() => { const s = document.querySelector(".sl-stage .sl-slide"); return s.dataset.layout + " " + s.dataset.theme + " " + s.querySelector(".sl-title").innerText + " " + s.querySelectorAll("li").length; })()`))
	if look != editorLook+" Launch overview 3" {
		t.Errorf("the presented slide is %q, the editor shows %q with the title Launch overview and 3 bullets", look, editorLook)
	}
	// The slide fills the window's width or height, whichever binds.
	if fit := run(t, ctx, "fit", chromedp.Evaluate[bool](`(() => { const r = document.querySelector(".sl-stage .sl-slide").getBoundingClientRect(); return Math.abs(r.width - innerWidth) < 2 || Math.abs(r.height - innerHeight) < 2; })()`)); !fit {
		t.Errorf("the presented slide does not fill the screen")
	}
	t.Logf("full screen granted: %v", run(t, ctx, "fullscreen", chromedp.Evaluate[bool](`document.fullscreenElement?.classList.contains("sl-present") ?? false`)))

	do(t, ctx, "next, next", presentKey(kb.ArrowRight, "2 / 3"), presentKey(" ", "3 / 3"))
	if h := presentText(t, ctx, ".sl-stage .sl-title"); h != "Thank you" {
		t.Errorf("the third slide shows %q", h)
	}
	do(t, ctx, "past the end stays", presentKey(kb.PageDown, "3 / 3"))
	do(t, ctx, "previous", presentKey(kb.ArrowLeft, "2 / 3"))
	if look := run(t, ctx, "second look", chromedp.Evaluate[string](`(() => { const s = document.querySelector(".sl-stage .sl-slide"); return s.dataset.layout + " " + s.dataset.theme + " " + s.querySelectorAll(".sl-cols .sl-body").length; })()`)); look != "two-column ink 2" {
		t.Errorf("the second slide is presented as %q, want two columns in ink", look)
	}
	browsertest.WindowScreenshot(t, ctx, "slides-present")
	do(t, ctx, "Home, End, PageUp", presentKey(kb.Home, "1 / 3"), presentKey(kb.End, "3 / 3"), presentKey(kb.PageUp, "2 / 3"))

	// P: the presenter view, with the slide, the next one, its notes, the time.
	do(t, ctx, "presenter view", chromedp.KeyEvent("p"), chromedp.WaitVisible(chromedp.CSS(`.sl-pv-notes`)))
	if h := presentText(t, ctx, ".sl-pv-current .sl-title"); h != "The numbers" {
		t.Errorf("the presenter view's slide is %q", h)
	}
	if h := presentText(t, ctx, ".sl-pv-next .sl-title"); h != "Thank you" {
		t.Errorf("the presenter view's next slide is %q", h)
	}
	if n := presentText(t, ctx, ".sl-pv-text"); n != "Say the growth figure first, then the churn." {
		t.Errorf("the presenter view's notes are %q", n)
	}
	if tm := presentText(t, ctx, ".sl-pv-time"); !regexp.MustCompile(`^\d+:\d\d$`).MatchString(tm) {
		t.Errorf("the presenter view's clock says %q", tm)
	}
	accessible(t, ctx, "slides-presenter")
	browsertest.WindowScreenshot(t, ctx, "slides-presenter")
	do(t, ctx, "next in the presenter view", presentKey(kb.ArrowDown, "3 / 3"))
	if n := presentText(t, ctx, ".sl-pv-next"); !strings.Contains(n, "End of the deck") {
		t.Errorf("on the last slide the presenter view's next is %q", n)
	}
	if n := presentText(t, ctx, ".sl-pv-notes"); !strings.Contains(n, "No speaker notes") {
		t.Errorf("a slide without notes shows %q", n)
	}
	do(t, ctx, "back", presentKey(kb.Backspace, "2 / 3"))

	// Esc leaves: the editor shows the slide it ended on, the Present
	// button has the focus back, and nothing was written.
	_, before := slidesDeck(t, e, id, deck)
	do(t, ctx, "Esc", chromedp.KeyEvent(kb.Escape), browsertest.Poll(`!document.querySelector(".sl-present") && !document.fullscreenElement`),
		browsertest.Poll(`document.activeElement?.hasAttribute("data-present")`),
		browsertest.Poll(`document.getElementById("sl-field-title")?.value === "The numbers"`))
	if _, after := slidesDeck(t, e, id, deck); after != before {
		t.Errorf("presenting wrote the Note: version %d, then %d", before, after)
	}

	// Where the browser refuses full screen, the presentation covers the
	// window; Tab stays among its buttons; Esc leaves.
	do(t, ctx, "refuse full screen", chromedp.Evaluate[chromedp.Void](`Element.prototype.requestFullscreen = () => Promise.reject(new TypeError("Permissions check failed"))`))
	do(t, ctx, "present again", chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.WaitVisible(chromedp.CSS(`.sl-present .sl-stage .sl-slide`)))
	if c := presentText(t, ctx, "[data-present-count]"); c != "2 / 3" {
		t.Errorf("presenting again starts at %q, want the selected slide, 2 / 3", c)
	}
	if cover := run(t, ctx, "cover", chromedp.Evaluate[string](`(() => { const r = document.querySelector(".sl-present").getBoundingClientRect(); return [r.left, r.top, r.width === innerWidth, r.height === innerHeight, !!document.fullscreenElement].join(" "); })()`)); cover != "0 0 true true false" {
		t.Errorf("without full screen the presentation is at %q, want it covering the window", cover)
	}
	for i := 0; i < 6; i++ {
		do(t, ctx, "Tab", chromedp.KeyEvent(kb.Tab))
		if in := run(t, ctx, "focus", chromedp.Evaluate[bool](`!!document.activeElement?.closest(".sl-present")`)); !in {
			t.Fatalf("Tab %d left the presentation for %s", i+1, run(t, ctx, "where", chromedp.Evaluate[string](`document.activeElement?.outerHTML.slice(0, 80) ?? ""`)))
		}
	}
	do(t, ctx, "Esc", chromedp.KeyEvent(kb.Escape), chromedp.WaitNotPresent(chromedp.CSS(`.sl-present`)))
}

func TestBrowserSlidesNewTitle(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	id, deck := openDeck(t, e, ctx, note.SlideInput{Title: "Agenda"})

	// The new slide's title is empty, with a placeholder, and has the focus.
	do(t, ctx, "add a slide", browsertest.Click(chromedp.CSS(`[data-add-slide]`)),
		browsertest.Poll(`document.querySelectorAll(".sl-list .sl-item").length === 2 && document.activeElement?.id === "sl-field-title"`))
	field := run(t, ctx, "title field", chromedp.Evaluate[string](`(() => { const f = document.getElementById("sl-field-title"); return JSON.stringify([f.value, f.placeholder, f.getAttribute("aria-invalid") ?? ""]); })()`))
	if field != `["","Slide title",""]` {
		t.Errorf("the new slide's title field is %s, want empty with the placeholder Slide title, not marked invalid", field)
	}
	browsertest.Screenshot(t, ctx, "slides-new-title")

	// Keys typed are exactly the title, saved and there after a reload.
	do(t, ctx, "type the title", chromedp.KeyEvent("Launch overview"), waitSaved())
	slidesWait(t, e, id, deck, "the typed title", func(ss []note.Slide) bool {
		return slices.Equal(slidesTitles(ss), []string{"Agenda", "Launch overview"})
	})
	do(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.sl-list .sl-item:nth-child(2) .sl-card`)),
		browsertest.Click(chromedp.CSS(`.sl-list .sl-item:nth-child(2) .sl-card`)),
		browsertest.Poll(`document.getElementById("sl-field-title")?.value !== "Agenda"`))
	if got := run(t, ctx, "title after reload", chromedp.Evaluate[string](`document.getElementById("sl-field-title").value`)); got != "Launch overview" {
		t.Errorf("after a reload the title is %q, want exactly what was typed", got)
	}
	if got := slidesCards(t, ctx); !slices.Equal(got, []string{"Agenda", "Launch overview"}) {
		t.Errorf("after a reload the deck list shows %v", got)
	}
}

func TestBrowserMarkdownTablesAndLists(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	signInToNotes(t, ctx, e)
	id := notesOf(t, e)["Welcome"].NoteID
	agentWrites(t, e, id, func(string) string {
		return "# Plan\n\n| Step | Owner | When |\n|---|---|---|\n| Draft the brief | Ana | Monday |\n| Review it | Ben | Tuesday |\n| Ship | Both | Friday |\n\nDone.\n"
	})
	do(t, ctx, "open the Note", chromedp.Navigate(e.URL+"/notes/"+id), chromedp.WaitVisible(cmContent), chromedp.WaitVisible(chromedp.CSS(`.md-preview table`)), waitSaved())

	// A table in the preview is ruled and padded, its header shaded.
	style := run(t, ctx, "table style", chromedp.Evaluate[[]string](`(() => {
		const td = getComputedStyle(document.querySelector(".md-preview td")), th = getComputedStyle(document.querySelector(".md-preview th"));
		return [td.borderTopStyle + " " + td.borderTopWidth, td.paddingLeft, th.backgroundColor, getComputedStyle(document.querySelector(".md-preview table")).overflowX];
	})()`))
	if style[0] != "solid 1px" || style[1] == "0px" || style[2] == "rgba(0, 0, 0, 0)" || style[3] != "auto" {
		t.Errorf("the preview's table cells are styled %v, want a 1px solid border, padding, a shaded header and a table that scrolls sideways", style)
	}
	browsertest.Screenshot(t, ctx, "markdown-table")

	// The tab strip has no scrollbar of its own when its tabs fit, and
	// still scrolls sideways when they do not.
	strip := run(t, ctx, "strip", chromedp.Evaluate[[]int](`(() => { const s = document.querySelector(".strip-bar .tabstrip");
		return [s.scrollWidth - s.clientWidth, s.scrollHeight - s.clientHeight, s.offsetWidth - s.clientWidth, s.offsetHeight - s.clientHeight, getComputedStyle(s).overflowX === "auto" ? 1 : 0]; })()`))
	if !slices.Equal(strip, []int{0, 0, 0, 0, 1}) {
		t.Errorf("the tab strip overflows by %d×%d px with scrollbars %d×%d px (scrolls sideways: %d); want none when the tabs fit", strip[0], strip[1], strip[2], strip[3], strip[4])
	}

	// Enter continues a list; a marker typed over the continued one
	// replaces it rather than doubling it.
	do(t, ctx, "type a list", browsertest.Click(cmContent), chromedp.KeyEvent(kb.End, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.KeyEvent("- first"), pressEnter(), chromedp.KeyEvent("- second"),
		pressEnter(), chromedp.KeyEvent("third"),
		pressEnter(), pressEnter(), chromedp.KeyEvent("1. one"), pressEnter(), chromedp.KeyEvent("2. two"),
		pressEnter(), pressEnter(), chromedp.KeyEvent("- [ ] buy"), pressEnter(), chromedp.KeyEvent("- [ ] sell"),
		pressEnter(), chromedp.KeyEvent("* star"))
	lines := strings.Split(editorText(t, ctx), "\n")
	for _, want := range []string{"- first", "- second", "- third", "1. one", "2. two", "- [ ] buy", "- [ ] sell", "* star"} {
		if !slices.Contains(lines, want) {
			t.Errorf("the editor has no line %q: %q", want, lines)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "- - ") || strings.HasPrefix(l, "2. 2.") || strings.HasPrefix(l, "- [ ] - ") || strings.HasPrefix(l, "- * ") {
			t.Errorf("a doubled list marker: %q", l)
		}
	}
	savedOnServer(t, ctx, e, id)

	// Every tab strip of a sheet tab (the Note's and the sheets') fits
	// without scrolling either way.
	sheet := stripOfType(t, e, id, "sheet")[0].TabID
	do(t, ctx, "the sheet tab", browsertest.Click(stripTab(sheet)), chromedp.WaitVisible(chromedp.CSS(`.sheet-tabs`)))
	if over := run(t, ctx, "strips", chromedp.Evaluate[[]string](`[...document.querySelectorAll("[role=tablist]")].filter(s => s.scrollWidth > s.clientWidth || s.scrollHeight > s.clientHeight).map(s => s.className + " " + s.scrollWidth + "x" + s.scrollHeight + " in " + s.clientWidth + "x" + s.clientHeight)`)); len(over) > 0 {
		t.Errorf("tab strips that scroll though their tabs fit: %v", over)
	}
}
