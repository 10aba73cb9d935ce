import { api } from "../api";
import { Hub, type Port } from "./hub";
import { PING_MS, PROPOSALS, type FromHub, type HubState, type ToHub, type Topic } from "./protocol";

// The page's live connection: every subscription of the page (the open
// Note, the approvals badge and inbox) goes through it, and it asks the
// hub for the union of their topics. The hub is, in order of preference:
// the SharedWorker every tab of the origin shares (one stream for the
// whole browser); where there is none, the hub of the tab elected leader
// over a BroadcastChannel (a Web Lock elects it); else a hub of the
// page's own. On pagehide the page says bye and lets go of the hub (a
// page kept in the back/forward cache holds no stream); on pageshow from
// that cache it says hello again and reads what it follows anew, since
// what was written meanwhile never reached it.

// The worker's address, set by the bundle's build (internal/web/bundle).
declare const FOUNDRY_LIVE_WORKER: string | undefined;
const workerURL = typeof FOUNDRY_LIVE_WORKER === "string" ? FOUNDRY_LIVE_WORKER : "";

// HI_MS is how long a page waits for a hub to answer its hello before it
// takes the next kind of hub (a worker that failed to start says nothing).
const HI_MS = 5000;

type Transport = { kind: Kind; send(m: ToHub): void; close(): void };
type Kind = "shared" | "leader" | "page";

export type Listener = (m: FromHub) => void;

// asynchronous delivers as a port does: never inside the call that sent.
function asynchronous(deliver: (m: FromHub) => void): Port {
  return { post: (m) => queueMicrotask(() => deliver(m)) };
}

function sharedWorker(deliver: (m: FromHub) => void, fail: () => void): Transport | null {
  if (!workerURL || typeof SharedWorker !== "function") return null;
  let w: SharedWorker;
  try {
    w = new SharedWorker(workerURL, { name: "foundry-live" });
  } catch {
    return null;
  }
  w.addEventListener("error", fail);
  w.port.onmessage = (e: MessageEvent) => deliver(e.data as FromHub);
  w.port.start();
  return {
    kind: "shared",
    send: (m) => w.port.postMessage(m),
    close: () => {
      w.removeEventListener("error", fail);
      w.port.onmessage = null;
      w.port.close();
    },
  };
}

// Between the pages of the leader election: a page's message to the hub
// (from), or the hub's to one page (to), or the new leader asking every
// page to say hello to it (lead).
type Relay = { from?: string; to?: string; m?: unknown; lead?: true };

// relead is called when a leader (this page or another) starts a hub.
function leader(id: string, deliver: (m: FromHub) => void, relead: () => void): Transport | null {
  if (typeof BroadcastChannel !== "function" || typeof navigator === "undefined" || !navigator.locks) return null;
  const bc = new BroadcastChannel("foundry-live");
  const local = asynchronous(deliver);
  const ports = new Map<string, Port>();
  const portOf = (to: string) => {
    let p = ports.get(to);
    if (!p) ports.set(to, (p = { post: (m) => bc.postMessage({ to, m } satisfies Relay) }));
    return p;
  };
  let hub: Hub | null = null;
  let release: (() => void) | undefined;
  const abort = new AbortController();
  bc.onmessage = (e: MessageEvent) => {
    const r = e.data as Relay;
    if (r === null || typeof r !== "object") return;
    if (hub) {
      if (typeof r.from === "string") hub.receive(r.m, portOf(r.from));
    } else if (r.to === id && r.m) {
      deliver(r.m as FromHub);
    } else if (r.lead) {
      relead();
    }
  };
  navigator.locks
    .request("foundry-live", { signal: abort.signal }, () => {
      hub = new Hub(api.live);
      bc.postMessage({ lead: true } satisfies Relay);
      relead();
      return new Promise<void>((r) => (release = r));
    })
    .catch(() => {}); // aborted: the page went before it led
  return {
    kind: "leader",
    send: (m) => {
      if (hub) hub.receive(m, local);
      else bc.postMessage({ from: id, m } satisfies Relay);
    },
    close: () => {
      abort.abort();
      hub?.close();
      hub = null;
      release?.();
      bc.close();
    },
  };
}

function ownHub(deliver: (m: FromHub) => void): Transport {
  const hub = new Hub(api.live);
  const local = asynchronous(deliver);
  let id = "";
  return {
    kind: "page",
    send: (m) => {
      id = hub.receive(m, local) || id;
    },
    close: () => {
      if (id) hub.bye(id);
      hub.idle();
    },
  };
}

