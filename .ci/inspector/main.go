// Command inspector drives the MCP Inspector's web UI in headless Chromium
// as a person would: add Foundry by its URL, connect, list the tools, call
// list_notes, follow the Inspector into Foundry's sign-in and consent pages
// (on connecting in the Legacy era, at the first tool call in the Modern
// one), and see the Welcome Note in the result. Run by .ci/inspector-check,
// which starts Foundry and the Inspector first. With -foundry and -data it
// then revokes the connection and connects again through a new consent.
//
// Chromium resolves no name but localhost, so a page can reach nothing but
// this machine; what the pages tried to fetch elsewhere is printed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// step bounds each wait for the page to get somewhere.
const step = 30 * time.Second

func main() {
	inspector := flag.String("inspector", "", "the Inspector's URL, with its MCP_INSPECTOR_API_TOKEN query parameter")
	mcpURL := flag.String("mcp", "", "Foundry's MCP endpoint, http://127.0.0.1:PORT/mcp")
	email := flag.String("email", "owner@localhost", "the person who signs in")
	shots := flag.String("shots", "", "folder for the screenshots inspector-*.png (none when empty)")
	bin := flag.String("foundry", "", "the foundry binary, to revoke the Inspector's connection at the end (skipped when empty)")
	data := flag.String("data", "", "Foundry's --data folder, for -foundry")
	era := flag.String("era", "legacy", "the Inspector's protocol era for Foundry: legacy (2025-11-25), modern (2026-07-28) or auto")
	flag.Parse()
	password := os.Getenv("FOUNDRY_PASSWORD")
	if *inspector == "" || *mcpURL == "" || password == "" {
		fmt.Fprintln(os.Stderr, "usage: FOUNDRY_PASSWORD=… inspector -inspector URL -mcp URL [-shots DIR] [-era legacy|modern|auto] [-email EMAIL]")
		os.Exit(2)
	}
	label, ok := eras[*era]
	if !ok {
		fmt.Fprintf(os.Stderr, "-era %q: use legacy, modern or auto\n", *era)
		os.Exit(2)
	}
	if err := run(*inspector, *mcpURL, *email, password, *shots, label, *bin, *data); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("PASS (protocol era " + *era + "): the MCP Inspector connected to Foundry by URL alone, signed in through OAuth, listed 17 tools and called list_notes")
	if *bin != "" {
		fmt.Println("PASS (protocol era " + *era + "): after foundry connections revoke, its next call was refused and it connected again through a new consent")
	}
}

// eras are the Inspector's protocol eras, by the start of their label in
// its server settings, and the revision each must end up speaking.
var eras = map[string]struct{ option, revision string }{
	"legacy": {"Legacy", "2025-11-25"},
	"modern": {"Modern", "2026-07-28"},
	"auto":   {"Auto", "2026-07-28"},
}

