package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"foundry/internal/server"
	"foundry/internal/service"
)

// The web app's one save path, as the markdown tab uses it: a save the
// server did not receive (connection refused) goes again with the same
// Idempotency-Key and If-Match, so that a resend after a lost answer is
// answered once; a save refused because another tab changed meanwhile
// (412) goes again on the new version with a new key, and the text is
// saved.

// saveXSent is one PUT of the markdown tab's text as the page sent it.
type saveXSent struct{ key, ifMatch string }

// saveXWatch pauses every PUT of the markdown tab's text: the first fail
// ones fail as if the server were not there, the rest go on.
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
		header := func(name string) string {
			for k, v := range e.Request.Headers {
				if strings.EqualFold(k, name) {
					return fmt.Sprint(v)
				}
			}
			return ""
		}
		w.mu.Lock()
		w.sent = append(w.sent, saveXSent{header("Idempotency-Key"), header("If-Match")})
		refuse := len(w.sent) <= w.fail
		w.mu.Unlock()
		go func() {
			if refuse {
				_, _ = chromedp.Call(ctx, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonConnectionRefused})
			} else {
				_, _ = chromedp.Call(ctx, cdpfetch.ContinueRequest, cdpfetch.ContinueRequestParams{RequestID: e.RequestID})
			}
		}()
	})
	if err == nil {
		_, err = chromedp.Call(ctx, cdpfetch.Enable, cdpfetch.EnableParams{Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*/tabs/markdown/text*"}}})
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

func TestBrowserSavePath(t *testing.T) {
	e, ctx := startBrowserEnv(t, server.Config{})
	bg := context.Background()
	me := asOwner(e)
	do(t, ctx, "open the app", chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the Notes list", chromedp.WaitVisible(row("Welcome", "")))
	id := notesOf(t, e)["Welcome"].NoteID
	do(t, ctx, "open the Note", chromedp.Click(row("Welcome", ".note-title")), chromedp.WaitVisible(cmContent), waitSaved())
	_, v0 := serverText(t, e, id)

	// The first attempt does not reach the server: the page says the text
	// is not saved, and sends the same attempt again.
	w := saveXWatchPuts(t, ctx, 1)
	do(t, ctx, "type while the server is away", typeAtEnd("\nA line saved on the second try."),
		chromedp.Poll[chromedp.Void](`document.getElementById("save-state")?.innerText === "Not saved"`))
	do(t, ctx, "saved on the resend", waitSaved(), chromedp.WaitNotPresent(chromedp.CSS(".error-box")))
	puts := w.puts()
	if len(puts) != 2 {
		t.Fatalf("the page sent the text %d times (%v), want twice: the refused attempt and its resend", len(puts), puts)
	}
	if puts[0].key == "" || puts[0] != puts[1] {
		t.Errorf("the resend is %+v after %+v: want the same Idempotency-Key and If-Match", puts[1], puts[0])
	}
	if want := fmt.Sprintf("%q", fmt.Sprint(v0)); puts[0].ifMatch != want {
		t.Errorf("the save was based on If-Match %s, want %s (the version the tab was read at)", puts[0].ifMatch, want)
	}
	text, v1 := serverText(t, e, id)
	if !strings.HasSuffix(text, "A line saved on the second try.") || v1 != v0+1 {
		t.Fatalf("the server has version %d (from %d) with %q: want the text saved once", v1, v0, text)
	}

	// Another tab changes meanwhile: the next save, still based on v1,
	// meets a 412; the markdown tab is as the page had it, so the same
	// text goes again on the new version, with a new key.
	if _, err := e.Server.Service.CreateNoteTab(bg, me, service.CreateTabArgs{NoteID: id, ExpectedVersion: v1, TabType: "slides", Label: "Meanwhile"}); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "the new tab shows", chromedp.WaitVisible(chromedp.CSS(`.strip-bar [role=tab][data-tab-id^="slides-"]`)))
	before := len(w.puts())
	do(t, ctx, "type again", typeAtEnd("\nAnd one after the 412."), waitSaved())
	puts = w.puts()[before:]
	if len(puts) != 2 {
		t.Fatalf("after another tab changed, the page sent the text %d times (%v), want twice: the refused attempt and the one on the new version", len(puts), puts)
	}
	if puts[0].ifMatch != fmt.Sprintf("%q", fmt.Sprint(v1)) || puts[1].ifMatch != fmt.Sprintf("%q", fmt.Sprint(v1+1)) {
		t.Errorf("the saves were based on %s then %s, want %d then %d", puts[0].ifMatch, puts[1].ifMatch, v1, v1+1)
	}
	if puts[0].key == "" || puts[1].key == "" || puts[0].key == puts[1].key {
		t.Errorf("the save on the new version has key %q after %q: want a new key", puts[1].key, puts[0].key)
	}
	if text, v := serverText(t, e, id); !strings.HasSuffix(text, "And one after the 412.") || v != v1+2 {
		t.Errorf("the server has version %d with %q", v, text)
	}
}