function newID(): string {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export class PageLive {
  readonly id = newID();
  private subs = new Map<Topic, Set<Listener>>();
  private watchers = new Set<(s: HubState) => void>();
  state: HubState = { state: "connecting", reason: "" };
  private t: Transport | null = null;
  private skip = new Set<Kind>(); // kinds of hub that did not answer
  private said = ""; // the topics of the last hello
  private queued = false;
  private pinger: ReturnType<typeof setInterval> | undefined;
  private waitHi: ReturnType<typeof setTimeout> | undefined;
  private hidden = false;
  private heard = false; // a hub has answered this page's hello

  constructor() {
    // A page that goes (closed, or into the back/forward cache) or is
    // frozen (a background tab the browser stops running) lets go of the
    // hub; back, it says hello again.
    addEventListener("pagehide", () => this.leave());
    addEventListener("pageshow", (e) => {
      if ((e as PageTransitionEvent).persisted) this.back("The page was in the browser's back/forward cache.");
    });
    document.addEventListener("freeze", () => this.leave());
    document.addEventListener("resume", () => this.back("The page was frozen by the browser."));
  }

  private leave() {
    if (this.hidden) return;
    this.hidden = true;
    this.disconnect();
  }

  private back(why: string) {
    if (!this.hidden) return;
    this.hidden = false;
    this.said = "";
    this.announce();
    // What was written while the page was away never reached it.
    this.resyncAll(why);
  }

  // kind is the hub the page reaches ("" before it needs one).
  get kind(): string {
    return this.t?.kind ?? "";
  }

  subscribe(topic: Topic, fn: Listener): () => void {
    let set = this.subs.get(topic);
    if (!set) this.subs.set(topic, (set = new Set()));
    set.add(fn);
    this.announce();
    return () => {
      const s = this.subs.get(topic);
      s?.delete(fn);
      if (s && s.size === 0) this.subs.delete(topic);
      this.announce();
    };
  }

  // watch hears the hub's state, now and whenever it changes.
  watch(fn: (s: HubState) => void): () => void {
    this.watchers.add(fn);
    fn(this.state);
    return () => this.watchers.delete(fn);
  }

  private topics(): Topic[] {
    return [...this.subs.keys()].sort();
  }

  // announce says hello with the page's topics, once for every change
  // made in one task.
  private announce() {
    if (this.queued || this.hidden) return;
    this.queued = true;
    queueMicrotask(() => {
      this.queued = false;
      if (this.hidden) return;
      const topics = this.topics();
      if (!this.t) {
        if (topics.length === 0) return;
        this.connect();
      }
      const key = topics.join("\n");
      if (key === this.said) return;
      this.said = key;
      this.t?.send({ t: "hello", client: this.id, topics });
    });
  }

  private connect() {
    const deliver = (m: FromHub) => this.deliver(m);
    const fail = () => this.fallBack();
    this.t =
      (!this.skip.has("shared") && sharedWorker(deliver, fail)) ||
      (!this.skip.has("leader") && leader(this.id, deliver, () => this.relead())) ||
      ownHub(deliver);
    clearTimeout(this.waitHi);
    this.waitHi = setTimeout(fail, HI_MS);
    clearInterval(this.pinger);
    this.pinger = setInterval(() => this.t?.send({ t: "ping", client: this.id }), PING_MS);
  }

  // hello says the page's topics again (to a new leader, or to a hub that
  // lost the page).
  private hello() {
    this.said = "";
    this.announce();
  }

  // relead says hello to a new leader's hub; if another led before, what
  // was written while none led never reached the page.
  private relead() {
    this.hello();
    if (this.heard) this.resyncAll("Another tab now holds the live connection.");
  }

  // fallBack leaves a hub that did not answer for the next kind.
  private fallBack() {
    const t = this.t;
    if (!t || t.kind === "page") return;
    this.skip.add(t.kind);
    this.disconnect();
    this.announce();
  }

  private disconnect() {
    clearInterval(this.pinger);
    clearTimeout(this.waitHi);
    this.pinger = undefined;
    if (this.t) {
      this.t.send({ t: "bye", client: this.id });
      this.t.close();
    }
    this.t = null;
    this.said = "";
  }

  private deliver(m: FromHub) {
    if (this.hidden || m === null || typeof m !== "object") return;
    switch (m.t) {
      case "hi":
        this.heard = true;
        clearTimeout(this.waitHi);
        return;
      case "who":
        // The hub dropped this page (its pings came too late): say hello
        // again, and read anew what may have been missed meanwhile.
        this.hello();
        this.resyncAll("The page was not heard from for a while.");
        return;
      case "state":
        if (m.state === this.state.state && m.reason === this.state.reason) return;
        this.state = { state: m.state, reason: m.reason };
        for (const w of this.watchers) w(this.state);
        return;
      case "proposals":
        this.tell(PROPOSALS, m);
        return;
      default:
        this.tell(m.topic, m);
    }
  }

  private tell(topic: Topic, m: FromHub) {
    for (const fn of this.subs.get(topic) ?? []) fn(m);
  }

  private resyncAll(reason: string) {
    for (const topic of this.subs.keys()) if (topic !== PROPOSALS) this.tell(topic, { t: "resync", topic, reason });
  }
}

let page: PageLive | null = null;

// pageLive is the page's one live connection.
export function pageLive(): PageLive {
  page ??= new PageLive();
  return page;
}
