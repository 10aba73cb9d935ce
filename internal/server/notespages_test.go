package server_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/service"
)

// notesReads is every GET /api/notes the page has sent, in order, as its
// query parameters (the Resource Timing entries of its fetches).
func notesReads(t *testing.T, ctx context.Context) []url.Values {
	t.Helper()
	urls := run(t, ctx, "the page's reads", chromedp.Evaluate[[]string](`performance.getEntriesByType("resource")
		.filter(e => e.initiatorType === "fetch" && new URL(e.name).pathname === "/api/notes").map(e => e.name)`))
	var out []url.Values
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u.Query())
	}
	return out
}

// rowCount waits until the Notes list shows n rows.
func rowCount(n int) chromedp.Action[chromedp.Void] {
	return browsertest.Poll(fmt.Sprintf(`document.querySelectorAll("#notes-list li.note").length === %d`, n))
}

// TestBrowserWebAppNotesPages: a workspace of 121 Notes lists its first 50,
// and "Show more Notes" reads the next page by the REST cursor until the
// last, the first Note of each page taking the focus; nothing is listed
// twice or left out. The search box asks the server, debounced (fewer reads
// than keys typed), and finds a Note that no page the list loaded held;
// clearing it lists the first page again.
func TestBrowserWebAppNotesPages(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	// 120 Notes besides the demo Note.
	for i := range 120 {
		if _, err := e.Server.Service.CreateNote(context.Background(), asOwner(e), service.CreateNoteArgs{Title: fmt.Sprintf("Field note %03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	all := notesOf(t, e)
	if len(all) != 121 {
		t.Fatalf("the service lists %d Notes, want 121", len(all))
	}

	do(t, ctx, "open the app", chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the first page", chromedp.WaitVisible(chromedp.ID("notes-list")), rowCount(50), chromedp.WaitVisible(chromedp.CSS(`button.more`)))
	first := listed(t, ctx)
	reads := notesReads(t, ctx)
	if len(reads) != 1 || reads[0].Get("limit") != "50" || reads[0].Has("cursor") || reads[0].Has("query") {
		t.Fatalf("the list's first read: %v; want one, of 50, without cursor or query", reads)
	}

	// A Note no page loaded so far holds, found by the server.
	var hidden string
	for title := range all {
		if !slices.Contains(first, title) && strings.HasPrefix(title, "Field note ") {
			hidden = title
			break
		}
	}
	query := strings.TrimPrefix(hidden, "Field ") // "note 117"
	do(t, ctx, "search", selectAll(`input[type=search]`), chromedp.KeyEvent(query), rowCount(1), waitText("#notes-list", hidden))
	searches := notesReads(t, ctx)[1:]
	if len(searches) == 0 || len(searches) >= len(query) || searches[len(searches)-1].Get("query") != query {
		t.Errorf("typing %q (%d keys) sent %d reads %v; want fewer than the keys, the last for %q", query, len(query), len(searches), searches, query)
	}
	for _, r := range searches {
		if !strings.HasPrefix(query, r.Get("query")) || r.Get("query") == "" {
			t.Errorf("a read while typing asks for %v, not a part of %q typed so far", r, query)
		}
	}
	if n := run(t, ctx, "Show more", chromedp.Evaluate[int](`document.querySelectorAll("button.more").length`)); n != 0 {
		t.Errorf("one Note found, and the page offers to show more")
	}
	do(t, ctx, "clear the search", selectAll(`input[type=search]`), chromedp.KeyEvent("\b"), rowCount(50), chromedp.WaitVisible(chromedp.CSS(`button.more`)))
	if got := listed(t, ctx); !slices.Equal(got, first) {
		t.Errorf("after the search the first page lists %q, want %q", got, first)
	}
	do(t, ctx, "scroll to its end", chromedp.Evaluate[chromedp.Void](`document.querySelector("button.more").scrollIntoView({block: "end"})`))
	noOverflow(t, ctx, "notes-pages")
	accessible(t, ctx, "notes-pages")
	browsertest.WindowScreenshot(t, ctx, "notes-pages")

	// Show more, page by page: each read carries the cursor the one before
	// answered, and the first Note it brought has the focus.
	before := len(notesReads(t, ctx))
	do(t, ctx, "show more", browsertest.Click(chromedp.CSS(`button.more`)), rowCount(100))
	do(t, ctx, "the focus", browsertest.Poll(`document.activeElement === document.querySelectorAll("#notes-list .note-title")[50]`))
	do(t, ctx, "show the last", browsertest.Click(chromedp.CSS(`button.more`)), rowCount(121), chromedp.WaitNotPresent(chromedp.CSS(`button.more`)))
	do(t, ctx, "the focus, with the button gone", browsertest.Poll(`document.activeElement === document.querySelectorAll("#notes-list .note-title")[100]`))
	more := notesReads(t, ctx)[before:]
	if len(more) != 2 || more[0].Get("cursor") == "" || more[1].Get("cursor") == "" || more[0].Get("cursor") == more[1].Get("cursor") || more[0].Has("query") {
		t.Errorf("Show more read %v; want two reads, each with its own cursor and no query", more)
	}
	got := listed(t, ctx)
	seen := map[string]bool{}
	for _, title := range got {
		if seen[title] {
			t.Errorf("%q is listed twice", title)
		}
		seen[title] = true
	}
	for title := range all {
		if !seen[title] {
			t.Errorf("%q is not listed", title)
		}
	}
}
