package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"foundry/internal/browsertest"
	"foundry/internal/note"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// The slides editor of the web app: a person adds slides and types their
// title, body and notes (saved as they type, guarded by the version),
// reorders them by dragging and by the keyboard, sets a layout and a
// theme, sees an agent's slide arrive live without losing the field they
// are typing in, and deletes a slide. Every change is checked in the
// service, not only on the page.

// slidesDeck is the slides tab as the service reads it, and the version.
func slidesDeck(t *testing.T, e *servertest.Env, id, tab string) ([]note.Slide, int64) {
	t.Helper()
	c, err := e.Server.Service.ReadNoteTab(context.Background(), asOwner(e), service.TabArgs{NoteID: id, TabID: tab})
	if err != nil {
		t.Fatal(err)
	}
	return c.Slides, c.Version
}

// slidesTitles is the deck's titles, in order.
func slidesTitles(ss []note.Slide) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Title
	}
	return out
}

// slidesWait polls the service (bounded) until ok holds of the deck.
func slidesWait(t *testing.T, e *servertest.Env, id, tab, what string, ok func([]note.Slide) bool) []note.Slide {
	t.Helper()
	var ss []note.Slide
	for i := 0; i < 100; i++ {
		ss, _ = slidesDeck(t, e, id, tab)
		if ok(ss) {
			return ss
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: the server's deck is %+v", what, ss)
	return nil
}

// slidesCards is the titles the page's deck list shows, in order.
func slidesCards(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return run(t, ctx, "cards", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".sl-list .sl-card .sr-only")].map(s => s.innerText.replace(/^Slide \d+: /, "").trim())`))
}

// slidesDrag drags the card at index from onto the top half of the card
// at index to, with the HTML5 drag events a mouse makes.
func slidesDrag(from, to int) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const items = document.querySelectorAll(".sl-list .sl-item");
		const src = items[%d], dst = items[%d];
		const dt = new DataTransfer();
		const r = dst.getBoundingClientRect();
		const at = {bubbles: true, cancelable: true, dataTransfer: dt, clientX: r.left + r.width / 2, clientY: r.top + 4};
		src.dispatchEvent(new DragEvent("dragstart", {bubbles: true, cancelable: true, dataTransfer: dt}));
		return new Promise(done => requestAnimationFrame(() => {
			dst.dispatchEvent(new DragEvent("dragenter", at));
			dst.dispatchEvent(new DragEvent("dragover", at));
			requestAnimationFrame(() => {
				dst.dispatchEvent(new DragEvent("drop", at));
				src.dispatchEvent(new DragEvent("dragend", {bubbles: true, dataTransfer: dt}));
				done();
			});
		}));
	})()`, from, to), chromedp.EvalAwaitPromise)
}

