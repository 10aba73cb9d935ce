package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"foundry/internal/browsertest"
	"foundry/internal/sandbox"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/web"
)

// A Room's launcher and the sandbox its apps run in. The Rooms REST is
// played by the browser's request interception (the page's /api/rooms…
// calls are answered by sandboxXRooms), with hand-written bundles of the
// shape the snippet compiler makes: one classic script assigning
// globalThis.__foundryApp = {default: Component}, reading React and
// @app/storage from globalThis.__foundry.

// TestSandboxPageHeaders: the sandbox page and its runtime over plain HTTP,
// signed out: the policy that gives the page an opaque origin and no
// network, and the web app's own pages allowing only this server's frames.
func TestSandboxPageHeaders(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	res, body := fetch(t, http.DefaultClient, "GET", e.URL+sandbox.Path)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", sandbox.Path, res.StatusCode, body)
	}
	h := res.Header
	csp := h.Get("Content-Security-Policy")
	if !strings.HasPrefix(csp, "sandbox allow-scripts;") || csp != sandbox.CSP {
		t.Errorf("the sandbox page's CSP is %q, want %q", csp, sandbox.CSP)
	}
	directives := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			directives[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for name, want := range map[string]string{
		"sandbox": "allow-scripts", "default-src": "'none'", "script-src": "'self' blob:", "connect-src": "'none'",
		"frame-src": "'none'", "child-src": "'none'", "worker-src": "'none'", "form-action": "'none'", "base-uri": "'none'",
		"font-src": "'none'", "object-src": "'none'", "img-src": "data: blob:", "style-src": "'self' blob:",
	} {
		if got, ok := directives[name]; !ok || got != want {
			t.Errorf("the sandbox CSP has %s %q, want %q", name, got, want)
		}
	}
	for _, f := range []string{"camera=()", "microphone=()", "geolocation=()", "usb=()", "payment=()", "clipboard-read=()", "display-capture=()"} {
		if !strings.Contains(h.Get("Permissions-Policy"), f) {
			t.Errorf("the sandbox page's Permissions-Policy lacks %s", f)
		}
	}
	if strings.Contains(csp, "allow-same-origin") || strings.Contains(csp, "unsafe") {
		t.Errorf("the sandbox CSP loosens the sandbox: %q", csp)
	}
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cross-Origin-Resource-Policy": "same-origin", "X-Frame-Options": "SAMEORIGIN", "Permissions-Policy": sandbox.PermissionsPolicy, "X-DNS-Prefetch-Control": "off"} {
		if got := h.Get(k); got != want {
			t.Errorf("sandbox page %s: %q, want %q", k, got, want)
		}
	}
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Errorf("sandbox page Content-Type %q", h.Get("Content-Type"))
	}
	// The page loads the runtime's two files and nothing else, nothing inline.
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(body, -1)
	if !strings.Contains(body, `<meta http-equiv="x-dns-prefetch-control" content="off">`) {
		t.Errorf("the sandbox page does not turn DNS prefetching off:\n%s", body)
	}
	if len(refs) != 2 || strings.Contains(body, "<script>") || strings.Contains(body, "style=") {
		t.Fatalf("the sandbox page should load exactly its runtime script and stylesheet:\n%s", body)
	}
	for _, m := range refs {
		if !regexp.MustCompile(`^/sandbox/runtime-[A-Z0-9]+\.(js|css)$`).MatchString(m[1]) {
			t.Errorf("the sandbox page loads %q", m[1])
			continue
		}
		r, b := fetch(t, http.DefaultClient, "GET", e.URL+m[1])
		if r.StatusCode != http.StatusOK || len(b) == 0 {
			t.Errorf("GET %s: %d (%d bytes)", m[1], r.StatusCode, len(b))
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(r.Header.Get("Cache-Control"), "immutable") || r.Header.Get("Cross-Origin-Resource-Policy") == "" {
			t.Errorf("GET %s headers: %v", m[1], r.Header)
		}
	}
	if r, _ := fetch(t, http.DefaultClient, "GET", e.URL+"/sandbox/runtime-NOPE.js"); r.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown runtime file: %d, want 404", r.StatusCode)
	}
	if r, _ := fetch(t, http.DefaultClient, "POST", e.URL+sandbox.Path); r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST %s: %d, want 405", sandbox.Path, r.StatusCode)
	}
	// The app's own pages: frames from this server only, never framed.
	for _, want := range []string{"frame-src 'self'", "frame-ancestors 'none'", "connect-src 'self'", "script-src 'self'"} {
		if !strings.Contains(web.CSP, want) {
			t.Errorf("the web app's CSP %q lacks %q", web.CSP, want)
		}
	}
}

// sandboxXListener is a server on 127.0.0.1 that no app may reach: it
// records every request it receives.
type sandboxXListener struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func sandboxXNewListener(t *testing.T) *sandboxXListener {
	l := &sandboxXListener{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Method+" "+r.URL.String())
		l.mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("reached"))
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *sandboxXListener) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

type sandboxXApp struct {
	InstanceID string         `json:"instance_id"`
	Name       string         `json:"name"`
	Kind       string         `json:"kind"`
	Position   int            `json:"position"`
	ProposalID string         `json:"proposal_id,omitempty"`
	Repository map[string]any `json:"repository,omitempty"`
	AddedAt    string         `json:"added_at"`
	js, css    string
}

