package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"foundry/internal/auth"
	"foundry/internal/browsertest"
	"foundry/internal/mcpclient"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
)

// The Needs your approval page and the navigation's badge run against the
// proposals REST as its contract describes it: Chromium's Fetch domain
// answers every /api/proposals… request of the tab, and its live stream
// (the proposals topic), from inboxXFake, while the rest (sign-in,
// /api/me, the bundle) is the real server. Connected
// runs against the real server alone.

// inboxXPost is one decision the page sent.
type inboxXPost struct {
	path, csrf string
}

// inboxXAnswer is a forced answer to a decision.
type inboxXAnswer struct {
	status int
	body   map[string]any
}

// inboxXFake is the proposals REST: the pending proposals (the stream's
// count is how many), their files, and what the page sent.
type inboxXFake struct {
	mu         sync.Mutex
	pending    []map[string]any
	files      map[string][]map[string]any
	forced     map[string]inboxXAnswer
	posts      []inboxXPost
	pollOK     bool // GET /api/proposals/count answers (else 503)
	eventsDown bool // GET /api/live answers 404
	listDown   bool // GET /api/proposals answers 500
	streams    int  // live stream requests answered
}

func inboxXNewFake() *inboxXFake {
	return &inboxXFake{files: map[string][]map[string]any{}, forced: map[string]inboxXAnswer{}}
}

func (f *inboxXFake) add(p map[string]any, files map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var list []map[string]any
	for path, text := range files {
		list = append(list, map[string]any{"path": path, "text": text, "bytes": len(text)})
	}
	slices.SortFunc(list, func(a, b map[string]any) int { return strings.Compare(a["path"].(string), b["path"].(string)) })
	f.files[p["proposal_id"].(string)] = list
	p["file_count"] = len(list)
	f.pending = append(f.pending, p)
}

func (f *inboxXFake) decisions() []inboxXPost {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]inboxXPost(nil), f.posts...)
}

func (f *inboxXFake) streamed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams
}

func inboxXJSON(status int, v any) (int, string, []byte) {
	b, _ := json.Marshal(v)
	ctype := "application/json"
	if status >= 400 {
		ctype = "application/problem+json"
	}
	return status, ctype, b
}

// serve answers one request as the contract says.
func (f *inboxXFake) serve(method, raw string, header map[string]any) (int, string, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, err := url.Parse(raw)
	if err != nil {
		return inboxXJSON(400, map[string]any{"detail": "bad URL"})
	}
	rest := strings.TrimPrefix(u.Path, "/api/proposals")
	switch {
	case u.Path == "/api/live" && method == "GET":
		if f.eventsDown || u.Query().Get("topic") != "proposals" {
			return inboxXJSON(404, map[string]any{"detail": "not here"})
		}
		f.streams++
		// The answer ends after the count; the page opens the stream
		// again a second later and gets the count of that moment.
		return 200, "text/event-stream", fmt.Appendf(nil, "retry: 250\nevent: ready\ndata: {\"cursor\":\"\",\"topics\":[\"proposals\"]}\n\nevent: proposals\ndata: {\"pending\":%d}\n\n", len(f.pending))
	case rest == "/count" && method == "GET":
		if !f.pollOK {
			return inboxXJSON(503, map[string]any{"detail": "the count is unavailable"})
		}
		return inboxXJSON(200, map[string]any{"pending": len(f.pending)})
	case rest == "" && method == "GET" && f.listDown:
		return inboxXJSON(500, map[string]any{"detail": "The proposals cannot be listed right now; try again in a moment."})
	case rest == "" && method == "GET":
		if s := u.Query().Get("status"); s != "" && s != "pending" {
			return inboxXJSON(200, map[string]any{"proposals": []any{}})
		}
		return inboxXJSON(200, map[string]any{"proposals": f.pending})
	}
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	id, _ := url.PathUnescape(parts[0])
	i := -1
	for j, p := range f.pending {
		if p["proposal_id"] == id {
			i = j
		}
	}
	if i < 0 {
		return inboxXJSON(404, map[string]any{"detail": "no such proposal"})
	}
	p := f.pending[i]
	switch {
	case len(parts) == 1 && method == "GET":
		d := map[string]any{}
		for k, v := range p {
			d[k] = v
		}
		d["files"], d["warnings"] = f.files[id], []any{}
		return inboxXJSON(200, d)
	case len(parts) == 2 && method == "POST" && (parts[1] == "approve" || parts[1] == "decline"):
		csrf, _ := header["X-CSRF-Token"].(string)
		if csrf == "" {
			csrf, _ = header["x-csrf-token"].(string)
		}
		f.posts = append(f.posts, inboxXPost{path: u.Path, csrf: csrf})
		if a, ok := f.forced[id]; ok {
			if a.status == http.StatusConflict {
				f.pending = append(f.pending[:i:i], f.pending[i+1:]...)
			}
			return inboxXJSON(a.status, a.body)
		}
		f.pending = append(f.pending[:i:i], f.pending[i+1:]...)
		status := map[string]string{"approve": "approved", "decline": "declined"}[parts[1]]
		return inboxXJSON(200, map[string]any{"proposal_id": id, "status": status, "room_id": p["room_id"], "instance_id": "inst_" + id, "version": 7})
	}
	return inboxXJSON(405, map[string]any{"detail": "method not allowed"})
}

