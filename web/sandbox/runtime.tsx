// The sandbox runtime: the one script of the page that runs a Room's app.
// The page has an opaque origin and no network (its policy), so the app's
// code reaches the world only through the port the embedding page gives it.
import { lockdown } from "./lockdown";
lockdown();

import * as React from "react";
import * as ReactDOM from "react-dom";
import * as ReactDOMClient from "react-dom/client";
import * as jsxRuntime from "react/jsx-runtime";
import { answer, attach, storage, useStoredState } from "./storage";
import "./runtime.css";

type AppModule = { default?: unknown };

const g = globalThis as unknown as { __foundry?: unknown; __foundryApp?: AppModule };
Object.defineProperty(globalThis, "__foundry", {
  value: Object.freeze({ React, ReactDOM, ReactDOMClient, jsxRuntime, storage: Object.freeze({ storage, useStoredState, ...storage }) }),
  writable: false,
  configurable: false,
});

const rootEl = document.getElementById("root");
let shown = false;

// showError replaces the app with what went wrong, in plain DOM, so that it
// shows even when React itself is what broke.
function showError(title: string, err: unknown) {
  if (shown || !rootEl) return;
  shown = true;
  const e = err instanceof Error ? err : null;
  const message = e ? e.name + ": " + e.message : typeof err === "string" ? err : safeString(err);
  const box = document.createElement("div");
  box.className = "app-error";
  box.setAttribute("role", "alert");
  const h = document.createElement("h1");
  h.textContent = title;
  const p = document.createElement("p");
  p.className = "app-error-message";
  p.textContent = message;
  box.append(h, p);
  if (e?.stack) {
    const pre = document.createElement("pre");
    pre.className = "app-error-stack";
    pre.textContent = e.stack;
    box.append(pre);
  }
  rootEl.replaceChildren(box);
  post({ type: "error", message });
}

function safeString(v: unknown): string {
  try {
    return String(v);
  } catch {
    return "an error that cannot be shown";
  }
}

class Boundary extends React.Component<{ children: React.ReactNode }, { error: unknown }> {
  state = { error: null as unknown };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  componentDidCatch(error: unknown) {
    showError("This app stopped with an error", error);
  }
  render() {
    return this.state.error ? null : this.props.children;
  }
}

window.addEventListener("error", (ev) => showError("This app stopped with an error", ev.error ?? ev.message));
window.addEventListener("unhandledrejection", (ev) => showError("This app stopped with an error", ev.reason));

let port: MessagePort | null = null;
function post(msg: unknown) {
  port?.postMessage(msg);
}

// The page that embeds this frame is this server's page: its origin is the
// origin of this page's address (the document's own origin is opaque).
const expected = new URL(location.href).origin;

function onFirst(ev: MessageEvent) {
  if (ev.source !== window.parent || ev.origin !== expected) return;
  const data = ev.data as { type?: unknown } | null;
  if (!data || data.type !== "foundry:connect" || ev.ports.length !== 1) return;
  window.removeEventListener("message", onFirst);
  port = ev.ports[0];
  attach(port);
  port.onmessage = (m) => {
    const msg = m.data as { type?: unknown } | null;
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "storage-result") answer(msg as Parameters<typeof answer>[0]);
    else if (msg.type === "load") load(msg as { js?: unknown; css?: unknown; name?: unknown });
  };
  post({ type: "hello" });
}
window.addEventListener("message", onFirst);

let loaded = false;
function load(msg: { js?: unknown; css?: unknown; name?: unknown }) {
  if (loaded) return;
  loaded = true;
  if (typeof msg.js !== "string") {
    showError("This app could not start", "Its code did not arrive.");
    return;
  }
  if (typeof msg.name === "string") document.title = msg.name;
  if (typeof msg.css === "string" && msg.css !== "") {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = URL.createObjectURL(new Blob([msg.css], { type: "text/css" }));
    document.head.append(link);
  }
  const script = document.createElement("script");
  script.src = URL.createObjectURL(new Blob([msg.js], { type: "text/javascript" }));
  script.onload = start;
  script.onerror = () => showError("This app could not start", "Its script did not load.");
  document.head.append(script);
}

function start() {
  if (shown || !rootEl) return;
  const App = g.__foundryApp?.default;
  if (typeof App !== "function" && !(App && typeof App === "object")) {
    showError("This app could not start", "src/App.tsx has no default export that is a component: add `export default function App() { … }`.");
    return;
  }
  try {
    ReactDOMClient.createRoot(rootEl, {
      onUncaughtError: (err) => showError("This app stopped with an error", err),
    }).render(
      <Boundary>{React.createElement(App as React.ComponentType)}</Boundary>,
    );
    post({ type: "started" });
  } catch (err) {
    showError("This app stopped with an error", err);
  }
}
