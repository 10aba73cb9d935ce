package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// The markdown tab's pushes (@codemirror/collab's protocol): a push the
// server did not receive (connection refused) goes again as it was, on the
// same revision with the same change sets, and the server takes it once;
// another tab's change does not refuse it (the text's revision is its
// guard, not the Note's version); a push on a revision the text has moved
// past is refused, and the page pulls, rebases and pushes again.

// saveXSent is one push of the markdown text as the page sent it.
type saveXSent struct{ body string }

// saveXWatch pauses every push of the markdown text: the first fail ones
// fail as if the server were not there, the rest go on (pulls go on).
type saveXWatch struct {
	mu   sync.Mutex
	sent []saveXSent
	fail int
}

func saveXWatchPuts(t *testing.T, ctx context.Context, fail int) *saveXWatch {
	t.Helper()
	w := &saveXWatch{fail: fail}
	err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*cdpfetch.EventRequestPaused)
		if !ok {
			return
		}
		refuse := false
		if e.Request.Method == "POST" {
			var body string
			for _, en := range e.Request.PostDataEntries {
				body += string(en.Bytes)
			}
			w.mu.Lock()
			w.sent = append(w.sent, saveXSent{body})
			refuse = len(w.sent) <= w.fail
			w.mu.Unlock()
		}
		go func() {
			if refuse {
				_, _ = chromedp.Call(ctx, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonConnectionRefused})
			} else {
				_, _ = chromedp.Call(ctx, cdpfetch.ContinueRequest, cdpfetch.ContinueRequestParams{RequestID: e.RequestID})
			}
		}()
	})
	if err == nil {
		_, err = chromedp.Call(ctx, cdpfetch.Enable, cdpfetch.EnableParams{Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*/api/notes/*/text*"}}})
	}
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *saveXWatch) puts() []saveXSent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]saveXSent(nil), w.sent...)
}

// saveXRev is the rev a push was based on.
func saveXRev(t *testing.T, p saveXSent) int64 {
	t.Helper()
	var b struct {
		Rev int64 `json:"rev"`
	}
	if err := json.Unmarshal([]byte(p.body), &b); err != nil {
		t.Fatalf("a push's body %q: %v", p.body, err)
	}
	return b.Rev
}

func TestBrowserSavePath(t *testing.T) {
	e, ctx := startBrowserEnv(t, server.Config{})
	bg := context.Background()
	me := asOwner(e)
	// The live stream comes from the page itself, for blockURLs to
	// cut (a SharedWorker's requests are not the tab's).
	do(t, ctx, "no shared worker", withoutSharedWorker())
	do(t, ctx, "open the app", chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the Notes list", chromedp.WaitVisible(row("Welcome", "")))
	id := notesOf(t, e)["Welcome"].NoteID
	// The live stream is cut: the page learns of others' writes only by
	// its pushes being refused.
	do(t, ctx, "cut the live stream", blockURLs(liveURLs))
	do(t, ctx, "open the Note", chromedp.Click(row("Welcome", ".note-title")), chromedp.WaitVisible(cmContent), waitSaved())
	_, v0 := serverText(t, e, id)
	rev0 := saveXTextRev(t, e, id)

	// The first attempt does not reach the server: the page says it is
	// offline, and sends the same push again.
	w := saveXWatchPuts(t, ctx, 1)
	do(t, ctx, "type while the server is away", typeAtEnd("\nA line saved on the second try."),
		chromedp.Poll[chromedp.Void](`document.getElementById("save-state")?.innerText === "Offline: kept here"`))
	do(t, ctx, "saved on the resend", waitSaved(), chromedp.WaitNotPresent(chromedp.CSS(".error-box")))
	puts := w.puts()
	if len(puts) != 2 {
		t.Fatalf("the page pushed %d times (%v), want twice: the refused attempt and its resend", len(puts), puts)
	}
	if puts[0] != puts[1] || saveXRev(t, puts[0]) != rev0 {
		t.Errorf("the resend is %+v after %+v: want the same push, on rev %d", puts[1], puts[0], rev0)
	}
	text, v1 := serverText(t, e, id)
	if !strings.HasSuffix(text, "A line saved on the second try.") || v1 != v0+1 {
		t.Fatalf("the server has version %d (from %d) with %q: want the text saved once", v1, v0, text)
	}
	rev1 := saveXTextRev(t, e, id)

	// Another tab changes meanwhile: the text's revision is the same, so
	// the next push is taken at once.
	if _, err := e.Server.Service.CreateNoteTab(bg, me, service.CreateTabArgs{NoteID: id, ExpectedVersion: v1, TabType: "slides", Label: "Meanwhile"}); err != nil {
		t.Fatal(err)
	}
	before := len(w.puts())
	do(t, ctx, "type again", typeAtEnd("\nAnd one after another tab changed."), waitSaved())
	if puts = w.puts()[before:]; len(puts) != 1 || saveXRev(t, puts[0]) != rev1 {
		t.Fatalf("after another tab changed, the page pushed %v: want once, on rev %d", puts, rev1)
	}
	rev2 := saveXTextRev(t, e, id)

	// An agent changes the text meanwhile: the push on the old revision is
	// refused; the page pulls the agent's change and pushes again on the
	// revision after it, and both are kept.
	agentWrites(t, e, id, func(s string) string { return "An agent's first line.\n" + s })
	before = len(w.puts())
	do(t, ctx, "type after the agent", typeAtEnd("\nAnd one after the agent."))
	savedOnServer(t, ctx, e, id)
	if puts = w.puts()[before:]; len(puts) != 2 || saveXRev(t, puts[0]) != rev2 || saveXRev(t, puts[1]) != rev2+1 {
		t.Errorf("after the agent wrote, the page pushed %v: want on rev %d (refused), then on %d", puts, rev2, rev2+1)
	}
	if text, _ := serverText(t, e, id); !strings.HasPrefix(text, "An agent's first line.\n") || !strings.HasSuffix(text, "And one after the agent.") {
		t.Errorf("the server has %q", text)
	}
}

// saveXTextRev is the markdown text's revision on the server.
func saveXTextRev(t *testing.T, e *servertest.Env, id string) int64 {
	t.Helper()
	c, err := e.Server.Service.ReadNoteTab(context.Background(), asOwner(e), service.TabArgs{NoteID: id, TabID: "markdown"})
	if err != nil || c.TextRev == nil {
		t.Fatalf("the markdown tab's revision: %v", err)
	}
	return *c.TextRev
}