// sandboxXRooms answers the page's /api/rooms… calls as the Rooms REST
// does (ROOMS contract), from memory.
type sandboxXRooms struct {
	mu      sync.Mutex
	rooms   bool // false: the workspace has no Rooms yet
	version int
	apps    []*sandboxXApp
	calls   []string
}

const sandboxXRoomID = "room_team"

func (s *sandboxXRooms) answer(method, rawURL string, headers map[string]any, body string) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := rawURL[strings.Index(rawURL, "/api/"):]
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	s.calls = append(s.calls, method+" "+u)
	problem := func(code int, detail string) (int, any) {
		return code, map[string]any{"type": "about:blank", "status": code, "title": http.StatusText(code), "detail": detail}
	}
	room := func() map[string]any {
		apps := make([]any, 0, len(s.apps))
		for i, a := range s.apps {
			a.Position = i
			apps = append(apps, a)
		}
		return map[string]any{"room_id": sandboxXRoomID, "name": "Team Room", "owner": map[string]string{"id": "u1", "name": "Ana"},
			"version": s.version, "can_manage": true, "apps": apps}
	}
	parts := strings.Split(strings.TrimPrefix(u, "/api/rooms"), "/")
	switch {
	case u == "/api/rooms" && method == "GET":
		if !s.rooms {
			return 200, map[string]any{"rooms": []any{}}
		}
		return 200, map[string]any{"rooms": []any{
			map[string]any{"room_id": sandboxXRoomID, "name": "Team Room", "owner": map[string]string{"id": "u1", "name": "Ana"}, "apps": len(s.apps), "pending": 2, "version": s.version},
			map[string]any{"room_id": "room_empty", "name": "Design reviews", "owner": map[string]string{"id": "u2", "name": "Bo"}, "apps": 0, "pending": 0, "version": 1},
		}}
	case len(parts) == 2 && parts[1] == sandboxXRoomID && method == "GET":
		return 200, room()
	case len(parts) == 2 && parts[1] == "room_empty" && method == "GET":
		return 200, map[string]any{"room_id": "room_empty", "name": "Design reviews", "owner": map[string]string{"id": "u2", "name": "Bo"}, "version": 1, "can_manage": false, "apps": []any{}}
	case len(parts) >= 4 && parts[1] == sandboxXRoomID && parts[2] == "apps":
		idx := -1
		for i, a := range s.apps {
			if a.InstanceID == parts[3] {
				idx = i
			}
		}
		if idx < 0 {
			return problem(404, "This app is not in the Room's launcher.")
		}
		a := s.apps[idx]
		if len(parts) == 5 && parts[4] == "bundle" && method == "GET" {
			if a.Kind != "snippet" {
				return problem(404, "A repository app has no bundle.")
			}
			return 200, map[string]string{"hash": fmt.Sprintf("h%d", len(a.js)), "js": a.js, "css": a.css}
		}
		if len(parts) != 4 || (method != "PATCH" && method != "DELETE") {
			return problem(405, "method not allowed")
		}
		im, _ := headers["If-Match"].(string)
		if im == "" {
			return problem(428, "If-Match is required: send the Room's version.")
		}
		if im != `"`+strconv.Itoa(s.version)+`"` {
			return problem(412, "The Room changed since version "+strings.Trim(im, `"`)+"; it is at version "+strconv.Itoa(s.version)+".")
		}
		if method == "DELETE" {
			s.apps = append(s.apps[:idx], s.apps[idx+1:]...)
			s.version++
			return 200, map[string]any{"room_id": sandboxXRoomID, "version": s.version}
		}
		var change struct {
			Name     *string `json:"name"`
			Position *int    `json:"position"`
		}
		if err := json.Unmarshal([]byte(body), &change); err != nil {
			return problem(400, "the body is not JSON")
		}
		if change.Name != nil {
			a.Name = *change.Name
		}
		if change.Position != nil {
			to := *change.Position
			if to < 0 || to >= len(s.apps) {
				return problem(422, "position is out of range")
			}
			s.apps = append(s.apps[:idx], s.apps[idx+1:]...)
			s.apps = append(s.apps[:to], append([]*sandboxXApp{a}, s.apps[to:]...)...)
		}
		s.version++
		return 200, map[string]any{"room_id": sandboxXRoomID, "version": s.version}
	}
	return problem(404, "not found")
}

