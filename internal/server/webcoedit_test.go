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
	"foundry/internal/server"
	"foundry/internal/server/servertest"
)

// Two people edit the markdown tab of one Note at once, live: what each
// types reaches the other as they type (@codemirror/collab's protocol:
// change sets pushed and pulled by the text's revision), nothing anyone
// typed is lost or doubled, every page ends with the server's text, no
// one is asked to choose between texts, and each sees where the other is
// (their cursor, in their colour, with their name).

// coeditLine is the editor's line i (0-based), in its shadow root.
func coeditLine(i int) chromedp.Action[chromedp.Void] {
	return browsertest.Click(chromedp.JSPath(fmt.Sprintf(`document.querySelector(".md-editor").shadowRoot.querySelectorAll(".cm-line")[%d]`, i)))
}

// coeditState is what the page's editor says of its syncing: the text
// revision it has, and how many of its change sets the server has not
// confirmed yet.
func coeditState(t *testing.T, ctx context.Context) string {
	t.Helper()
	return run(t, ctx, "sync state", chromedp.Evaluate[string](`(() => { const h = document.querySelector(".md-editor"); return "rev " + h?.dataset.rev + ", pending " + h?.dataset.pending + ", " + document.getElementById("save-state")?.innerText; })()`))
}

// coeditConverged waits until both pages hold the server's text, with
// nothing of theirs unconfirmed, and answers it.
func coeditConverged(t *testing.T, e *servertest.Env, id string, pages ...context.Context) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		server, _ := serverText(t, e, id)
		same := true
		for _, p := range pages {
			pending := run(t, p, "pending", chromedp.Evaluate[string](`document.querySelector(".md-editor")?.dataset.pending ?? ""`))
			if pending != "0" || editorText(t, p) != server {
				same = false
			}
		}
		if same {
			return server
		}
		if time.Now().After(deadline) {
			for i, p := range pages {
				t.Errorf("page %d (%s) holds %q", i+1, coeditState(t, p), editorText(t, p))
			}
			t.Fatalf("the pages did not come to the server's text %q", server)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// coeditType types one key of alphabet after another into the page's
// editor, at a person's pace (about 6–7 a second), for d: what it typed.
func coeditType(ctx context.Context, alphabet string, d time.Duration) (string, error) {
	var typed strings.Builder
	end := time.Now().Add(d)
	for i := 0; time.Now().Before(end) && i < 1000; i++ {
		ch := string(alphabet[i%len(alphabet)])
		c, cancel := context.WithTimeout(ctx, stepTimeout)
		err := chromedp.Do(c, chromedp.KeyEvent(ch))
		cancel()
		if err != nil {
			return typed.String(), fmt.Errorf("key %d (%q): %v", i, ch, err)
		}
		typed.WriteString(ch)
		time.Sleep(150 * time.Millisecond)
	}
	return typed.String(), nil
}

// only is s without the characters that are not in alphabet.
func only(s, alphabet string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(alphabet, r) {
			return r
		}
		return -1
	}, s)
}

// remoteCaret is true once the page's editor draws the cursor of the
// person named name.
func remoteCaret(name string) chromedp.Action[chromedp.Void] {
	return browsertest.Poll(fmt.Sprintf(`!!document.querySelector(".md-editor")?.shadowRoot?.querySelector(%q)`, fmt.Sprintf(`.cm-remote-caret[data-name=%q]`, name)))
}