func run(inspector, mcpURL, email, password, shots string, era struct{ option, revision string }, bin, data string) error {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		chromium = "/usr/bin/chromium"
	}
	prof, err := os.MkdirTemp("", "inspector-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(prof)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.WindowSize(1440, 1000),
		chromedp.UserDataDir(prof),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
	}
	for _, f := range []string{"headless", "no-sandbox", "disable-gpu", "disable-background-networking", "disable-component-update", "disable-sync"} {
		opts = append(opts, chromedp.Flag(f, true))
	}
	base, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()

	var mu sync.Mutex
	var outside, foundry []string
	saved := 0 // answers to the Inspector's saves of a server's settings
	puts := map[network.RequestID]bool{}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventLoadingFinished); ok {
			mu.Lock()
			if puts[e.RequestID] {
				saved++
			}
			mu.Unlock()
			return
		}
		e, ok := ev.(*network.EventRequestWillBeSent)
		if !ok || e.Request == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if e.Request.Method == "PUT" && strings.Contains(e.Request.URL, "/api/servers/") {
			puts[e.RequestID] = true
		}
		u, err := url.Parse(e.Request.URL)
		if err != nil {
			outside = append(outside, e.Request.URL)
			return
		}
		switch {
		case u.Scheme == "data" || u.Scheme == "blob" || u.Scheme == "about":
		case u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost":
			if mu, _ := url.Parse(mcpURL); mu != nil && u.Host == mu.Host {
				foundry = append(foundry, e.Request.Method+" "+u.Path)
			}
		default:
			if !slices.Contains(outside, e.Request.URL) {
				outside = append(outside, e.Request.URL)
			}
		}
	}); err != nil {
		return err
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		return fmt.Errorf("starting Chromium (%s): %w", chromium, err)
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf("the browser itself reached Foundry with: %s\n", strings.Join(slices.Compact(foundry), ", "))
		if len(outside) > 0 {
			fmt.Printf("note: the pages asked for %d URL(s) beyond this machine; none was resolved: %s\n", len(outside), strings.Join(outside, " "))
		}
	}()

	say := func(format string, a ...any) { fmt.Printf("ok: "+format+"\n", a...) }
	shot := func(name string) error {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			return fmt.Errorf("screenshot %s: %w", name, err)
		}
		if shots == "" {
			return nil
		}
		p := filepath.Join(shots, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			return err
		}
		say("screenshot %s (%d KB)", p, len(png)/1024)
		return nil
	}

	// The page helpers: click a button by its text, find a dialog.
	const helpers = `window.__click = (text, root) => {
	  const el = [...(root || document).querySelectorAll("button, [role=option], a")].find(b => b.innerText.trim() === text);
	  if (!el) return false;
	  el.click();
	  return true;
	};
	window.__body = () => document.body.innerText;
	true`
	// poll evaluates js until it is true, for at most step; a page that
	// navigates meanwhile (the OAuth redirects) is simply evaluated again.
	poll := func(js string) bool {
		deadline := time.Now().Add(step)
		for time.Now().Before(deadline) {
			if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
				return true
			}
			if ctx.Err() != nil {
				return false
			}
			time.Sleep(200 * time.Millisecond)
		}
		return false
	}
	click := func(what, text string, root string) error {
		if root == "" {
			root = "document"
		}
		js := fmt.Sprintf(`!!window.__click && !!(%s) && window.__click(%q, %s)`, root, text, root)
		if !poll(js) {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			return fmt.Errorf("%s: no %q to click within %s; at %s the page reads:\n%s", what, text, step, loc, clip(body))
		}
		return nil
	}
	waitText := func(what, text string) error {
		js := fmt.Sprintf(`!!document.body && document.body.innerText.includes(%q)`, text)
		if !poll(js) {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			return fmt.Errorf("%s: %q did not appear within %s at %s; the page reads:\n%s", what, text, step, loc, clip(body))
		}
		return nil
	}
	inject := func() error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](helpers))
		return err
	}

	// The Inspector's connections from before this run (another era's).
	var earlier []string
	if bin != "" {
		if earlier, err = inspectorConnections(bin, data); err != nil {
			return err
		}
	}

	// 1. Open the Inspector with its API token.
	if err := chromedp.Do(ctx, chromedp.Navigate(inspector)); err != nil {
		return fmt.Errorf("open the Inspector: %w", err)
	}
	if err := waitText("the Inspector's server list", "Add Servers"); err != nil {
		return err
	}
	if err := inject(); err != nil {
		return err
	}
	say("the Inspector is open")

	// 2. Add Foundry by URL: Add Servers → + Add manually → streamable-http.
	if err := click("add a server", "Add Servers", ""); err != nil {
		return err
	}
	if err := click("add a server", "+ Add manually", ""); err != nil {
		return err
	}
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`[role=dialog] input[placeholder="my-server"]`)),
		chromedp.SendKeys(chromedp.CSS(`[role=dialog] input[placeholder="my-server"]`), "foundry"),
		chromedp.Click(chromedp.CSS(`[role=dialog] input[value="stdio (local process)"]`)),
	); err != nil {
		return fmt.Errorf("the Add server form: %w", err)
	}
	if err := click("choose the transport", "streamable-http", ""); err != nil {
		return err
	}
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`[role=dialog] input[placeholder="https://example.com/mcp"]`)),
		chromedp.SendKeys(chromedp.CSS(`[role=dialog] input[placeholder="https://example.com/mcp"]`), mcpURL),
	); err != nil {
		return fmt.Errorf("the server URL field: %w", err)
	}
	if err := click("add the server", "Add", `document.querySelector("[role=dialog]")`); err != nil {
		return err
	}
	say("added server foundry, Streamable HTTP, %s", mcpURL)

	// The protocol era is a setting of the server (Settings on its card →
	// Options). The card is the nearest box around its connect switch that
	// has a Settings button.
	openSettings := `(() => {
	  let el = document.querySelector('input[aria-label="Connect or disconnect \\"foundry\\""]');
	  for (; el && el !== document.body; el = el.parentElement) {
	    const b = [...el.querySelectorAll("button")].find(b => b.innerText.trim() === "Settings");
	    if (b) { b.click(); return true; }
	  }
	  return false;
	})()`
	settings := `[...document.querySelectorAll("[role=dialog]")].find(d => d.innerText.includes("Server Settings") && d.getClientRects().length > 0)`
	closeSettings := func() error {
		if !poll(`(() => { const d = ` + settings + `; const c = d && d.querySelector("button[aria-label=Close]"); if (!c) return false; c.click(); return true; })()`) {
			return errors.New("no Close button on the server settings")
		}
		if !poll(`!(` + settings + `)`) {
			return errors.New("the server settings did not close")
		}
		return nil
	}
	if era.option != "Legacy" {
		if !poll(openSettings) {
			return errors.New("no Settings button on the foundry server card")
		}
		if !poll(`(() => { const i = document.querySelector('[role=dialog] input[value^="Legacy"]'); if (!i) return false; i.click(); return true; })()`) {
			return errors.New("no Protocol Era choice in the server settings")
		}
		mu.Lock()
		before := saved
		mu.Unlock()
		if !poll(fmt.Sprintf(`(() => { const o = [...document.querySelectorAll("[role=option]")].find(o => o.innerText.startsWith(%q)); if (!o) return false; o.click(); return true; })()`, era.option)) {
			return fmt.Errorf("no %q protocol era to choose", era.option)
		}
		// The Inspector saves a setting a moment after it changes (PUT
		// /api/servers/ID); closing the settings before that drops it.
		for i := 0; ; i++ {
			mu.Lock()
			done := saved > before
			mu.Unlock()
			if done {
				break
			}
			if i == 150 {
				return errors.New("the Inspector did not save the protocol era within 30 s (no PUT /api/servers/… answered)")
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err := closeSettings(); err != nil {
			return err
		}
		// Open the settings again: the era is kept.
		if !poll(openSettings) {
			return errors.New("no Settings button on the foundry server card")
		}
		if !poll(fmt.Sprintf(`!!document.querySelector('[role=dialog] input[value^=%q]')`, era.option)) {
			return fmt.Errorf("the server settings do not keep the protocol era %q", era.option)
		}
		if err := closeSettings(); err != nil {
			return err
		}
		say("chose the protocol era %s; the server settings keep it", era.option)
	}

	// 3. Connect.
	// The switch's input is drawn over by its track, so it is clicked as
	// the page's own handler sees a click: on the element.
	toggle := `document.querySelector('input[aria-label="Connect or disconnect \\"foundry\\""]')`
	if !poll(`(() => { const t = ` + toggle + `; if (!t) return false; t.click(); return true; })()`) {
		return fmt.Errorf("no connect switch for foundry within %s", step)
	}
	// signIn follows the Inspector into Foundry's sign-in page (in the same
	// tab), signs in, approves what the consent page offers, and waits to
	// be back in the Inspector.
	approve := chromedp.CSS(`button[value=approve]`)
	signIn := func(why string) error {
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("password"))); err != nil {
			return fmt.Errorf("the Inspector did not reach Foundry's sign-in page (%s): %w", why, err)
		}
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		say("the Inspector followed the 401 of %s to %s", why, clipURL(loc))
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID("email"), email),
			chromedp.SendKeys(chromedp.ID("password"), password),
			chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		); err != nil {
			return fmt.Errorf("sign in: %w", err)
		}
		// Consent: approve what the page offers.
		if err := chromedp.Do(ctx, chromedp.WaitVisible(approve)); err != nil {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			return fmt.Errorf("no consent page after signing in as %s: %w; the page reads:\n%s", email, err, clip(body))
		}
		consent, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		say("signed in as %s; the consent page reads:\n%s", email, indent(consent))
		if err := shot("inspector-consent"); err != nil {
			return err
		}
		if err := chromedp.Do(ctx, chromedp.Click(approve)); err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		if err := waitText("back in the Inspector", "Authorization complete"); err != nil {
			return err
		}
		loc, _ = chromedp.Run(ctx, chromedp.Location())
		say("back in the Inspector at %s: Authorization complete", loc)
		return inject()
	}
	// On 2025-11-25 connecting is initialize, which needs credentials:
	// the Inspector goes through OAuth first. On 2026-07-28 it discovers
	// and lists the tools without them; the first tool call does.
	legacy := era.revision < "2026-07-28"
	if legacy {
		if err := signIn("connecting"); err != nil {
			return err
		}
	}
	if err := waitText("connect", "Connected"); err != nil {
		return err
	}
	got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.body.innerText.match(/MCP \d{4}-\d{2}-\d{2}/) || [""])[0]`))
	if got != "MCP "+era.revision {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		return fmt.Errorf("connected with %q, want MCP %s; the page reads:\n%s", got, era.revision, clip(body))
	}
	say("connected (%s)", got)

	// 4. The tools.
	if !poll(`(() => { const t = document.querySelector("input[value=Tools]"); if (!t) return false; t.click(); return document.body.innerText.includes("Tools ("); })()`) {
		return fmt.Errorf("no Tools tab to open within %s", step)
	}
	if err := waitText("list the tools", "Tools (17)"); err != nil {
		return err
	}
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("button")].map(b => b.innerText.trim()).filter(t => /^[a-z]+(_[a-z]+)+$/.test(t))`))
	if err != nil {
		return err
	}
	names = slices.Compact(names)
	if len(names) != 17 || !slices.Contains(names, "list_notes") {
		return fmt.Errorf("the Tools tab lists %d tools (%v), want Foundry's 17 with list_notes", len(names), names)
	}
	say("the Tools tab lists Foundry's 17 tools: %s", strings.Join(names, " "))
	// The tab change fades the server list out; photograph the tools once
	// it has gone.
	if !poll(`![...document.querySelectorAll("button")].some(b => b.innerText.trim() === "Add Servers" && b.getClientRects().length > 0)`) {
		return errors.New("the server list is still shown on the Tools tab")
	}
	if err := chromedp.Do(ctx, chromedp.Sleep(time.Second)); err != nil {
		return err
	}
	if err := shot("inspector-connected"); err != nil {
		return err
	}

	// 5. Call list_notes. Without credentials yet (2026-07-28) the first
	// call answers 401, and the Inspector follows it into OAuth, to
	// Foundry's sign-in and consent pages, and back; then it calls again.
	if !legacy {
		if err := click("pick list_notes", "list_notes", ""); err != nil {
			return err
		}
		if err := click("call list_notes", "Execute Tool", ""); err != nil {
			return err
		}
		if err := signIn("the first tool call"); err != nil {
			return err
		}
		if err := waitText("still connected", "Tools (17)"); err != nil {
			return err
		}
	}
	if err := click("pick list_notes", "list_notes", ""); err != nil {
		return err
	}
	if err := click("call list_notes", "Execute Tool", ""); err != nil {
		return err
	}
	if err := waitText("the result of list_notes", `"title": "Welcome"`); err != nil {
		return err
	}
	say(`list_notes answered with the Note "Welcome"`)
	if err := shot("inspector-tool-result"); err != nil {
		return err
	}
	if bin == "" {
		return nil
	}

	// 8. Revoke the connection as its owner would, from the command line:
	// the next call is refused (401), and the Inspector asks again. The
	// person is still signed in to Foundry, so it is the consent page.
	live, err := inspectorConnections(bin, data)
	if err != nil {
		return err
	}
	live = slices.DeleteFunc(live, func(id string) bool { return slices.Contains(earlier, id) })
	if len(live) != 1 {
		return fmt.Errorf("foundry connections list shows %d new live connections of the MCP Inspector (%v), want 1", len(live), live)
	}
	id := live[0]
	if out, err := exec.Command(bin, "connections", "revoke", id, "--data", data).CombinedOutput(); err != nil {
		return fmt.Errorf("foundry connections revoke %s: %v: %s", id, err, out)
	}
	say("revoked %s with foundry connections revoke", id)
	if !poll(`(() => { const b = document.querySelector("button[aria-label='Close results']"); if (!b) return false; b.click(); return true; })()`) {
		return errors.New("no Close results button on the result of list_notes")
	}
	if err := click("call list_notes after the revocation", "Execute Tool", ""); err != nil {
		return err
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(approve)); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		return fmt.Errorf("after the revocation the Inspector did not come back to the consent page: %w; at %s the page reads:\n%s", err, loc, clip(body))
	}
	say("the revoked token was refused; the Inspector asked for consent again")
	if err := chromedp.Do(ctx, chromedp.Click(approve)); err != nil {
		return fmt.Errorf("approve again: %w", err)
	}
	// Inspector 2.12.0 exchanges the new code (Foundry answers 200 with
	// new tokens), but when the refusal came in the middle of a session it
	// may stay "Connecting..." until its 30 s timeout and then show
	// "Failed"; a person then switches it off and on again.
	cardState := `(() => {
	  let el = ` + toggle + `;
	  for (; el && el !== document.body; el = el.parentElement) {
	    if ([...el.querySelectorAll("button")].some(b => b.innerText.trim() === "Settings")) {
	      return el.innerText.split("\n").map(l => l.trim()).find(l => ["Connected", "Connecting...", "Disconnected", "Failed"].includes(l)) || "";
	    }
	  }
	  return "";
	})()`
	// settle waits (50 s, past the Inspector's 30 s connect timeout) for
	// the card to end Connected or Failed, or to stay Disconnected for 3 s.
	settle := func() string {
		idle := 0 // polls in a row that found it Disconnected
		for i := 0; i < 250; i++ {
			state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](cardState))
			if state == "Disconnected" {
				idle++
			} else {
				idle = 0
			}
			if state == "Connected" || state == "Failed" || idle == 15 {
				return state
			}
			time.Sleep(200 * time.Millisecond)
		}
		s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](cardState))
		return s
	}
	state := settle()
	for attempt := 1; state != "Connected"; attempt++ {
		if attempt > 3 {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			return fmt.Errorf("the foundry card shows %q after switching it on 3 times; the page reads:\n%s", state, clip(body))
		}
		fmt.Printf("note: after the new consent (its token request answered) the Inspector's card shows %q, not Connected; switching it on again\n", state)
		if !poll(`(() => { const t = ` + toggle + `; if (!t) return false; t.click(); return true; })()`) {
			return fmt.Errorf("no connect switch for foundry within %s", step)
		}
		state = settle()
	}
	if !strings.Contains(mustBody(ctx), "Tools (") {
		if !poll(`(() => { const t = document.querySelector("input[value=Tools]"); if (!t) return false; t.click(); return document.body.innerText.includes("Tools ("); })()`) {
			return fmt.Errorf("no Tools tab to open within %s", step)
		}
	}
	if err := inject(); err != nil {
		return err
	}
	if err := waitText("the tools", "Tools (17)"); err != nil {
		return err
	}
	if err := click("pick list_notes", "list_notes", ""); err != nil {
		return err
	}
	if err := click("call list_notes", "Execute Tool", ""); err != nil {
		return err
	}
	if err := waitText("the result of list_notes", `"title": "Welcome"`); err != nil {
		return err
	}
	say(`connected again: list_notes answered with the Note "Welcome"`)

	return nil
}

// inspectorConnections are the IDs of the live (not revoked) connections
// of the MCP Inspector that foundry connections list shows.
func inspectorConnections(bin, data string) ([]string, error) {
	out, err := exec.Command(bin, "connections", "list", "--data", data).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("foundry connections list: %v: %s", err, out)
	}
	var ids []string
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasPrefix(f[0], "conn_") && f[1] == "oauth" && strings.Contains(line, "MCP Inspector") && f[len(f)-1] == "-" {
			ids = append(ids, f[0])
		}
	}
	return ids, nil
}

func mustBody(ctx context.Context) string {
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return body
}

func clip(s string) string {
	if len(s) > 3000 {
		s = s[:3000] + "…"
	}
	return indent(s)
}

func indent(s string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		b.WriteString("    " + line + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// clipURL drops the query of a sign-in URL (its next= carries the whole
// authorization request) down to its path and first parameters.
func clipURL(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}