// sandboxXIntercept answers every /api/rooms… request of the tab from rooms.
func sandboxXIntercept(t *testing.T, ctx context.Context, rooms *sandboxXRooms) {
	t.Helper()
	err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*cdpfetch.EventRequestPaused)
		if !ok {
			return
		}
		go func() {
			headers := map[string]any{}
			for k, v := range e.Request.Headers {
				headers[http.CanonicalHeaderKey(k)] = v
			}
			var body string
			for _, en := range e.Request.PostDataEntries {
				body += string(en.Bytes)
			}
			code, v := rooms.answer(e.Request.Method, e.Request.URL, headers, body)
			b, _ := json.Marshal(v)
			ct := "application/json"
			if code >= 400 {
				ct = "application/problem+json"
			}
			_, err := chromedp.Call(ctx, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{
				RequestID: e.RequestID, ResponseCode: int64(code), Body: b,
				ResponseHeaders: []*cdpfetch.HeaderEntry{{Name: "Content-Type", Value: ct}, {Name: "Cache-Control", Value: "private, no-store"}},
			})
			if err != nil && ctx.Err() == nil {
				t.Logf("fulfilling %s: %v", e.Request.URL, err)
			}
		}()
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdpfetch.Enable, cdpfetch.EnableParams{Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*/api/rooms*"}}}); err != nil {
		t.Fatal(err)
	}
}

// The hand-written bundles.
const (
	sandboxXCounterJS = `var __foundryApp = (() => {
  const { React, jsxRuntime, storage } = globalThis.__foundry;
  const { jsx, jsxs } = jsxRuntime;
  function App() {
    const [n, setN] = storage.useStoredState("count", 0);
    return jsxs("div", { className: "counter", children: [
      jsx("h1", { id: "app-title", children: "Counter" }),
      jsxs("p", { id: "count", children: ["Count: ", n] }),
      jsx("button", { id: "inc", type: "button", onClick: () => setN(n + 1), children: "Add one" }),
      jsx("p", { id: "react-version", children: React.version })
    ] });
  }
  return { default: App };
})();
`
	sandboxXCounterCSS = `.counter { color: rgb(1, 2, 3); } #app-title { letter-spacing: 3px; }`
	sandboxXBrokenJS   = `var __foundryApp = (() => {
  const { jsx } = globalThis.__foundry.jsxRuntime;
  function Chart(props) {
    if (!props.data) throw new Error("the chart has no data: pass data to Chart");
    return jsx("svg", {});
  }
  function App() { return jsx(Chart, {}); }
  return { default: App };
})();
`
)