// inboxXIntercept answers the tab's /api/proposals… and /api/live requests
// from f.
func inboxXIntercept(t *testing.T, ctx context.Context, f *inboxXFake) {
	t.Helper()
	paused := make(chan *cdpfetch.EventRequestPaused, 256)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*cdpfetch.EventRequestPaused); ok {
			select {
			case paused <- e:
			default: // the page floods: the request stays paused and fails the step waiting for it
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-paused:
				status, ctype, body := f.serve(e.Request.Method, e.Request.URL, e.Request.Headers)
				_, _ = chromedp.Call(ctx, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{
					RequestID: e.RequestID, ResponseCode: int64(status), Body: body,
					ResponseHeaders: []*cdpfetch.HeaderEntry{{Name: "Content-Type", Value: ctype}, {Name: "Cache-Control", Value: "no-store"}},
				})
			}
		}
	}()
	if _, err := chromedp.Call(ctx, cdpfetch.Enable, cdpfetch.EnableParams{Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*/api/proposals*"}, {URLPattern: "*/api/live?*"}}}); err != nil {
		t.Fatal(err)
	}
}

// inboxXCard is a JSPath to part of the card of the app named name (the
// card itself for part "").
func inboxXCard(name, part string) chromedp.JSPath {
	find := fmt.Sprintf(`[...document.querySelectorAll("article.proposal-card")].find(a => a.querySelector(".proposal-head h2")?.innerText.trim() === %q)`, name)
	if part == "" {
		return chromedp.JSPath(find)
	}
	return chromedp.JSPath(fmt.Sprintf(`%s?.querySelector(%q)`, find, part))
}

func inboxXCards(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return run(t, ctx, "cards", chromedp.Evaluate[[]string](`[...document.querySelectorAll("article.proposal-card .proposal-head h2")].map(h => h.innerText.trim())`))
}

const inboxXApp = `import { useState } from "react";
import { useStoredState } from "@app/storage";
import { Button } from "./Button";
import "./styles.css";

// A counter that remembers its count in the browser.
export default function App() {
  const [count, setCount] = useStoredState("count", 0);
  const [label] = useState("Clicked");
  return (
    <main className="counter">
      <h1>{label} {count} times</h1>
      <Button onClick={() => setCount(count + 1)}>Add one</Button>
    </main>
  );
}
`

const inboxXCSS = `.counter { font-family: system-ui; padding: 1rem; }
.counter h1 { color: #2852c8; }
`

// inboxXLong is a file longer than its scroll box.
func inboxXLong() string {
	var b strings.Builder
	b.WriteString("import type { ReactNode } from \"react\";\n\n")
	b.WriteString("export function Button(props: { onClick: () => void; children: ReactNode }) {\n")
	for i := range 60 {
		fmt.Fprintf(&b, "  const step%d = %d; // a line to scroll past\n", i, i*i)
	}
	b.WriteString("  return <button type=\"button\" onClick={props.onClick}>{props.children}</button>;\n}\n")
	return b.String()
}