func TestBrowserCoEditMarkdown(t *testing.T) {
	// Not parallel: two people typing for 30 s keep two pages busy, and
	// the other browser tests run beside none of it.
	e, ana := startBrowserEnv(t, server.Config{})
	bea := browsertest.New(t) // a browser of her own: her own cookies
	member := roomsEMember(t, e, "Bea", "bea@example.org", "member")
	anaName := e.Owner.User.Name
	id := notesOf(t, e)["Welcome"].NoteID
	const start = "# Co-editing\n\nFirst paragraph:\n\nSecond paragraph:\n"
	agentWrites(t, e, id, func(string) string { return start })

	signInToNotes(t, ana, e)
	do(t, bea, "open the app", chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, bea, member.Email, ownerPassword)
	do(t, bea, "the Notes list", chromedp.WaitVisible(row("Welcome", "")))
	goTo(t, ana, e, "/notes/"+id)
	goTo(t, bea, e, "/notes/"+id)
	for _, p := range []context.Context{ana, bea} {
		if got := editorText(t, p); got != start {
			t.Fatalf("the editor opens on %q, want %q", got, start)
		}
	}

	// Each is in the Note: the header says who else is.
	do(t, ana, "Bea in the header", browsertest.Poll(`!!document.querySelector('#note-peers [data-person="Bea"]')`))
	do(t, bea, "Ana in the header", browsertest.Poll(fmt.Sprintf(`!!document.querySelector('#note-peers [data-person=%q]')`, anaName)))

	const lower, upper = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	typeBoth := func(round string) (string, string) {
		t.Helper()
		var wg sync.WaitGroup
		var typedA, typedB string
		var errA, errB error
		wg.Add(2)
		go func() { defer wg.Done(); typedA, errA = coeditType(ana, lower, 30*time.Second) }()
		go func() { defer wg.Done(); typedB, errB = coeditType(bea, upper, 30*time.Second) }()
		wg.Wait()
		if errA != nil || errB != nil {
			t.Fatalf("%s: typing: %v, %v", round, errA, errB)
		}
		t.Logf("%s: Ana typed %d characters, Bea %d", round, len(typedA), len(typedB))
		return typedA, typedB
	}
	noCard := func(round string) {
		t.Helper()
		for _, p := range []context.Context{ana, bea} {
			if n := run(t, p, "cards", chromedp.Evaluate[int](`document.querySelectorAll(".conflict, .draft-offer, .error-box").length`)); n != 0 {
				t.Errorf("%s: the page shows %d conflict, draft or error boxes", round, n)
			}
		}
	}

	// Round 1: each in a paragraph of their own, at once, for 30 s.
	do(t, ana, "Ana at the end of the first paragraph", coeditLine(2), chromedp.KeyEvent(kb.End))
	do(t, bea, "Bea at the end of the second paragraph", coeditLine(4), chromedp.KeyEvent(kb.End))
	typedA, typedB := typeBoth("different paragraphs")
	text := coeditConverged(t, e, id, ana, bea)
	want := "# Co-editing\n\nFirst paragraph:" + typedA + "\n\nSecond paragraph:" + typedB + "\n"
	if text != want {
		t.Errorf("after both typed in their own paragraphs the text is\n%q\nwant\n%q", text, want)
	}
	do(t, ana, "Bea's cursor on Ana's page", remoteCaret("Bea"))
	do(t, bea, "Ana's cursor on Bea's page", remoteCaret(anaName))
	noCard(t.Name() + " different paragraphs")

	// Round 2: both in the same paragraph, at the same place, at once.
	agentWrites(t, e, id, func(string) string { return start })
	for _, p := range []context.Context{ana, bea} {
		do(t, p, "the text again", editorHas("First paragraph:"), evalPoll(`document.querySelector(".md-editor").dataset.pending === "0"`))
	}
	coeditConverged(t, e, id, ana, bea)
	do(t, ana, "Ana at the end of the first paragraph", coeditLine(2), chromedp.KeyEvent(kb.End))
	do(t, bea, "Bea there too", coeditLine(2), chromedp.KeyEvent(kb.End))
	typedA, typedB = typeBoth("the same paragraph")
	text = coeditConverged(t, e, id, ana, bea)
	lines := strings.Split(text, "\n")
	if len(lines) != 6 || lines[0] != "# Co-editing" || lines[4] != "Second paragraph:" || !strings.HasPrefix(lines[2], "First paragraph:") {
		t.Fatalf("after both typed in the same paragraph the text is %q", text)
	}
	para := strings.TrimPrefix(lines[2], "First paragraph:")
	if got := only(para, lower); got != typedA {
		t.Errorf("Ana's typing in the shared paragraph reads %q, she typed %q", got, typedA)
	}
	if got := only(para, upper); got != typedB {
		t.Errorf("Bea's typing in the shared paragraph reads %q, she typed %q", got, typedB)
	}
	if len(para) != len(typedA)+len(typedB) {
		t.Errorf("the shared paragraph has %d characters, %d were typed: %q", len(para), len(typedA)+len(typedB), para)
	}
	do(t, ana, "Bea's cursor on Ana's page", remoteCaret("Bea"))
	do(t, bea, "Ana's cursor on Bea's page", remoteCaret(anaName))
	noCard(t.Name() + " same paragraph")

	// Bea selects a word: Ana sees it in Bea's colour.
	do(t, bea, "Bea selects", coeditLine(4), chromedp.KeyEvent(kb.End), chromedp.KeyEvent(kb.ArrowLeft, chromedp.KeyModifiers(chromedp.ModifierShift|chromedp.ModifierCtrl)))
	do(t, ana, "Bea's selection on Ana's page", browsertest.Poll(`[...document.querySelector(".md-editor").shadowRoot.querySelectorAll(".cm-remote-sel")].some(s => s.textContent.length > 0)`))
	noOverflow(t, ana, "coedit-markdown")
	browsertest.Screenshot(t, ana, "coedit-markdown")

	// In a sheet: the cell Bea selects is outlined on Ana's page, and
	// Ana's header says Bea is in that tab.
	budget := run(t, ana, "the sheet tab", chromedp.Evaluate[string](`[...document.querySelectorAll("[role=tablist] [role=tab]")].find(b => b.innerText.includes("Budget"))?.dataset.tabId ?? ""`))
	if budget == "" {
		t.Fatal("the Note has no Budget tab")
	}
	openSheet := browsertest.Click(chromedp.CSS(fmt.Sprintf(`[role=tab][data-tab-id=%q]`, budget)))
	do(t, bea, "Bea opens the sheet", openSheet, waitText(".tabpanel", "Hosting"), sheetxClickCell(2, 1))
	do(t, ana, "Ana's header: Bea in the sheet", browsertest.Poll(fmt.Sprintf(`!!document.querySelector('#note-peers [data-person="Bea"][data-tab-id=%q]')`, budget)))
	do(t, ana, "Ana opens the sheet", openSheet, waitText(".tabpanel", "Hosting"))
	do(t, ana, "Bea's cell outlined", browsertest.Poll(`!!document.querySelector('.sheet-grid .rgCell.peer-cell[data-peer="Bea"][data-rgrow="2"][data-rgcol="1"]')`))
	do(t, bea, "Bea moves down", chromedp.KeyEvent(kb.ArrowDown))
	do(t, ana, "Bea's cell follows", browsertest.Poll(`!!document.querySelector('.sheet-grid .rgCell.peer-cell[data-peer="Bea"][data-rgrow="3"][data-rgcol="1"]') && !document.querySelector('.sheet-grid .rgCell.peer-cell[data-rgrow="2"]')`))
	browsertest.Screenshot(t, ana, "coedit-sheet-presence")
}
