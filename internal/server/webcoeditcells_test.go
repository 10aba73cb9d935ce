package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
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

// coeditTyping is how long two people type at once in these tests.
const coeditTyping = 30 * time.Second

// coeditPair is the owner (Ada) and a member (Bo), each signed in on a
// page of their own.
func coeditPair(t *testing.T) (e *servertest.Env, ada, bo context.Context) {
	t.Helper()
	e, ada = startBrowserEnv(t, server.Config{})
	signInToNotes(t, ada, e)
	u := roomsEMember(t, e, "Bo", "bo@example.org", "member")
	bo = browsertest.New(t)
	do(t, bo, "Bo opens the app", chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, bo, u.Email, ownerPassword)
	do(t, bo, "Bo's Notes list", chromedp.WaitVisible(row("Welcome", "")))
	return e, ada, bo
}

// together runs each person's typing at once and fails on the first
// error either met.
func together(t *testing.T, fns ...func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(fns))
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func steps(ctx context.Context, what string, a ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, a...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// TestBrowserCoEditSheet: two people write two cells of one sheet at once
// for 30 s, each appending to their cell: every write of each lands (the
// cell ends holding every round), both pages end showing both cells
// as the server has them, and neither is told of a conflict. Then both
// write one cell at once: the later write stays, and the person whose
// value went is told who replaced it and with what.
func TestBrowserCoEditSheet(t *testing.T) {
	// Not parallel: two people typing for 30 s keep two pages busy, and
	// the other browser tests run beside none of it.
	e, ada, bo := coeditPair(t)
	id, tab := sheetxNote(t, e, "Budget together")
	first := strings.SplitN(sheetxSheets(t, e, id, tab)[0], "=", 2)[0]
	for _, p := range []context.Context{ada, bo} {
		do(t, p, "open the sheet", chromedp.Navigate(e.URL+"/notes/"+id+"?tab="+tab), browsertest.Poll(sheetxDOMCell(0, 0)+` !== null`))
	}
	var lastAda, lastBo string
	typist := func(ctx context.Context, who string, col int, last *string) func() error {
		return func() error {
			end := time.Now().Add(coeditTyping)
			for i := 1; i <= 60 && time.Now().Before(end); i++ {
				// Enter opens the cell's editor at the end of its text: each
				// round appends, so the cell ends holding every round.
				v := fmt.Sprintf("%s %d;", who, i)
				if err := steps(ctx, who+" types "+v, sheetxType(0, col, v)); err != nil {
					return err
				}
				*last += v
				time.Sleep(300 * time.Millisecond)
			}
			return nil
		}
	}
	together(t, typist(ada, "ada", 0, &lastAda), typist(bo, "bo", 1, &lastBo))
	last := map[string]string{"ada": lastAda, "bo": lastBo}
	var got []any
	for i := 0; i < 100; i++ {
		if got = sheetxCells(t, e, id, tab, first, 0, 0, 1, 2)[0]; len(got) == 2 && got[0] == last["ada"] && got[1] == last["bo"] {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(got) != 2 || got[0] != last["ada"] || got[1] != last["bo"] {
		t.Fatalf("the server has A1:B1 = %v; want %q, %q as typed last", got, last["ada"], last["bo"])
	}
	for name, p := range map[string]context.Context{"Ada": ada, "Bo": bo} {
		do(t, p, name+"'s page shows both cells", browsertest.Poll(fmt.Sprintf(`%s === %q && %s === %q`, sheetxDOMCell(0, 0), last["ada"], sheetxDOMCell(0, 1), last["bo"])))
		if msg := run(t, p, name+"'s notice", chromedp.Evaluate[string](`document.querySelector(".sheet-notice")?.innerText ?? ""`)); msg != "" {
			t.Errorf("%s's page says %q after writing different cells", name, msg)
		}
	}
	browsertest.Screenshot(t, ada, "coedit-sheet")

	// One cell, both at once: the server's order decides.
	do(t, ada, "Ada writes C1", sheetxType(0, 2, "ada's C1"))
	// (C1 was empty, so each one's text is the cell's.)
	sheetxWait(t, "Ada's C1 on the server", func() bool { return sheetxCells(t, e, id, tab, first, 0, 2, 1, 1)[0][0] == "ada's C1" })
	do(t, bo, "Bo writes C1 over Ada's", browsertest.Poll(sheetxDOMCell(0, 2)+` === "ada's C1"`), sheetxClickCell(0, 2), chromedp.KeyEvent(kb.Enter),
		browsertest.Poll(`!!document.activeElement?.matches(".sheet-grid revogr-edit input, .sheet-grid revogr-edit textarea")`),
		chromedp.Evaluate[chromedp.Void](`document.activeElement.select()`), insertText("bo's C1"), chromedp.KeyEvent(kb.Enter))
	sheetxWait(t, "Bo's C1 on the server", func() bool { return sheetxCells(t, e, id, tab, first, 0, 2, 1, 1)[0][0] == "bo's C1" })
	do(t, ada, "Ada is told", browsertest.Poll(`(document.querySelector(".sheet-notice")?.innerText ?? "").includes("replaced your C1")`),
		browsertest.Poll(sheetxDOMCell(0, 2)+` === "bo's C1"`))
	msg := run(t, ada, "Ada's notice", chromedp.Evaluate[string](`document.querySelector(".sheet-notice").innerText`))
	if !strings.Contains(msg, "Bo") || !strings.Contains(msg, "ada's C1") || !strings.Contains(msg, "bo's C1") {
		t.Errorf("Ada's page says %q; want who replaced C1 and with what", msg)
	}
	browsertest.Screenshot(t, ada, "coedit-sheet-replaced")
}

// TestBrowserCoEditSlides: two people type into two fields of one slide
// at once for 30 s (Ada the title, Bo the body): both fields end exactly
// as each typed them, on the server and on both pages, with no clash.
// Then both write one field: the later write stays and the one whose
// text went is told who replaced it.
func TestBrowserCoEditSlides(t *testing.T) {
	// Not parallel: two people typing for 30 s keep two pages busy, and
	// the other browser tests run beside none of it.
	e, ada, bo := coeditPair(t)
	ctx := context.Background()
	n, err := e.Server.Service.CreateNote(ctx, asOwner(e), service.CreateNoteArgs{Title: "Deck together", Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := e.Server.Service.CreateNoteTab(ctx, asOwner(e), service.CreateTabArgs{NoteID: n.NoteID, ExpectedVersion: n.Version, TabType: "slides", Label: "Deck"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Server.Service.EditNoteTab(ctx, asOwner(e), service.EditTabArgs{NoteID: n.NoteID, TabID: tab.TabID, ExpectedVersion: n.Version + 1, Operation: "slide_add", Title: new("T"), Body: new("B")}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []context.Context{ada, bo} {
		do(t, p, "open the deck", chromedp.Navigate(e.URL+"/notes/"+n.NoteID+"?tab="+tab.TabID), browsertest.Poll(`document.getElementById("sl-field-title")?.value === "T"`))
	}
	title, body := "T", "B"
	typist := func(p context.Context, field, letters string, typed *string) func() error {
		return func() error {
			if err := steps(p, "focus "+field, chromedp.Focus(chromedp.ID("sl-field-"+field)), browsertest.Poll(fmt.Sprintf(`document.activeElement?.id === "sl-field-%s"`, field)),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const f = document.getElementById("sl-field-%s"); f.setSelectionRange(f.value.length, f.value.length); })()`, field))); err != nil {
				return err
			}
			end := time.Now().Add(coeditTyping)
			for i := 0; i < 200 && time.Now().Before(end); i++ {
				s := string(letters[i%len(letters)])
				if err := steps(p, "type in "+field, insertText(s)); err != nil {
					return err
				}
				*typed += s
				time.Sleep(150 * time.Millisecond)
			}
			return nil
		}
	}
	together(t, typist(ada, "title", "abcdefghij", &title), typist(bo, "body", "0123456789", &body))
	typed := map[string]string{"title": title, "body": body}
	slidesWait(t, e, n.NoteID, tab.TabID, "both fields on the server", func(ss []note.Slide) bool {
		return len(ss) == 1 && ss[0].Title == typed["title"] && ss[0].Body == typed["body"]
	})
	for name, p := range map[string]context.Context{"Ada": ada, "Bo": bo} {
		do(t, p, name+"'s page shows both fields", browsertest.Poll(fmt.Sprintf(`document.getElementById("sl-field-title").value === %q && document.getElementById("sl-field-body").value === %q`, typed["title"], typed["body"])),
			waitSaved())
		if n := run(t, p, name+"'s clashes", chromedp.Evaluate[int](`document.querySelectorAll(".sl-clash").length`)); n != 0 {
			t.Errorf("%s's page shows %d clashes after typing in different fields", name, n)
		}
	}
	browsertest.Screenshot(t, bo, "coedit-slides")

	// One field, one after the other: the later stays; Ada is told.
	do(t, ada, "Ada writes the notes", chromedp.Focus(chromedp.ID("sl-field-notes")), insertText("Ada's notes"), waitSaved())
	slidesWait(t, e, n.NoteID, tab.TabID, "Ada's notes", func(ss []note.Slide) bool { return ss[0].Notes == "Ada's notes" })
	do(t, bo, "Bo sees them and rewrites them", browsertest.Poll(`document.getElementById("sl-field-notes").value === "Ada's notes"`),
		selectAll("#sl-field-notes"), insertText("Bo's notes"), waitSaved())
	slidesWait(t, e, n.NoteID, tab.TabID, "Bo's notes", func(ss []note.Slide) bool { return ss[0].Notes == "Bo's notes" })
	do(t, ada, "Ada is told", browsertest.Poll(`document.body.innerText.includes("replaced your speaker notes")`))
	if msg := run(t, ada, "the notice", chromedp.Evaluate[string](`[...document.querySelectorAll("[role=status]")].map(e => e.innerText).join(" | ")`)); !strings.Contains(msg, "Bo") || !strings.Contains(msg, "Bo's notes") {
		t.Errorf("Ada's page says %q; want who replaced the notes and with what", msg)
	}
}