// TestBrowserApprovals: the inbox starts empty; an agent's proposals
// arrive through the count's event stream (the badge says how many and the
// cards appear without a reload); a card shows every file in full,
// highlighted, each in its own scroll box; a compile error shows file,
// line, column, text and the line before the buttons; a repository
// proposal links its pinned code and says no bundle is built; Approve sends
// POST …/approve with the session's CSRF token and the card goes; Decline
// asks first (Cancel sends nothing) and the card goes; a 409 says who
// decided and how and the card goes; a 403 says who may decide and keeps
// the card; when the stream is refused the badge falls back to polling;
// a refused list shows the server's words and Try again.
// axe-core on each state; on a phone nothing overflows.
func TestBrowserApprovals(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	// The live stream comes from the page itself (a SharedWorker's
	// requests are not the tab's, for Chromium's Fetch domain to answer).
	do(t, ctx, "no shared worker", withoutSharedWorker())
	f := inboxXNewFake()
	inboxXIntercept(t, ctx, f)

	do(t, ctx, "open the inbox", chromedp.Navigate(e.URL+"/approvals"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the empty inbox", chromedp.WaitVisible(chromedp.ID("approvals-title")), chromedp.WaitVisible(chromedp.ID("approvals-empty")))
	if u := location(t, ctx); u.Path != "/approvals" {
		t.Fatalf("after signing in: at %s, want /approvals", u)
	}
	if text := pageText(t, ctx); !strings.Contains(text, "Nothing needs your approval") || !strings.Contains(text, "runs nowhere") {
		t.Errorf("the empty inbox says:\n%s", text)
	}
	if cur := run(t, ctx, "nav", chromedp.Text(chromedp.CSS(`.sidenav [aria-current=page]`))); !strings.HasPrefix(cur, "Needs your approval") {
		t.Errorf("the nav marks %q as the current page", cur)
	}
	if n := run(t, ctx, "badge", chromedp.Evaluate[int](`document.querySelectorAll(".nav-badge").length`)); n != 0 {
		t.Errorf("with nothing pending the nav shows %d badges", n)
	}
	if f.streamed() == 0 {
		t.Error("the page never opened GET /api/live?topic=proposals")
	}
	noOverflow(t, ctx, "approvals-empty")
	accessible(t, ctx, "approvals-empty")
	browsertest.Screenshot(t, ctx, "approvals-empty")

	// Proposals arrive: only the stream tells (the count endpoint is down).
	now := time.Now().UTC()
	long := inboxXLong()
	f.add(map[string]any{
		"proposal_id": "prop_counter", "room_id": e.RoomID, "room_name": "Team room", "name": "Counter", "kind": "snippet", "status": "pending",
		"proposed_by": map[string]any{"kind": "agent", "id": "conn_1", "name": "Claude"}, "proposed_at": now.Add(-3 * time.Minute).Format(time.RFC3339),
		"compile": map[string]any{"ok": true, "errors": []any{}},
	}, map[string]string{"src/App.tsx": inboxXApp, "src/Button.tsx": long, "src/styles.css": inboxXCSS})
	f.add(map[string]any{
		"proposal_id": "prop_broken", "room_id": e.RoomID, "room_name": "Team room", "name": "Broken clock", "kind": "snippet", "status": "pending",
		"proposed_by": map[string]any{"kind": "agent", "id": "conn_2", "name": "Cursor"}, "proposed_at": now.Add(-time.Hour).Format(time.RFC3339),
		"compile": map[string]any{"ok": false, "errors": []any{map[string]any{
			"file": "src/App.tsx", "line": 2, "column": 9, "text": `Could not resolve "left-pad"`, "line_text": `import pad from "left-pad";`}}},
	}, map[string]string{"src/App.tsx": "// Shows the time.\nimport pad from \"left-pad\";\nexport default () => <p>{pad(\"1\", 2)}</p>;\n"})
	f.add(map[string]any{
		"proposal_id": "prop_wiki", "room_id": e.RoomID, "room_name": "Team room", "name": "Team wiki", "kind": "repository", "status": "pending",
		"proposed_by": map[string]any{"kind": "agent", "id": "conn_1", "name": "Claude"}, "proposed_at": now.Add(-26 * time.Hour).Format(time.RFC3339),
		"compile":    nil,
		"repository": map[string]any{"repository_id": "repo_wiki", "name": "team-wiki", "version_id": "ver_7f3a"},
	}, map[string]string{"README.md": "# Team wiki\n\nPages for the team.\n"})
	f.add(map[string]any{
		"proposal_id": "prop_theirs", "room_id": "room_other", "room_name": "Design room", "name": "Palette", "kind": "snippet", "status": "pending",
		"proposed_by": map[string]any{"kind": "agent", "id": "conn_3", "name": "Zed"}, "proposed_at": now.Add(-10 * time.Second).Format(time.RFC3339),
		"compile": map[string]any{"ok": true, "errors": []any{}},
	}, map[string]string{"src/App.tsx": "export default function App() { return <p>Palette</p>; }\n"})
	f.mu.Lock()
	f.forced["prop_wiki"] = inboxXAnswer{http.StatusConflict, map[string]any{
		"type": "about:blank", "title": "Already decided", "status": "approved", "decided_by": "Ana", "detail": "This proposal was already approved by Ana."}}
	f.forced["prop_theirs"] = inboxXAnswer{http.StatusForbidden, map[string]any{
		"title": "Forbidden", "detail": "Only the Room's owner or a workspace owner decides on its proposals."}}
	f.mu.Unlock()

	do(t, ctx, "the cards arrive live",
		chromedp.WaitVisible(chromedp.CSS(`.nav-badge`)),
		waitText(".nav-badge", "4"),
		browsertest.Poll(`document.querySelectorAll("article.proposal-card").length === 4`),
	)
	if name := run(t, ctx, "badge name", chromedp.Evaluate[string](`document.querySelector('.sidenav a[href="/approvals"]').innerText.replace(/\s+/g, " ").trim() + " | " + document.querySelector(".nav-badge .sr-only").textContent`)); !strings.Contains(name, "4 pending") {
		t.Errorf("the badge reads %q, want it to say 4 pending", name)
	}
	if got := inboxXCards(t, ctx); strings.Join(got, ",") != "Counter,Broken clock,Team wiki,Palette" {
		t.Errorf("the cards are %v", got)
	}
	card := run(t, ctx, "Counter's card", chromedp.Text(inboxXCard("Counter", "")))
	for _, want := range []string{"Counter", "Snippet app", "Proposed by Claude", "Team room", "3 min ago", "Review all proposed files (3)", "Compiles without errors",
		"Approval makes this code available in the Room app launcher. Review the files before approving.", "Approve and create", "Decline"} {
		if !strings.Contains(card, want) {
			t.Errorf("Counter's card does not say %q:\n%s", want, card)
		}
	}
	noOverflow(t, ctx, "approvals")
	accessible(t, ctx, "approvals")
	browsertest.Screenshot(t, ctx, "approvals")

	// Every file in full, each in its own scroll box, highlighted.
	do(t, ctx, "open Counter's files",
		browsertest.Click(inboxXCard("Counter", "summary")),
		browsertest.Poll(`document.querySelectorAll("#p-prop_counter .code-box").length === 3`),
	)
	boxes := run(t, ctx, "the boxes", chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll("#p-prop_counter .code-box")].map(b => [b.dataset.path, b.innerText]))`))
	for path, want := range map[string]string{"src/App.tsx": inboxXApp, "src/Button.tsx": long, "src/styles.css": inboxXCSS} {
		if got, ok := boxes[path]; !ok {
			t.Errorf("no scroll box for %s (boxes: %v)", path, len(boxes))
		} else if strings.TrimRight(got, "\n") != strings.TrimRight(want, "\n") {
			t.Errorf("the box of %s shows:\n%s\nwant the file in full:\n%s", path, got, want)
		}
	}
	hl := run(t, ctx, "highlighting", chromedp.Evaluate[map[string]int](`(() => {
		const out = {};
		for (const b of document.querySelectorAll("#p-prop_counter .code-box")) {
			const plain = getComputedStyle(b).color;
			out[b.dataset.path] = [...b.querySelectorAll("[class^=tok-], [class*=' tok-']")].filter(s => getComputedStyle(s).color !== plain).length;
		}
		return out;
	})()`))
	for path, n := range hl {
		if n < 3 {
			t.Errorf("%s: %d highlighted tokens in a colour of their own, want keywords, strings, names coloured", path, n)
		}
	}
	if n := run(t, ctx, "keywords", chromedp.Evaluate[int](`[...document.querySelectorAll('#p-prop_counter .code-box[data-path="src/App.tsx"] .tok-keyword')].filter(s => ["import","export","function","return","const"].includes(s.textContent)).length`)); n < 5 {
		t.Errorf("App.tsx: %d keywords marked as keywords, want import, export, function, const and return", n)
	}
	scroll := run(t, ctx, "the long box scrolls", chromedp.Evaluate[[]int](`(() => {
		const b = document.querySelector('#p-prop_counter .code-box[data-path="src/Button.tsx"]');
		const before = b.scrollTop;
		b.scrollTop = 400;
		return [b.scrollHeight, b.clientHeight, before, Math.round(b.scrollTop), b.tabIndex];
	})()`))
	if scroll[0] <= scroll[1] || scroll[3] <= scroll[2] || scroll[4] != 0 {
		t.Errorf("Button.tsx's box: scrollHeight %d, clientHeight %d, scrollTop %d → %d, tabIndex %d; want a focusable box that scrolls", scroll[0], scroll[1], scroll[2], scroll[3], scroll[4])
	}
	run(t, ctx, "scroll back", chromedp.Evaluate[chromedp.Void](`document.querySelector('#p-prop_counter .code-box[data-path="src/Button.tsx"]').scrollTop = 0`))
	run(t, ctx, "to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	noOverflow(t, ctx, "approvals-card")
	accessible(t, ctx, "approvals-card")
	browsertest.Screenshot(t, ctx, "approvals-card")

	// A compile error: file, line, column, text and the line, before the buttons.
	broken := run(t, ctx, "Broken clock's compile result", chromedp.Text(inboxXCard("Broken clock", ".compile")))
	for _, want := range []string{"Does not compile", "src/App.tsx:2:9", `Could not resolve "left-pad"`, `import pad from "left-pad";`} {
		if !strings.Contains(broken, want) {
			t.Errorf("the compile error does not say %q:\n%s", want, broken)
		}
	}
	if before := run(t, ctx, "order", chromedp.Evaluate[bool](`(() => { const c = document.querySelector("#p-prop_broken"); return !!(c.querySelector(".compile").compareDocumentPosition(c.querySelector(".proposal-actions")) & Node.DOCUMENT_POSITION_FOLLOWING); })()`)); !before {
		t.Error("the compile result does not come before the buttons")
	}
	do(t, ctx, "open Broken clock's file", browsertest.Click(inboxXCard("Broken clock", "summary")), chromedp.WaitVisible(chromedp.CSS(`#p-prop_broken .code-line.is-error`)))
	if l := run(t, ctx, "the marked line", chromedp.Text(chromedp.CSS(`#p-prop_broken .code-line.is-error`))); !strings.Contains(l, `left-pad`) {
		t.Errorf("the line marked in error is %q, want line 2", l)
	}

	// A repository proposal links its pinned code and builds nothing.
	wiki := run(t, ctx, "the repository card", chromedp.Text(inboxXCard("Team wiki", "")))
	for _, want := range []string{"Repository app", "team-wiki", "ver_7f3a", "This path does not build or deploy a bundle.", "Review repository code before approving"} {
		if !strings.Contains(wiki, want) {
			t.Errorf("the repository card does not say %q:\n%s", want, wiki)
		}
	}
	do(t, ctx, "the repository's code", browsertest.Click(inboxXCard("Team wiki", "summary")), chromedp.WaitVisible(chromedp.CSS(`#p-prop_wiki .code-box[data-path="README.md"]`)))

	csrf := run(t, ctx, "the session's CSRF token", chromedp.Evaluate[string](`fetch("/api/me").then(r => r.json()).then(m => m.csrf_token)`, chromedp.EvalAwaitPromise))
	// Approve and create: one POST with the CSRF token; the card goes.
	do(t, ctx, "approve Counter",
		browsertest.Click(inboxXCard("Counter", "button.primary")),
		browsertest.Poll(`!document.querySelector("#p-prop_counter")`),
		waitText(".approval-notices", "“Counter” is approved"),
		waitText(".nav-badge", "3"),
	)
	if d := f.decisions(); len(d) != 1 || d[0].path != "/api/proposals/prop_counter/approve" || d[0].csrf == "" || d[0].csrf != csrf {
		t.Errorf("approving sent %+v, want one POST /api/proposals/prop_counter/approve with X-CSRF-Token %q", d, csrf)
	}

	// Decline asks first: Cancel sends nothing; Decline declines.
	do(t, ctx, "decline, then cancel",
		browsertest.Click(inboxXCard("Broken clock", "button.secondary")),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
	)
	if text := run(t, ctx, "dialog", chromedp.Text(chromedp.CSS(`dialog[open]`))); !strings.Contains(text, "Decline this proposal?") || !strings.Contains(text, "“Broken clock”") {
		t.Errorf("the confirmation says:\n%s", text)
	}
	accessible(t, ctx, "approvals-decline")
	do(t, ctx, "cancel", browsertest.Click(chromedp.CSS(`dialog[open] button.secondary`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if n := len(f.decisions()); n != 1 {
		t.Fatalf("Cancel sent a decision: %+v", f.decisions())
	}
	do(t, ctx, "decline for real",
		browsertest.Click(inboxXCard("Broken clock", "button.secondary")),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Poll(`!document.querySelector("#p-prop_broken")`),
		waitText(".approval-notices", "“Broken clock” is declined"),
	)
	if d := f.decisions(); len(d) != 2 || d[1].path != "/api/proposals/prop_broken/decline" || d[1].csrf != csrf {
		t.Errorf("declining sent %+v", d)
	}

	// Someone else decided first: the page says who and how; the card goes.
	do(t, ctx, "approve what Ana approved",
		browsertest.Click(inboxXCard("Team wiki", "button.primary")),
		browsertest.Poll(`!document.querySelector("#p-prop_wiki")`),
		waitText(".approval-notices", "already approved by Ana"),
	)
	// Not a reviewer of that Room: a clear message; the card stays.
	do(t, ctx, "approve another's Room's proposal",
		browsertest.Click(inboxXCard("Palette", "button.primary")),
		chromedp.WaitVisible(chromedp.CSS(`#p-prop_theirs .error-box`)),
	)
	if msg := run(t, ctx, "the 403", chromedp.Text(chromedp.CSS(`#p-prop_theirs .error-box`))); !strings.Contains(msg, "You cannot decide on this proposal") || !strings.Contains(msg, "Design room") {
		t.Errorf("a 403 says %q", msg)
	}
	if got := inboxXCards(t, ctx); strings.Join(got, ",") != "Palette" {
		t.Errorf("after the decisions the cards are %v, want Palette alone", got)
	}
	if dis := run(t, ctx, "buttons", chromedp.Evaluate[bool](`document.querySelector("#p-prop_theirs button.primary").disabled`)); dis {
		t.Error("after a 403 the buttons stay disabled")
	}
	accessible(t, ctx, "approvals-decided")

	// A phone's width.
	do(t, ctx, "phone width", browsertest.Phone(), chromedp.WaitVisible(inboxXCard("Palette", "")))
	do(t, ctx, "open Palette's files", browsertest.Click(inboxXCard("Palette", "summary")), chromedp.WaitVisible(chromedp.CSS(`#p-prop_theirs .code-box`)))
	noOverflow(t, ctx, "approvals-phone")
	accessible(t, ctx, "approvals-phone")
	browsertest.Screenshot(t, ctx, "approvals-phone")
	do(t, ctx, "desktop width", browsertest.Desktop())

	// The stream refused: the badge polls the count instead.
	f.mu.Lock()
	f.eventsDown, f.pollOK = true, true
	f.add0(map[string]any{
		"proposal_id": "prop_late", "room_id": e.RoomID, "room_name": "Team room", "name": "Late", "kind": "snippet", "status": "pending",
		"proposed_by": map[string]any{"kind": "agent", "id": "conn_1", "name": "Claude"}, "proposed_at": now.Format(time.RFC3339),
		"compile": map[string]any{"ok": true, "errors": []any{}}, "file_count": 0,
	})
	f.mu.Unlock()
	do(t, ctx, "the badge polls", waitText(".nav-badge", "2"), chromedp.WaitVisible(inboxXCard("Late", "")))

	// Connected leads here.
	do(t, ctx, "Connected", browsertest.Click(chromedp.CSS(`.sidenav a[href="/connected"]`)), chromedp.WaitVisible(chromedp.ID("approvals-link-title")))
	if text := run(t, ctx, "the link", chromedp.Text(chromedp.CSS(`.approvals-link`))); !strings.Contains(text, "2 apps proposed by agents wait") {
		t.Errorf("Connected's approvals section says %q", text)
	}
	do(t, ctx, "to the inbox", browsertest.Click(chromedp.CSS(`.approvals-link a`)), chromedp.WaitVisible(inboxXCard("Late", "")))

	// The list refused: the server's words and a way to try again.
	f.mu.Lock()
	f.listDown = true
	f.mu.Unlock()
	do(t, ctx, "a refused list", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.error-box`)), waitText(".error-box", "cannot be listed right now"))
	accessible(t, ctx, "approvals-error")
	f.mu.Lock()
	f.listDown = false
	f.mu.Unlock()
	do(t, ctx, "try again", browsertest.Click(chromedp.CSS(`.error-box button`)), chromedp.WaitVisible(inboxXCard("Late", "")), chromedp.WaitNotPresent(chromedp.CSS(`.error-box`)))
}

// add0 adds a proposal without files; f.mu is held.
func (f *inboxXFake) add0(p map[string]any) {
	f.files[p["proposal_id"].(string)] = []map[string]any{}
	f.pending = append(f.pending, p)
}

// TestBrowserConnectedRevoke: Connected lists the workspace's tokens with
// their scopes, what each reaches ("All Notes and Rooms", or the Notes'
// and Rooms' names), when each was made and last used; revoking one there
// (after a confirmation) makes its MCP client's next tool call 401, while

// TestBrowserApprovalsBuildFailed: a card whose code does not compile shows
// every error (file:line:column, text, the line) and, when the answer to
// the proposal told the agent so, says the agent was told (not otherwise);
// "Approve and create" on it asks first, naming the errors: Cancel sends
// nothing and the card stays pending; "Approve anyway" approves it. A card
// that compiles approves without asking.
func TestBrowserApprovalsBuildFailed(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	do(t, ctx, "no shared worker", withoutSharedWorker())
	f := inboxXNewFake()
	inboxXIntercept(t, ctx, f)
	now := time.Now().UTC()
	f.add(map[string]any{
		"proposal_id": "prop_clock", "room_id": e.RoomID, "room_name": "Team room", "name": "Broken clock", "kind": "snippet", "status": "pending",
		"proposed_by": map[string]any{"kind": "agent", "id": "conn_2", "name": "Claude Code"}, "proposed_at": now.Add(-2 * time.Minute).Format(time.RFC3339),
		"compile": map[string]any{"state": "failed", "ok": false, "proposer_told": true, "errors": []any{
			map[string]any{"file": "src/App.tsx", "line": 2, "column": 16, "text": `Could not resolve "left-pad"`, "line_text": `import pad from "left-pad";`},
			map[string]any{"file": "src/Face.tsx", "line": 4, "column": 22, "text": `Expected ")" but found "}"`, "line_text": `  return <p>{hours(now}</p>;`},
		}},
	}, map[string]string{
		"src/App.tsx":  "// Shows the time.\nimport pad from \"left-pad\";\nimport { Face } from \"./Face\";\nexport default () => <Face />;\n",
		"src/Face.tsx": "const hours = (d: Date) => d.getHours();\nexport function Face() {\n  const now = new Date();\n  return <p>{hours(now}</p>;\n}\n",
	})
	f.add(map[string]any{
		"proposal_id": "prop_old", "room_id": e.RoomID, "room_name": "Team room", "name": "Old gauge", "kind": "snippet", "status": "pending",
		"proposed_by": map[string]any{"kind": "agent", "id": "conn_1", "name": "Cursor"}, "proposed_at": now.Add(-time.Hour).Format(time.RFC3339),
		"compile": map[string]any{"state": "failed", "ok": false, "proposer_told": false, "errors": []any{
			map[string]any{"file": "src/App.tsx", "line": 1, "column": 0, "text": `No matching export in "src/App.tsx" for import "default"`, "line_text": ""},
		}},
	}, map[string]string{"src/App.tsx": "export const Gauge = () => <meter value={0.4} />;\n"})
	f.add(map[string]any{
		"proposal_id": "prop_fine", "room_id": e.RoomID, "room_name": "Team room", "name": "Fixed clock", "kind": "snippet", "status": "pending",
		"proposed_by": map[string]any{"kind": "agent", "id": "conn_2", "name": "Claude Code"}, "proposed_at": now.Add(-time.Minute).Format(time.RFC3339),
		"compile": map[string]any{"state": "compiled", "ok": true, "proposer_told": true, "errors": []any{}},
	}, map[string]string{"src/App.tsx": "export default () => <p>{new Date().toLocaleTimeString()}</p>;\n"})

	do(t, ctx, "open the inbox", chromedp.Navigate(e.URL+"/approvals"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the cards", chromedp.WaitVisible(chromedp.ID("approvals-title")), browsertest.Poll(`document.querySelectorAll("article.proposal-card").length === 3`))

	// The errors, and that the agent was told.
	broken := run(t, ctx, "Broken clock's compile result", chromedp.Text(inboxXCard("Broken clock", ".compile")))
	for _, want := range []string{"Does not compile: 2 errors", "src/App.tsx:2:16", `Could not resolve "left-pad"`, `import pad from "left-pad";`,
		"src/Face.tsx:4:22", `Expected ")" but found "}"`, `return <p>{hours(now}</p>;`, "The agent was told it does not compile"} {
		if !strings.Contains(broken, want) {
			t.Errorf("Broken clock's card does not say %q:\n%s", want, broken)
		}
	}
	// A proposal made before agents were told: the errors, no such claim.
	old := run(t, ctx, "Old gauge's compile result", chromedp.Text(inboxXCard("Old gauge", ".compile")))
	if !strings.Contains(old, "Does not compile") || strings.Contains(old, "was told") {
		t.Errorf("Old gauge's card says:\n%s", old)
	}
	if fine := run(t, ctx, "Fixed clock's compile result", chromedp.Text(inboxXCard("Fixed clock", ".compile"))); !strings.Contains(fine, "Compiles without errors") || strings.Contains(fine, "was told") {
		t.Errorf("Fixed clock's card says:\n%s", fine)
	}
	run(t, ctx, "to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	noOverflow(t, ctx, "approvals-build-failed")
	accessible(t, ctx, "approvals-build-failed")
	browsertest.Screenshot(t, ctx, "approvals-build-failed")

	// Approve and create asks first, naming the errors; Cancel keeps it.
	do(t, ctx, "approve Broken clock", browsertest.Click(inboxXCard("Broken clock", "button.primary")), chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)))
	dialog := run(t, ctx, "the confirmation", chromedp.Text(chromedp.CSS(`dialog[open]`)))
	for _, want := range []string{"Approve code that does not compile?", "“Broken clock” does not compile: 2 errors", "src/App.tsx:2:16", `Could not resolve "left-pad"`,
		"src/Face.tsx:4:22", "Cancel", "Approve anyway"} {
		if !strings.Contains(dialog, want) {
			t.Errorf("the confirmation does not say %q:\n%s", want, dialog)
		}
	}
	if focused := run(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement?.innerText ?? ""`)); focused != "Cancel" {
		t.Errorf("the confirmation opens with %q focused, want Cancel", focused)
	}
	accessible(t, ctx, "approvals-confirm")
	browsertest.WindowScreenshot(t, ctx, "approvals-confirm")
	do(t, ctx, "cancel", browsertest.Click(chromedp.CSS(`dialog[open] button.secondary`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if d := f.decisions(); len(d) != 0 {
		t.Fatalf("Cancel sent a decision: %+v", d)
	}
	if got := inboxXCards(t, ctx); strings.Join(got, ",") != "Broken clock,Old gauge,Fixed clock" {
		t.Errorf("after Cancel the cards are %v, want Broken clock still pending", got)
	}
	// Escape cancels too.
	do(t, ctx, "approve, then Escape",
		browsertest.Click(inboxXCard("Broken clock", "button.primary")), chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		chromedp.KeyEvent("\u001b"), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if d := f.decisions(); len(d) != 0 {
		t.Fatalf("Escape sent a decision: %+v", d)
	}

	// Approve anyway approves it.
	do(t, ctx, "approve anyway",
		browsertest.Click(inboxXCard("Broken clock", "button.primary")), chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Poll(`!document.querySelector("#p-prop_clock")`),
		waitText(".approval-notices", "“Broken clock” is approved"),
	)
	if d := f.decisions(); len(d) != 1 || d[0].path != "/api/proposals/prop_clock/approve" {
		t.Errorf("Approve anyway sent %+v, want one POST /api/proposals/prop_clock/approve", d)
	}
	// Code that compiles is approved at once.
	do(t, ctx, "approve Fixed clock",
		browsertest.Click(inboxXCard("Fixed clock", "button.primary")),
		browsertest.Poll(`!document.querySelector("#p-prop_fine")`),
		waitText(".approval-notices", "“Fixed clock” is approved"),
	)
	if d := f.decisions(); len(d) != 2 || d[1].path != "/api/proposals/prop_fine/approve" {
		t.Errorf("approving Fixed clock sent %+v", d)
	}
}

// the other token keeps working. Against the real server.
func TestBrowserConnectedRevoke(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	bg := context.Background()
	wide := e.WriteToken(t) // named "test", every Note and Room
	narrow, _, err := auth.CreateToken(bg, e.Server.Store, auth.NewTokenSpec{
		Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: "Report bot", Scopes: []string{auth.ScopeRead},
		Notes: []string{e.NoteID}, Rooms: []string{e.RoomID},
	})
	if err != nil {
		t.Fatal(err)
	}
	bot := e.Client(t, narrow, "")
	if r := servertest.MustCall(t, bot, "list_notes", map[string]any{}); r.IsError {
		t.Fatalf("the bot's first call failed: %+v", r)
	}
	other := e.Client(t, wide, "")
	if _, _, err := auth.CreateToken(bg, e.Server.Store, auth.NewTokenSpec{
		Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: "Spare", Scopes: []string{auth.ScopeRead}, Notes: []string{}, Rooms: []string{},
	}); err != nil {
		t.Fatal(err)
	}

	do(t, ctx, "open Connected", chromedp.Navigate(e.URL+"/connected"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the tokens", chromedp.WaitVisible(chromedp.ID("tokens-list")), browsertest.Poll(`document.querySelectorAll("#tokens-list li.conn").length === 3`))
	rows := run(t, ctx, "rows", chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll("#tokens-list li.conn")].map(li => [li.querySelector(".conn-name").innerText.trim(), li.innerText]))`))
	if r := rows["Report bot"]; !strings.Contains(r, "Personal access token") || !strings.Contains(r, "Read") || strings.Contains(r, "Write") ||
		!strings.Contains(r, "The Note “Welcome”; the Room “Team room”") || !strings.Contains(r, "just now") || !strings.Contains(r, e.Owner.User.Email) {
		t.Errorf("the bot's row says:\n%s", r)
	}
	if r := rows["test"]; !strings.Contains(r, "All Notes and Rooms") || !strings.Contains(r, "Write") {
		t.Errorf("the wide token's row says:\n%s", r)
	}
	if r := rows["Spare"]; !strings.Contains(r, "never used") || !strings.Contains(r, "No Notes; no Rooms") {
		t.Errorf("the unused token's row says:\n%s", r)
	}
	noOverflow(t, ctx, "connected")
	accessible(t, ctx, "connected")
	browsertest.Screenshot(t, ctx, "connected")

	do(t, ctx, "revoke, then cancel",
		browsertest.Click(chromedp.CSS(`button[aria-label="Revoke Report bot"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.secondary`)),
		chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)),
	)
	if r := servertest.MustCall(t, bot, "list_notes", map[string]any{}); r.IsError {
		t.Fatalf("Cancel revoked the token: %+v", r)
	}
	do(t, ctx, "revoke for real",
		browsertest.Click(chromedp.CSS(`button[aria-label="Revoke Report bot"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)),
		chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)),
		waitText(".notice", "Report bot is revoked"),
		browsertest.Poll(`document.querySelectorAll("#tokens-list li.conn").length === 2`),
	)
	if _, err := mcpclient.Call(bg, bot, "list_notes", map[string]any{}); err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Errorf("the revoked token's next tool call: %v, want a 401", err)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`
	if resp := post(t, e.URL+"/mcp", narrow, call); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the revoked token over HTTP: %d, want 401", resp.StatusCode)
	}
	if r := servertest.MustCall(t, other, "list_notes", map[string]any{}); r.IsError {
		t.Errorf("revoking one token broke the other: %+v", r)
	}
	do(t, ctx, "the revoked list", browsertest.Click(chromedp.CSS(`.revoked-list summary`)), chromedp.WaitVisible(chromedp.CSS(`.revoked-list li.conn`)))
	if text := run(t, ctx, "revoked", chromedp.Text(chromedp.CSS(`.revoked-list`))); !strings.Contains(text, "Report bot") {
		t.Errorf("the revoked list says %q", text)
	}
	do(t, ctx, "phone width", browsertest.Phone(), chromedp.WaitVisible(chromedp.ID("tokens-list")))
	noOverflow(t, ctx, "connected-phone")
	accessible(t, ctx, "connected-phone")
	browsertest.Screenshot(t, ctx, "connected-phone")
}