func TestBrowserNoteSlides(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	pc := asOwner(e)
	signInToNotes(t, ctx, e)

	// A new Note, reachable by agents, with a slides tab.
	do(t, ctx, "create a Note",
		newNote("Pitch"),
	)
	do(t, ctx, "let agents reach it", browsertest.Click(row("Pitch", "[role=switch]")),
		browsertest.Poll(string(row("Pitch", "[role=switch]"))+`?.getAttribute("aria-checked") === "true"`))
	n := notesOf(t, e)["Pitch"]
	if !n.Approved {
		t.Fatalf("the Note is not reachable by agents after the switch: %+v", n)
	}
	v := func() int64 { _, v := slidesDeck(t, e, n.NoteID, "markdown"); return v }()
	tab, err := e.Server.Service.CreateNoteTab(context.Background(), pc, service.CreateTabArgs{NoteID: n.NoteID, ExpectedVersion: v, TabType: "slides", Label: "Deck"})
	if err != nil {
		t.Fatal(err)
	}
	deck := tab.TabID

	// The empty deck says what to do.
	do(t, ctx, "open the slides tab", chromedp.Navigate(e.URL+"/notes/"+n.NoteID+"?tab="+deck), chromedp.WaitVisible(chromedp.CSS(`.sl-empty`)))
	if msg := run(t, ctx, "empty", chromedp.Text(chromedp.CSS(`.sl-empty`))); !strings.Contains(msg, "Add the first slide") || !strings.Contains(msg, "agent") {
		t.Errorf("the empty deck says %q", msg)
	}
	accessible(t, ctx, "note-slides-empty")

	// Two slides, typed in; the server has every field.
	do(t, ctx, "add the first slide", browsertest.Click(chromedp.CSS(`.sl-empty button.primary`)), chromedp.WaitVisible(chromedp.ID("sl-field-title")),
		browsertest.Poll(`document.activeElement?.id === "sl-field-title"`))
	do(t, ctx, "type the first slide",
		selectAll("#sl-field-title"), insertText("The problem"),
		chromedp.Focus(chromedp.ID("sl-field-body")), insertText("- Decks drift from the research\n- Nobody owns the story"),
		chromedp.Focus(chromedp.ID("sl-field-notes")), insertText("Open with the survey."),
		browsertest.Poll(`document.getElementById("save-state")?.innerText !== "Saved"`), waitSaved())
	ss := slidesWait(t, e, n.NoteID, deck, "the first slide", func(ss []note.Slide) bool {
		return len(ss) == 1 && ss[0].Title == "The problem" && ss[0].Body == "- Decks drift from the research\n- Nobody owns the story" && ss[0].Notes == "Open with the survey."
	})
	first := ss[0].ID
	do(t, ctx, "add the second slide", browsertest.Click(chromedp.CSS(`[data-add-slide]`)),
		browsertest.Poll(`document.querySelectorAll(".sl-list .sl-item").length === 2 && document.activeElement?.id === "sl-field-title"`))
	do(t, ctx, "type the second slide",
		selectAll("#sl-field-title"), insertText("One editor"),
		chromedp.Focus(chromedp.ID("sl-field-body")), insertText("People write here\n---\nAgents draft there"),
		waitSaved())
	ss = slidesWait(t, e, n.NoteID, deck, "the second slide", func(ss []note.Slide) bool {
		return slices.Equal(slidesTitles(ss), []string{"The problem", "One editor"}) && ss[1].Body == "People write here\n---\nAgents draft there"
	})
	second := ss[1].ID
	if got := slidesCards(t, ctx); !slices.Equal(got, []string{"The problem", "One editor"}) {
		t.Errorf("the deck list shows %v", got)
	}
	if h := run(t, ctx, "preview", chromedp.Evaluate[string](`document.querySelector(".sl-preview .sl-title")?.innerText ?? ""`)); h != "One editor" {
		t.Errorf("the preview's title is %q", h)
	}

	// Reorder by dragging: the second card onto the first.
	do(t, ctx, "drag", slidesDrag(1, 0), waitSaved())
	slidesWait(t, e, n.NoteID, deck, "after the drag", func(ss []note.Slide) bool {
		return len(ss) == 2 && ss[0].ID == second && ss[1].ID == first
	})
	if got := slidesCards(t, ctx); !slices.Equal(got, []string{"One editor", "The problem"}) {
		t.Errorf("after the drag the deck list shows %v", got)
	}
	// And by the keyboard: Alt+↑ on the second card; focus stays on it.
	do(t, ctx, "Alt+Up", chromedp.Focus(chromedp.CSS(`.sl-list .sl-item:nth-child(2) .sl-card`)),
		chromedp.KeyEvent(kb.ArrowUp, chromedp.KeyModifiers(chromedp.ModifierAlt)), waitSaved())
	slidesWait(t, e, n.NoteID, deck, "after Alt+Up", func(ss []note.Slide) bool {
		return len(ss) == 2 && ss[0].ID == first && ss[1].ID == second
	})
	if id := run(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement?.closest(".sl-item")?.dataset.slideId ?? ""`)); id != first {
		t.Errorf("after Alt+Up the focus is on %q, want the moved slide %s", id, first)
	}

	// A layout and a theme on the second slide.
	do(t, ctx, "select the second slide", browsertest.Click(chromedp.CSS(`.sl-list .sl-item:nth-child(2) .sl-card`)),
		browsertest.Poll(`document.getElementById("sl-field-title")?.value === "One editor"`))
	do(t, ctx, "two columns, ocean",
		browsertest.Click(chromedp.CSS(`input[name=sl-layout][value=two-column]`)), waitSaved(),
		browsertest.Click(chromedp.CSS(`input[name=sl-theme][value=ocean]`)), waitSaved())
	slidesWait(t, e, n.NoteID, deck, "the look", func(ss []note.Slide) bool {
		return len(ss) == 2 && ss[1].Layout == "two-column" && ss[1].Theme == "ocean" && ss[0].Layout == "" && ss[0].Theme == ""
	})
	if look := run(t, ctx, "preview look", chromedp.Evaluate[string](`(() => { const s = document.querySelector(".sl-preview .sl-slide"); return s.dataset.layout + " " + s.dataset.theme + " " + s.querySelectorAll(".sl-cols .sl-body").length; })()`)); look != "two-column ocean 2" {
		t.Errorf("the preview is %q, want two columns in ocean", look)
	}
	noOverflow(t, ctx, "note-slides")
	accessible(t, ctx, "note-slides")

	// An agent adds a slide while the person is typing notes: the slide
	// appears live, the notes field keeps its focus and its text, and the
	// person's text is saved on the agent's version.
	do(t, ctx, "type notes", chromedp.Focus(chromedp.ID("sl-field-notes")), insertText("Pause here"))
	agent := e.Client(t, e.WriteToken(t), "")
	_, av := slidesDeck(t, e, n.NoteID, deck)
	r := servertest.MustCall(t, agent, "edit_note_tab", map[string]any{"note_id": n.NoteID, "tab_id": deck, "expected_version": av,
		"idempotency_key": "webslides-agent-1", "operation": "slide_add", "title": "From the agent", "body": "Numbers to back it"})
	if r.IsError {
		t.Fatalf("the agent's slide_add: %s", r.Text)
	}
	do(t, ctx, "the agent's slide appears", browsertest.Poll(`[...document.querySelectorAll(".sl-list .sl-card .sr-only")].some(s => s.innerText.includes("From the agent"))`))
	do(t, ctx, "keep typing", insertText(" for questions."), waitSaved())
	if st := run(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement?.id + "=" + document.activeElement?.value`)); st != "sl-field-notes=Pause here for questions." {
		t.Errorf("after the agent's write the focused field is %q", st)
	}
	ss = slidesWait(t, e, n.NoteID, deck, "the agent's slide and the person's notes", func(ss []note.Slide) bool {
		return slices.Equal(slidesTitles(ss), []string{"The problem", "One editor", "From the agent"}) && ss[1].Notes == "Pause here for questions." && ss[1].Theme == "ocean"
	})
	agentSlide := ss[2].ID
	if msg := run(t, ctx, "notice", chromedp.Text(chromedp.CSS(`.sl-tab > .notice`))); !strings.Contains(msg, "test changed these slides while you were writing") {
		t.Errorf("after the agent's write the page says %q", msg)
	}
	do(t, ctx, "dismiss", browsertest.Click(chromedp.CSS(`.sl-tab > .notice button`)), chromedp.WaitNotPresent(chromedp.CSS(`.sl-tab > .notice`)))

	// Delete the agent's slide, confirmed in a dialog.
	do(t, ctx, "select the agent's slide", browsertest.Click(chromedp.CSS(`.sl-list .sl-item:nth-child(3) .sl-card`)),
		browsertest.Poll(`document.getElementById("sl-field-title")?.value === "From the agent"`))
	do(t, ctx, "delete", browsertest.Click(chromedp.CSS(`.sl-editor-head button.danger-text`)), chromedp.WaitVisible(chromedp.CSS(`dialog[open] [data-confirm-delete]`)))
	if msg := run(t, ctx, "dialog", chromedp.Text(chromedp.CSS(`dialog[open]`))); !strings.Contains(msg, "From the agent") {
		t.Errorf("the delete dialog says %q", msg)
	}
	accessible(t, ctx, "note-slides-delete")
	do(t, ctx, "cancel", browsertest.Click(chromedp.CSS(`dialog[open] button.secondary`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if ss, _ := slidesDeck(t, e, n.NoteID, deck); len(ss) != 3 {
		t.Fatalf("Cancel deleted a slide: %v", slidesTitles(ss))
	}
	do(t, ctx, "delete, confirmed", browsertest.Click(chromedp.CSS(`.sl-editor-head button.danger-text`)), chromedp.WaitVisible(chromedp.CSS(`dialog[open] [data-confirm-delete]`)),
		browsertest.Click(chromedp.CSS(`dialog[open] [data-confirm-delete]`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)), waitSaved())
	slidesWait(t, e, n.NoteID, deck, "after the delete", func(ss []note.Slide) bool {
		return len(ss) == 2 && !slices.ContainsFunc(ss, func(s note.Slide) bool { return s.ID == agentSlide })
	})
	if got := slidesCards(t, ctx); !slices.Equal(got, []string{"The problem", "One editor"}) {
		t.Errorf("after the delete the deck list shows %v", got)
	}

	// The person types in a title that someone else changes meanwhile:
	// the server orders them, so the person's text, saved after, stays,
	// and the page says whose title it replaced.
	do(t, ctx, "select the first slide", browsertest.Click(chromedp.CSS(`.sl-list .sl-item:nth-child(1) .sl-card`)),
		browsertest.Poll(`document.getElementById("sl-field-title")?.value === "The problem"`))
	do(t, ctx, "type in the title", chromedp.Focus(chromedp.ID("sl-field-title")), chromedp.KeyEvent(kb.End), insertText(" today"))
	_, v = slidesDeck(t, e, n.NoteID, deck)
	theirs := "The real problem"
	if _, err := e.Server.Service.UpdateSlide(context.Background(), pc, service.UpdateSlideArgs{SlideArgs: service.SlideArgs{NoteID: n.NoteID, TabID: deck, SlideID: first, Guard: service.Guard{ExpectedVersion: v}}, Title: &theirs}); err != nil {
		t.Fatal(err)
	}
	slidesWait(t, e, n.NoteID, deck, "the person's title saved after theirs", func(ss []note.Slide) bool { return len(ss) == 2 && ss[0].Title == "The problem today" })
	do(t, ctx, "saved", waitSaved())
	if n := run(t, ctx, "clashes", chromedp.Evaluate[int](`document.querySelectorAll(".sl-clash").length`)); n != 0 {
		t.Errorf("the page shows %d clashes for one field written by two", n)
	}
	if st := run(t, ctx, "kept", chromedp.Evaluate[string](`document.activeElement?.id + "=" + document.activeElement?.value`)); st != "sl-field-title=The problem today" {
		t.Errorf("after the other write the focused field is %q", st)
	}
	accessible(t, ctx, "note-slides-same-field")
	browsertest.Screenshot(t, ctx, "note-slides-same-field")

	// Text typed just before a reload is kept in the browser and saved
	// after it.
	do(t, ctx, "type notes and reload at once", chromedp.Focus(chromedp.ID("sl-field-notes")), chromedp.KeyEvent(kb.End, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		insertText(" Then the demo."), chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("sl-field-notes")), waitSaved())
	slidesWait(t, e, n.NoteID, deck, "the notes typed before the reload", func(ss []note.Slide) bool {
		return len(ss) == 2 && ss[0].Notes == "Open with the survey. Then the demo."
	})
	if got := run(t, ctx, "notes after the reload", chromedp.Evaluate[string](`document.getElementById("sl-field-notes").value`)); got != "Open with the survey. Then the demo." {
		t.Errorf("after the reload the notes field holds %q", got)
	}
	if kept := run(t, ctx, "kept drafts", chromedp.Evaluate[int](`Object.keys(localStorage).filter(k => k.startsWith("foundry.slides-draft:")).length`)); kept != 0 {
		t.Errorf("%d slide drafts are kept after the server has the text", kept)
	}

	// An agent replaces the whole deck (new slide IDs) while the person
	// types in a slide: the person's text is kept and can be added back;
	// the looks people set stay on the slide the agent kept by title.
	do(t, ctx, "select the second slide again", browsertest.Click(chromedp.CSS(`.sl-list .sl-item:nth-child(2) .sl-card`)),
		browsertest.Poll(`document.getElementById("sl-field-title")?.value === "One editor"`))
	do(t, ctx, "type in the body", chromedp.Focus(chromedp.ID("sl-field-body")), chromedp.KeyEvent(kb.End, chromedp.KeyModifiers(chromedp.ModifierCtrl)), insertText(" and review"))
	_, av = slidesDeck(t, e, n.NoteID, deck)
	r = servertest.MustCall(t, agent, "edit_note_tab", map[string]any{"note_id": n.NoteID, "tab_id": deck, "expected_version": av,
		"idempotency_key": "webslides-agent-2", "operation": "replace_tab_data", "data": map[string]any{"slides": []any{
			map[string]any{"title": "The problem today"}, map[string]any{"title": "One editor", "body": "Rewritten by the agent"}}}})
	if r.IsError {
		t.Fatalf("the agent's replace_tab_data: %s", r.Text)
	}
	do(t, ctx, "the lost text", chromedp.WaitVisible(chromedp.CSS(`.sl-lost`)))
	if msg := run(t, ctx, "lost", chromedp.Text(chromedp.CSS(`.sl-lost`))); !strings.Contains(msg, "One editor") || !strings.Contains(msg, "test deleted the slide") {
		t.Errorf("the page says %q", msg)
	}
	do(t, ctx, "add it back", browsertest.Click(chromedp.CSS(`.sl-lost button.secondary`)), chromedp.WaitNotPresent(chromedp.CSS(`.sl-lost`)), waitSaved())
	ss = slidesWait(t, e, n.NoteID, deck, "the text added back", func(ss []note.Slide) bool {
		return len(ss) == 3 && ss[2].Title == "One editor" && ss[2].Body == "People write here\n---\nAgents draft there and review"
	})
	if ss[1].Body != "Rewritten by the agent" || ss[1].Layout != "two-column" || ss[1].Theme != "ocean" {
		t.Errorf("the agent's slide is %+v: want its text, and the look the person set", ss[1])
	}

	// The five themes, one slide each, in every layout.
	_, v = slidesDeck(t, e, n.NoteID, deck)
	looks := []struct{ title, body, layout, theme string }{
		{"Decks that keep up", "Foundry · quarterly review", "title", "paper"},
		{"One editor", "People write here\n---\nAgents draft there", "two-column", "ocean"},
		{"Where the time goes", "- Reading sources\n- Rewriting slides\n- Chasing the latest numbers", "title-body", "ink"},
		{"Part two: the plan", "Three steps, one quarter", "section", "forest"},
		{"A reviewer", "The deck finally matched the research.", "quote", "sunset"},
	}
	for i, l := range looks {
		var id string
		if i < len(ss) {
			id = ss[i].ID
		} else {
			res, err := e.Server.Service.EditNoteTab(context.Background(), pc, service.EditTabArgs{NoteID: n.NoteID, TabID: deck, ExpectedVersion: v, Operation: "slide_add", Title: &l.title})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.SlideIDs) != 1 {
				t.Fatalf("slide_add answers slides %v, want the one it added", res.SlideIDs)
			}
			id, v = res.SlideIDs[0], res.Version
		}
		res, err := e.Server.Service.UpdateSlide(context.Background(), pc, service.UpdateSlideArgs{SlideArgs: service.SlideArgs{NoteID: n.NoteID, TabID: deck, SlideID: id, Guard: service.Guard{ExpectedVersion: v}},
			Title: &l.title, Body: &l.body, Layout: &l.layout, Theme: &l.theme})
		if err != nil {
			t.Fatal(err)
		}
		v = res.Version
	}
	do(t, ctx, "the themed deck arrives live", browsertest.Poll(`document.querySelectorAll(".sl-list .sl-item").length === 5 && document.querySelectorAll(".sl-list .sl-slide[data-theme=sunset]").length === 1`))
	do(t, ctx, "select the title slide", browsertest.Click(chromedp.CSS(`.sl-list .sl-item:nth-child(1) .sl-card`)), waitSaved())
	themesOnPage := run(t, ctx, "themes", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".sl-list .sl-slide")].map(s => s.dataset.theme)`))
	if !slices.Equal(themesOnPage, []string{"paper", "ocean", "ink", "forest", "sunset"}) {
		t.Errorf("the deck list's themes are %v", themesOnPage)
	}
	noOverflow(t, ctx, "note-slides-themes")
	accessible(t, ctx, "note-slides-themes")
	browsertest.Screenshot(t, ctx, "note-slides")
	do(t, ctx, "select the quote", browsertest.Click(chromedp.CSS(`.sl-list .sl-item:nth-child(5) .sl-card`)), waitSaved(),
		chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	browsertest.Screenshot(t, ctx, "note-slides-themes")

	// A phone's width: the deck above the editor, nothing sticks out.
	do(t, ctx, "phone width", browsertest.Phone(), chromedp.WaitVisible(chromedp.ID("sl-field-title")))
	if cols := run(t, ctx, "columns", chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".sl-split")).gridTemplateColumns`)); strings.Contains(cols, " ") {
		t.Errorf("on a phone the deck and the editor are not stacked: columns %q", cols)
	}
	noOverflow(t, ctx, "note-slides-phone")
	accessible(t, ctx, "note-slides-phone")
	browsertest.Screenshot(t, ctx, "note-slides-phone")
	do(t, ctx, "desktop again", browsertest.Desktop())
}