// sandboxXFrame is a context whose actions run inside the frame of the app
// named name (a target of its own: Chromium runs the opaque-origin frame
// out of the page's process), once its runtime has its code (the runtime
// titles the frame's document with the app's name).
func sandboxXFrame(t *testing.T, ctx context.Context, name string) context.Context {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	tried := map[string]context.Context{}
	var seen []string
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen = seen[:0]
		for _, info := range infos {
			seen = append(seen, info.Type+" "+info.URL)
			if info.Type != "iframe" || !strings.Contains(info.URL, sandbox.Path) {
				continue
			}
			fctx, ok := tried[string(info.TargetID)]
			if !ok {
				var cancel context.CancelFunc
				fctx, cancel = chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				// The first action attaches the target, for as long as
				// fctx lives: it runs under fctx itself.
				if err := chromedp.Do(fctx); err != nil {
					continue
				}
				tried[string(info.TargetID)] = fctx
			}
			short, cancel := context.WithTimeout(fctx, 2*time.Second)
			title, err := chromedp.Run(short, chromedp.Evaluate[string](`document.title`))
			cancel()
			if err == nil && title == name {
				return fctx
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no frame running %q; targets: %v", name, seen)
	return nil
}

// sandboxXWait evaluates cond in ctx (a frame) until it is true, for up to
// stepTimeout.
func sandboxXWait(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not %s (%v)", what, cond, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sandboxXText is the condition that the element sel's text contains want.
func sandboxXText(sel, want string) string {
	return fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? "").includes(%q)`, sel, want)
}

// TestBrowserRoomLauncher: the Rooms list (empty, then two Rooms), a
// Room's launcher running a hand-written app in the sandbox; from inside
// the frame every way out fails and the test's listener on 127.0.0.1 hears
// nothing; storage round-trips, survives a reload and refuses past its
// quota; a throwing app shows its error and stack; a repository app shows
// its pinned version; rename, reorder (keyboard and buttons) and remove,
// with a 412 when the Room moved on.
func TestBrowserRoomLauncher(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	listener := sandboxXNewListener(t)
	rooms := &sandboxXRooms{version: 3, apps: []*sandboxXApp{
		{InstanceID: "app_counter", Name: "Counter", Kind: "snippet", ProposalID: "prop_1", AddedAt: time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), js: sandboxXCounterJS, css: sandboxXCounterCSS},
		{InstanceID: "app_broken", Name: "Broken chart", Kind: "snippet", ProposalID: "prop_2", AddedAt: time.Now().UTC().Format(time.RFC3339), js: sandboxXBrokenJS},
		{InstanceID: "app_repo", Name: "Deploy board", Kind: "repository", ProposalID: "prop_3", AddedAt: time.Now().UTC().Format(time.RFC3339),
			Repository: map[string]any{"repository_id": "repo_1", "name": "acme/deploy-board", "version_id": "v_8f3a2c1", "build_state": "not built"}},
	}}
	do(t, ctx, "open Rooms", chromedp.Navigate(e.URL+"/rooms"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "signed in", chromedp.WaitVisible(chromedp.ID("rooms-title")))
	sandboxXIntercept(t, ctx, rooms)
	do(t, ctx, "the empty Rooms list", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("rooms-title")), waitText(".content", "No Rooms yet"))
	if cur := run(t, ctx, "nav", chromedp.Text(chromedp.CSS(`.sidenav [aria-current=page]`))); cur != "Rooms" {
		t.Errorf("the nav marks %q as the current page, want Rooms", cur)
	}
	accessible(t, ctx, "rooms-empty") // photographed by TestBrowserRoomsManage

	rooms.mu.Lock()
	rooms.rooms = true
	rooms.mu.Unlock()
	do(t, ctx, "the Rooms list", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#rooms-list .room-name`)))
	text := pageText(t, ctx)
	for _, want := range []string{"Team Room", "Owned by Ana", "3 apps", "2 pending", "Design reviews", "0 apps"} {
		if !strings.Contains(text, want) {
			t.Errorf("the Rooms list does not show %q:\n%s", want, text)
		}
	}
	noOverflow(t, ctx, "rooms")
	accessible(t, ctx, "rooms")
	browsertest.Screenshot(t, ctx, "rooms")

	// The launcher: tabs in order, the first app running in the sandbox.
	do(t, ctx, "open the Room", browsertest.Click(chromedp.CSS(`#rooms-list a.room-name`)), chromedp.WaitVisible(chromedp.CSS(`[role=tab][aria-selected=true]`)),
		chromedp.WaitVisible(chromedp.CSS(`iframe.app-frame`)))
	if u := location(t, ctx); u.Path != "/rooms/"+sandboxXRoomID {
		t.Fatalf("at %s, want /rooms/%s", u, sandboxXRoomID)
	}
	tabs := run(t, ctx, "tabs", chromedp.Evaluate[[]string](`[...document.querySelectorAll("[role=tab]")].map(b => b.textContent.replace(/\s+/g, " ").trim())`))
	if strings.Join(tabs, "|") != "Counter|Broken chart|Deploy board · repository" {
		t.Errorf("the launcher's tabs are %q", tabs)
	}
	attrs := run(t, ctx, "iframe", chromedp.Evaluate[map[string]any](`(() => { const f = document.querySelector("iframe.app-frame"); return {sandbox: f.getAttribute("sandbox"), src: f.getAttribute("src"), title: f.title, doc: f.contentDocument === null}; })()`))
	if attrs["sandbox"] != "allow-scripts" || attrs["src"] != sandbox.Path || attrs["title"] != "App: Counter" || attrs["doc"] != true {
		t.Errorf("the app's iframe: %v; want sandbox=allow-scripts, src %s, a title, and no contentDocument for the host", attrs, sandbox.Path)
	}
	frame := sandboxXFrame(t, ctx, "Counter")
	sandboxXWait(t, frame, "the app renders in the frame", sandboxXText("#count", "Count: 0"))
	inside := run(t, frame, "inside the frame", chromedp.Evaluate[map[string]any](`({
		origin: origin, title: document.getElementById("app-title").innerText,
		color: getComputedStyle(document.querySelector(".counter")).color,
		react: document.getElementById("react-version").innerText})`))
	if inside["origin"] != "null" || inside["title"] != "Counter" || inside["color"] != "rgb(1, 2, 3)" || inside["react"] != "19.3.1" {
		t.Errorf("inside the frame: %v; want origin null, the app's heading, its stylesheet's color, React 19.3.1", inside)
	}
	noOverflow(t, ctx, "launcher")
	accessible(t, ctx, "launcher")
	browsertest.Screenshot(t, ctx, "launcher-manage")

	// Storage: two clicks, kept in this browser under the Room and app.
	run(t, frame, "count", chromedp.Evaluate[chromedp.Void](`document.getElementById("inc").click()`))
	sandboxXWait(t, frame, "counted once", sandboxXText("#count", "Count: 1"))
	run(t, frame, "count", chromedp.Evaluate[chromedp.Void](`document.getElementById("inc").click()`))
	sandboxXWait(t, frame, "counted twice", sandboxXText("#count", "Count: 2"))
	do(t, ctx, "stored by the host", browsertest.Poll(`localStorage.getItem("foundry.app:`+sandboxXRoomID+`:app_counter:count") === "2"`))
	keys := run(t, frame, "storage keys", chromedp.Evaluate[[]string](`__foundry.storage.storage.keys()`, chromedp.EvalAwaitPromise))
	if strings.Join(keys, ",") != "count" {
		t.Errorf("storage.keys() = %q, want [count]", keys)
	}
	rt := run(t, frame, "storage round trip", chromedp.Evaluate[map[string]any](`(async () => {
		const s = __foundry.storage.storage;
		await s.set("doc", {title: "Plan ✓", items: [1, 2, {deep: null}]});
		const back = await s.get("doc");
		await s.remove("doc");
		const gone = await s.get("doc");
		let longKey = "";
		try { await s.set("k".repeat(257), 1); } catch (e) { longKey = e.message; }
		let quota = "";
		try { await s.set("big", "x".repeat(1100000)); } catch (e) { quota = e.message; }
		let fill = "";
		try { for (let i = 0; i < 6; i++) await s.set("part" + i, "y".repeat(200000)); } catch (e) { fill = e.message; }
		for (let i = 0; i < 6; i++) await s.remove("part" + i);
		await new Promise(r => setTimeout(r, 1100));
		const t0 = performance.now();
		const flood = await Promise.allSettled(Array.from({length: 1200}, () => s.keys()));
		const floodMS = performance.now() - t0;
		const slowed = flood.filter(r => r.status === "rejected" && /calls in a second/.test(r.reason.message)).length;
		await new Promise(r => setTimeout(r, 1100));
		const after = (await s.keys()).join(",");
		return {back: JSON.stringify(back), gone: gone === undefined, longKey, quota, fill, slowed, floodMS, after};
	})()`, chromedp.EvalAwaitPromise))
	if rt["back"] != `{"title":"Plan ✓","items":[1,2,{"deep":null}]}` || rt["gone"] != true {
		t.Errorf("storage round trip: %v", rt)
	}
	if !strings.Contains(fmt.Sprint(rt["longKey"]), "256") {
		t.Errorf("a 257-character key: %q, want a refusal naming the limit", rt["longKey"])
	}
	// The limit counts calls per second of the clock (a fixed window): a
	// flood answered within a second meets at most two windows, so of
	// 1,200 calls at least 200 and at most 700 are refused; a machine too
	// busy to answer them within a second spreads them over more windows
	// and may refuse fewer.
	n, _ := rt["slowed"].(float64)
	ms, _ := rt["floodMS"].(float64)
	if (n < 200 && ms < 1000) || n > 700 || rt["after"] != "count" {
		t.Errorf("1,200 storage calls at once, answered in %.0f ms: %v refused as too fast (want 200–700: the ones past 500 a second), then keys %q", ms, rt["slowed"], rt["after"])
	}
	for _, k := range []string{"quota", "fill"} {
		if !strings.Contains(fmt.Sprint(rt[k]), "1 MiB") {
			t.Errorf("past the quota (%s): %q, want a refusal naming the 1 MiB quota", k, rt[k])
		}
	}
	browsertest.Screenshot(t, ctx, "app-storage")

	// The app reloads its own frame: the page hands the new document a new
	// channel and the code again.
	run(t, frame, "the frame reloads itself", chromedp.Evaluate[chromedp.Void](`window.__before = 1; setTimeout(() => location.reload(), 0); undefined`))
	sandboxXWait(t, frame, "the reloaded frame", `window.__before === undefined && document.title === "Counter" && (document.querySelector("#count")?.innerText ?? "") === "Count: 2"`)

	// The frame cannot reach out: each way is tried from inside it.
	port := listener.URL[strings.LastIndex(listener.URL, ":")+1:]
	escapes := run(t, frame, "escape attempts", chromedp.Evaluate[map[string]string](`(async (L) => {
		const out = {};
		const tryit = async (name, f) => { try { const v = await f(); out[name] = "allowed: " + String(v).slice(0, 80); } catch (e) { out[name] = "blocked: " + (e && e.name); } };
		const settle = (ms) => new Promise(r => setTimeout(r, ms));
		await tryit("parent.document", () => parent.document.title);
		await tryit("top.location.href", () => top.location.href);
		await tryit("document.cookie", () => { const c = document.cookie; if (c === "") throw {name: "empty"}; return c; });
		await tryit("localStorage", () => localStorage.length);
		await tryit("fetch /api/me", () => fetch("/api/me").then(r => r.status));
		await tryit("fetch listener", () => fetch(L + "/fetch").then(r => r.status));
		await tryit("fetch keepalive", () => fetch(L + "/keepalive", {method: "POST", keepalive: true, mode: "no-cors"}).then(r => r.type));
		await tryit("xhr", () => new Promise((res, rej) => { const x = new XMLHttpRequest(); x.open("GET", L + "/xhr"); x.onload = () => res(x.status); x.onerror = () => rej({name: "NetworkError"}); x.send(); }));
		await tryit("websocket", () => new Promise((res, rej) => { const w = new WebSocket(L.replace("http", "ws") + "/ws"); w.onopen = () => res("open"); w.onerror = () => rej({name: "error event"}); }));
		await tryit("eventsource", () => new Promise((res, rej) => { const s = new EventSource(L + "/sse"); s.onopen = () => res("open"); s.onerror = () => { s.close(); rej({name: "error event"}); }; }));
		await tryit("image", () => new Promise((res, rej) => { const i = new Image(); i.onload = () => res("loaded"); i.onerror = () => rej({name: "error event"}); i.src = L + "/img.png"; }));
		await tryit("css background", async () => { const d = document.createElement("div"); d.style.backgroundImage = "url(" + L + "/bg.png)"; document.body.append(d); await settle(300); d.remove(); throw {name: "listener decides"}; });
		await tryit("sendBeacon", () => { if (!navigator.sendBeacon(L + "/beacon", "x")) throw {name: "refused"}; return "queued"; });
		await tryit("RTCPeerConnection", () => { if (typeof RTCPeerConnection === "undefined" && typeof webkitRTCPeerConnection === "undefined") throw {name: "undefined"}; return new RTCPeerConnection({iceServers: [{urls: "stun:127.0.0.1:" + L.split(":").pop()}]}); });
		await tryit("RTCDataChannel", () => { if (typeof RTCDataChannel === "undefined") throw {name: "undefined"}; return "there"; });
		await tryit("WebTransport", () => { if (typeof WebTransport === "undefined") throw {name: "undefined"}; return new WebTransport(L.replace("http", "https") + "/wt"); });
		await tryit("window.open", () => { const w = window.open(L + "/popup"); if (!w) throw {name: "null"}; return "opened"; });
		await tryit("form submit", async () => { const f = document.createElement("form"); f.method = "POST"; f.action = L + "/form"; f.target = "_blank"; document.body.append(f); f.submit(); await settle(300); f.remove(); throw {name: "listener decides"}; });
		await tryit("nested iframe", () => { const f = document.createElement("iframe"); f.src = L + "/frame"; document.body.append(f); return f.contentWindow && f.contentWindow.RTCPeerConnection; });
		await tryit("nested iframe (markup)", async () => { const d = document.createElement("div"); d.innerHTML = '<iframe src="' + L + '/frame2"></iframe>'; document.body.append(d); await settle(300); return window.length; });
		await tryit("blank iframe realm", () => { const d = document.createElement("div"); d.insertAdjacentHTML("beforeend", "<iframe></iframe>"); document.body.append(d); const w = window[0]; if (!w) throw {name: "no window"}; return typeof w.RTCPeerConnection; });
		await tryit("declarative shadow root", () => { const d = document.createElement("div"); d.setHTMLUnsafe('<div><template shadowrootmode="open"><iframe src="' + L + '/shadow"></iframe></template></div>'); document.body.append(d); return window.length || "no frame"; });
		await tryit("custom element extending iframe", () => { class F extends HTMLIFrameElement {} customElements.define("x-frame-" + Date.now(), F, {extends: "iframe"}); const f = new F(); f.src = L + "/custom"; document.body.append(f); return window.length; });
		await tryit("execCommand insertHTML", () => { const d = document.createElement("div"); d.contentEditable = "true"; document.body.append(d); d.focus(); document.execCommand("insertHTML", false, '<iframe src="' + L + '/exec"></iframe>'); return window.length; });
		await tryit("DOMParser frameset as body", () => { const d = new DOMParser().parseFromString('<frameset><frame src="' + L + '/frameset"></frameset>', "text/html"); document.body = d.body; return window.length; });
		await tryit("DOMParser caption", () => { const d = new DOMParser().parseFromString('<table><caption><iframe src="' + L + '/caption"></iframe></caption></table>', "text/html"); const t = document.createElement("table"); t.caption = d.querySelector("caption"); document.body.append(t); return window.length; });
		await tryit("XSLTProcessor", () => { if (typeof XSLTProcessor === "undefined") throw {name: "undefined"}; return "there"; });
		await tryit("top.location =", () => { top.location = L + "/top"; return "navigating"; });
		await tryit("indexedDB", () => new Promise((res, rej) => { const r = indexedDB.open("x"); r.onsuccess = () => res("opened"); r.onerror = () => rej({name: "error event"}); }));
		await tryit("object element", () => { const d = document.createElement("div"); d.innerHTML = '<object data="' + L + '/obj"></object>'; return "made"; });
		await tryit("worker", () => { if (typeof Worker === "undefined") throw {name: "undefined"}; return new Worker(URL.createObjectURL(new Blob(["fetch('" + L + "/worker')"], {type: "text/javascript"}))); });
		await tryit("worker from listener", () => new Worker(L + "/worker.js"));
		await tryit("shared worker", () => new SharedWorker(L + "/shared.js"));
		await tryit("dynamic import", () => import(L + "/mod.js"));
		await tryit("script element", () => new Promise((res, rej) => { const s = document.createElement("script"); s.src = L + "/script.js"; s.onload = () => res("loaded"); s.onerror = () => rej({name: "error event"}); document.head.append(s); }));
		await tryit("link prefetch", async () => { const l = document.createElement("link"); l.rel = "prefetch"; l.href = L + "/prefetch"; document.head.append(l); await settle(300); throw {name: "listener decides"}; });
		await tryit("anchor ping", async () => { const a = document.createElement("a"); a.href = "#x"; a.ping = L + "/ping"; document.body.append(a); a.click(); await settle(300); a.remove(); throw {name: "listener decides"}; });
		await tryit("serviceWorker", () => navigator.serviceWorker.register(L + "/sw.js"));
		await tryit("getUserMedia", () => navigator.mediaDevices.getUserMedia({audio: true}));
		await settle(500);
		return out;
	})(`+strconv.Quote("http://127.0.0.1:"+port)+`)`, chromedp.EvalAwaitPromise))
	for name, v := range escapes {
		t.Logf("from inside the frame, %s: %s", name, v)
		if !strings.HasPrefix(v, "blocked") {
			t.Errorf("from inside the frame, %s was %s", name, v)
		}
	}
	if len(escapes) < 30 {
		t.Errorf("only %d escape attempts ran: %v", len(escapes), escapes)
	}
	// The frame navigating itself away: the host's frame-src stops it.
	run(t, frame, "navigate away", chromedp.Evaluate[chromedp.Void](`setTimeout(() => { location = "http://127.0.0.1:`+port+`/navigate"; }, 0); undefined`))
	time.Sleep(time.Second)
	if got := listener.requests(); len(got) > 0 {
		t.Errorf("the listener on 127.0.0.1 was reached from the sandbox: %q", got)
	}
	t.Logf("%d ways out tried from inside the frame, none reached the listener", len(escapes)+1)

	// A reload: a new frame, a new channel, and the count is still there.
	do(t, ctx, "reload the launcher", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`iframe.app-frame`)))
	frame = sandboxXFrame(t, ctx, "Counter")
	sandboxXWait(t, frame, "the stored count after a reload", sandboxXText("#count", "Count: 2"))

	// A throwing app shows what it threw, with the stack.
	do(t, ctx, "the broken app", browsertest.Click(chromedp.CSS(`#app-tab-app_broken`)), chromedp.WaitVisible(chromedp.CSS(`iframe[data-instance-id=app_broken]`)))
	frame = sandboxXFrame(t, ctx, "Broken chart")
	sandboxXWait(t, frame, "its error", `document.querySelector(".app-error") !== null`)
	shown := run(t, frame, "error text", chromedp.Evaluate[map[string]string](`({message: document.querySelector(".app-error-message").innerText, stack: document.querySelector(".app-error-stack")?.innerText ?? "", role: document.querySelector(".app-error").getAttribute("role")})`))
	if shown["message"] != "Error: the chart has no data: pass data to Chart" || !strings.Contains(shown["stack"], "Chart") || shown["role"] != "alert" {
		t.Errorf("the broken app shows %v; want its message and a stack naming Chart", shown)
	}
	browsertest.Screenshot(t, ctx, "app-error")

	// A repository app: its pinned version and build, no frame.
	do(t, ctx, "keyboard to the repository app", chromedp.Focus(chromedp.CSS(`#app-tab-app_broken`)), chromedp.KeyEvent(kb.ArrowRight),
		waitText(".app-panel", "This path does not build or deploy a bundle."))
	if f := run(t, ctx, "focused tab", chromedp.Evaluate[string](`document.activeElement.id`)); f != "app-tab-app_repo" {
		t.Errorf("ArrowRight focused %q, want the next tab", f)
	}
	panel := run(t, ctx, "repository panel", chromedp.Text(chromedp.CSS(`.app-panel`)))
	for _, want := range []string{"acme/deploy-board", "v_8f3a2c1", "not built"} {
		if !strings.Contains(panel, want) {
			t.Errorf("the repository app's panel does not show %q:\n%s", want, panel)
		}
	}
	if n := run(t, ctx, "frames", chromedp.Evaluate[int](`document.querySelectorAll("iframe").length`)); n != 0 {
		t.Errorf("a repository app has %d frames", n)
	}

	// Reorder from the keyboard: Alt+Shift+ArrowLeft moves the tab left.
	do(t, ctx, "move left", chromedp.KeyEvent(kb.ArrowLeft, chromedp.KeyModifiers(chromedp.ModifierAlt, chromedp.ModifierShift)), waitText(".notice", "moved to place 2"))
	tabs = run(t, ctx, "tabs", chromedp.Evaluate[[]string](`[...document.querySelectorAll("[role=tab]")].map(b => b.dataset.instanceId)`))
	if strings.Join(tabs, ",") != "app_counter,app_repo,app_broken" || rooms.order() != "app_counter,app_repo,app_broken" {
		t.Errorf("after moving Deploy board left: the page has %v, the server %s", tabs, rooms.order())
	}
	// Rename.
	do(t, ctx, "rename", browsertest.Click(chromedp.CSS(`.app-actions button`)), chromedp.WaitVisible(chromedp.ID("app-name")),
		selectAll("#app-name"), chromedp.SendKeys(chromedp.ID("app-name"), "  Deploys  "), browsertest.Click(chromedp.CSS(`#rename-app-title ~ form button[type=submit]`)),
		waitText("#app-tab-app_repo", "Deploys"))
	if n := rooms.name("app_repo"); n != "Deploys" {
		t.Errorf("renamed on the server to %q, want Deploys", n)
	}
	// Another writer moves the Room on: the next change is refused (412),
	// the page says so and shows the Room as it is.
	rooms.mu.Lock()
	rooms.version += 2
	rooms.apps[0].Name = "Counter (shared)"
	rooms.mu.Unlock()
	do(t, ctx, "move right, stale", browsertest.Click(chromedp.CSS(`.app-actions button[aria-label="Move right: Deploys"]`)), waitText(".notice", "changed meanwhile"),
		waitText("#app-tab-app_counter", "Counter (shared)"))
	if rooms.order() != "app_counter,app_repo,app_broken" {
		t.Errorf("a refused move changed the order: %s", rooms.order())
	}
	// Drag a tab onto the first one: it takes its place.
	do(t, ctx, "drag a tab", chromedp.DragAndDrop(chromedp.CSS(`#app-tab-app_broken`), chromedp.CSS(`#app-tab-app_counter`)), waitText(".notice", "Broken chart moved to place 1"))
	if rooms.order() != "app_broken,app_counter,app_repo" {
		t.Errorf("after dragging Broken chart first the server has %s", rooms.order())
	}
	// Remove, with a confirmation first.
	do(t, ctx, "remove: cancel", browsertest.Click(chromedp.CSS(`.app-actions .danger-text`)), chromedp.WaitVisible(chromedp.CSS(`dialog[open] .danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] .secondary`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if rooms.order() != "app_broken,app_counter,app_repo" {
		t.Errorf("Cancel removed an app: %s", rooms.order())
	}
	do(t, ctx, "remove", browsertest.Click(chromedp.CSS(`.app-actions .danger-text`)), chromedp.WaitVisible(chromedp.CSS(`dialog[open] .danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] .danger`)), waitText(".notice", "is removed"))
	if rooms.order() != "app_broken,app_counter" {
		t.Errorf("after Remove the server has %s", rooms.order())
	}
	tabs = run(t, ctx, "tabs", chromedp.Evaluate[[]string](`[...document.querySelectorAll("[role=tab]")].map(b => b.dataset.instanceId)`))
	if strings.Join(tabs, ",") != "app_broken,app_counter" {
		t.Errorf("after Remove the page has %v", tabs)
	}

	// A phone.
	do(t, ctx, "the counter again", browsertest.Click(chromedp.CSS(`#app-tab-app_counter`)), chromedp.WaitVisible(chromedp.CSS(`iframe[data-instance-id=app_counter]`)))
	do(t, ctx, "phone width", browsertest.Phone())
	frame = sandboxXFrame(t, ctx, "Counter (shared)")
	sandboxXWait(t, frame, "the app on a phone", sandboxXText("#count", "Count: 2"))
	noOverflow(t, ctx, "launcher at 390 px")
	browsertest.Screenshot(t, ctx, "launcher-phone")
	do(t, ctx, "desktop width", browsertest.Desktop())

	// A Room with no apps, for a member who does not manage it.
	do(t, ctx, "an empty Room", chromedp.Navigate(e.URL+"/rooms/room_empty"), waitText(".content", "No apps in this Room yet"))
	if n := run(t, ctx, "manage buttons", chromedp.Evaluate[int](`document.querySelectorAll(".app-actions").length`)); n != 0 {
		t.Errorf("a Room the person does not manage shows %d sets of manage buttons", n)
	}
	accessible(t, ctx, "room-empty")
}

func (s *sandboxXRooms) order() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, a := range s.apps {
		ids = append(ids, a.InstanceID)
	}
	return strings.Join(ids, ",")
}

func (s *sandboxXRooms) name(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.apps {
		if a.InstanceID == id {
			return a.Name
		}
	}
	return ""
}

// TestBrowserSandboxErrors: an app that throws while its script loads, one
// whose promise fails unhandled, and one with no default export each show
// a readable error in the frame, never a blank one.
func TestBrowserSandboxErrors(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	rooms := &sandboxXRooms{rooms: true, version: 1, apps: []*sandboxXApp{
		{InstanceID: "app_load", Name: "Throws at load", Kind: "snippet", js: "var __foundryApp = (() => { const cfg = undefined; return { default: cfg.widget }; })();\n"},
		{InstanceID: "app_reject", Name: "Rejects", Kind: "snippet", js: `var __foundryApp = (() => {
  const { React, jsxRuntime } = globalThis.__foundry;
  function App() {
    React.useEffect(() => { Promise.reject(new RangeError("the page size must be 1 to 100")); }, []);
    return jsxRuntime.jsx("p", { id: "ok", children: "started" });
  }
  return { default: App };
})();
`},
		{InstanceID: "app_nodefault", Name: "No default", Kind: "snippet", js: "var __foundryApp = (() => ({ App: 1 }))();\n"},
	}}
	do(t, ctx, "open the Room", chromedp.Navigate(e.URL+"/rooms"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "signed in", chromedp.WaitVisible(chromedp.ID("rooms-title")))
	sandboxXIntercept(t, ctx, rooms)
	do(t, ctx, "the launcher", chromedp.Navigate(e.URL+"/rooms/"+sandboxXRoomID), chromedp.WaitVisible(chromedp.CSS(`iframe[data-instance-id=app_load]`)))
	for _, c := range []struct{ tab, name, message, stack string }{
		{"app_load", "Throws at load", "TypeError: Cannot read properties of undefined (reading 'widget')", "blob:"},
		{"app_reject", "Rejects", "RangeError: the page size must be 1 to 100", "blob:"},
		{"app_nodefault", "No default", "src/App.tsx has no default export", ""},
	} {
		do(t, ctx, "open "+c.tab, browsertest.Click(chromedp.ID("app-tab-"+c.tab)), chromedp.WaitVisible(chromedp.CSS(`iframe[data-instance-id=`+c.tab+`]`)))
		frame := sandboxXFrame(t, ctx, c.name)
		sandboxXWait(t, frame, c.tab+" shows its error", `document.querySelector(".app-error") !== null`)
		shown := run(t, frame, "error text", chromedp.Evaluate[map[string]string](`({message: document.querySelector(".app-error-message").innerText, stack: document.querySelector(".app-error-stack")?.innerText ?? ""})`))
		if !strings.Contains(shown["message"], c.message) || !strings.Contains(shown["stack"], c.stack) {
			t.Errorf("%s shows %v; want %q with a stack holding %q", c.tab, shown, c.message, c.stack)
		}
	}
}
