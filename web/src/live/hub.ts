import { PROPOSALS, SILENT_MS, type FromHub, type HubState, type Topic } from "./protocol";

// The hub holds the live stream (GET /api/live) for every page it serves:
// the pages of every tab of the browser when it runs in the SharedWorker
// (worker.ts), or of one tab. It keeps the union of the pages' topics and
// one stream for them (one more per 50 topics, the most one stream takes);
// when the union changes it opens the stream again on the new set, after
// the last event it heard (a short wait first, so that a burst of changes
// reopens it once). A stream that drops is opened again the same way; an
// end (lifetime over, signed out) too, and when that is refused the hub
// stops and tells the pages why. A write event is told to the pages that
// follow its Note, once even when a reopened stream sends it again.

// Opener opens the stream of topics after a cursor ("": from now).
export type Opener = (topics: Topic[], after: string) => EventSource;

// Port is how the hub reaches one page.
export type Port = { post(m: FromHub): void };

type Client = { port: Port; topics: Set<Topic>; seen: number };

// MAX_TOPICS is the most topics one stream takes; MAX_PAGE_TOPICS the
// most one page may follow.
const MAX_TOPICS = 50;
const MAX_PAGE_TOPICS = 200;
// A page's new topic reopens the stream at once (GROW_MS); a topic no page
// follows any more, later (SHRINK_MS): a page that goes is often followed
// by the next page of the same tab, and both changes then reopen it once.
const GROW_MS = 50;
const SHRINK_MS = 2000;
// RECENT is how many event IDs are remembered to drop an event sent again.
const RECENT = 1000;
// A stream that dropped, or was refused without an end before, is opened
// again after these waits; after REFUSALS refusals in a row the hub stops.
const RETRY_MS = [1000, 3000, 10000, 30000];
const REFUSALS = 3;
// SWEEP_MS is how often the hub drops the pages it has not heard from.
const SWEEP_MS = 20_000;

// The longest ID the server takes (service.MaxIDBytes).
const MAX_ID = 200;

// badID finds what the server refuses in an ID (service.BadIDRune):
// control and format characters, line and paragraph separators, lone
// surrogates, noncharacters and U+FFFD.
const badID = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Noncharacter_Code_Point}\uFFFD]/u;

// validTopic says whether the server takes t: a topic it refuses would
// have it refuse the whole stream, everyone's.
export function validTopic(t: Topic): boolean {
  if (t === PROPOSALS) return true;
  if (!t.startsWith("note:")) return false;
  const id = t.slice(5);
  return id.length > 0 && new TextEncoder().encode(id).length <= MAX_ID && !badID.test(id);
}

function parse(data: unknown): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(String(data));
    return v !== null && typeof v === "object" ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

// Stream is one open EventSource and what it has heard.
type Stream = { es: EventSource; topics: Topic[]; cursor: string; ready: boolean; afterEnd: boolean };

export class Hub {
  private clients = new Map<string, Client>();
  private streams: Stream[] = [];
  private cursor = ""; // the last event ID heard, on any stream
  private recent = new Set<string>();
  private pending: number | null = null;
  private gone = new Map<Topic, FromHub & { t: "gone" }>();
  // presence is the newest presence event of each topic, for a page that
  // follows the topic later (the stream sends it as it opens, once).
  private presence = new Map<Topic, FromHub & { t: "presence" }>();
  private state: HubState = { state: "connecting", reason: "" };
  private ended = ""; // why the server last ended a stream
  private refusals = 0;
  private drops = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private due = Infinity; // when timer fires
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(
    private open: Opener,
    private now: () => number = Date.now,
  ) {}

  // receive is a message from the page at port, as it came (a port's
  // message is checked: only a page of this origin can send one, but the
  // hub must not fail on one it cannot read).
  receive(data: unknown, port: Port): string {
    if (data === null || typeof data !== "object") return "";
    const m = data as Partial<Record<"t" | "client" | "topics", unknown>>;
    const id = typeof m.client === "string" && m.client.length > 0 && m.client.length <= 64 ? m.client : "";
    if (!id) return "";
    if (m.t === "hello" && Array.isArray(m.topics)) this.hello(id, port, m.topics.filter((t): t is string => typeof t === "string").slice(0, MAX_PAGE_TOPICS));
    else if (m.t === "ping") this.ping(id, port);
    else if (m.t === "bye") this.bye(id);
    return id;
  }

  // hello adds a page, or changes what it follows.
  hello(id: string, port: Port, topics: Topic[]) {
    const had = this.clients.get(id);
    const c: Client = { port, topics: new Set(), seen: this.now() };
    for (const t of topics) {
      if (validTopic(t)) c.topics.add(t);
      else if (t.startsWith("note:")) port.post({ t: "gone", topic: t, reason: "This is not a Note's address.", deleted: false });
    }
    this.clients.set(id, c);
    port.post({ t: "hi" });
    // A page that comes (or comes back) while stopped tries again.
    const retry = this.state.state === "stopped";
    if (retry) {
      this.refusals = 0;
      this.setState({ state: "connecting", reason: "" });
    }
    port.post({ t: "state", ...this.state });
    for (const t of c.topics) {
      const g = this.gone.get(t);
      if (g) port.post(g);
      const p = this.presence.get(t);
      if (p && !had?.topics.has(t)) port.post(p);
    }
    if (this.pending !== null && c.topics.has(PROPOSALS) && !had?.topics.has(PROPOSALS)) port.post({ t: "proposals", pending: this.pending });
    if (retry) this.reopen(GROW_MS);
    else this.changed();
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS);
  }

  // ping is a page saying it is still there; a page dropped for silence is
  // asked to say hello again.
  ping(id: string, port: Port) {
    const c = this.clients.get(id);
    if (c) c.seen = this.now();
    else port.post({ t: "who" });
  }

  bye(id: string) {
    if (this.clients.delete(id)) this.changed();
  }

  // idle closes the streams now (the page that runs the hub goes into the
  // back/forward cache, where nothing of it may stay open); the next hello
  // opens them again after the last event heard.
  idle() {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.due = Infinity;
    this.closeStreams();
  }

  // close ends every stream: the hub serves no page any more.
  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.closeStreams();
    this.clients.clear();
  }

  // counts is how many pages and streams the hub holds (for tests).
  counts() {
    return { pages: this.clients.size, streams: this.streams.length, topics: this.union().length };
  }

  private sweep() {
    const old = this.now() - SILENT_MS;
    let dropped = false;
    for (const [id, c] of this.clients) {
      if (c.seen < old) {
        this.clients.delete(id);
        dropped = true;
      }
    }
    if (dropped) this.changed();
    if (this.clients.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  // union is every topic some page follows, but those that ended.
  private union(): Topic[] {
    const all = new Set<Topic>();
    for (const c of this.clients.values()) for (const t of c.topics) all.add(t);
    // A topic no page follows any more is forgotten: one that ended may
    // be followed again later (a Note back in reach).
    for (const t of this.gone.keys()) if (!all.has(t)) this.gone.delete(t);
    for (const t of this.presence.keys()) if (!all.has(t)) this.presence.delete(t);
    return [...all].filter((t) => !this.gone.has(t)).sort();
  }

  // changed reopens the streams if the union is not what they follow.
  private changed() {
    if (this.closed) return;
    const want = this.union();
    const have = this.streams.flatMap((s) => s.topics);
    const grew = want.some((t) => !have.includes(t));
    const shrank = have.some((t) => !want.includes(t));
    if (grew) this.reopen(GROW_MS);
    else if (shrank) this.reopen(want.length === 0 ? 0 : SHRINK_MS);
  }

  // reopen opens the streams again in ms (sooner if already due sooner).
  private reopen(ms: number) {
    const at = this.now() + ms;
    if (this.timer !== undefined && this.due <= at) return;
    clearTimeout(this.timer);
    this.due = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.due = Infinity;
      this.openStreams();
    }, ms);
  }

  private closeStreams() {
    for (const s of this.streams) s.es.close();
    this.streams = [];
  }

  private openStreams(afterEnd = false) {
    if (this.closed) return;
    const old = this.streams;
    this.closeStreams();
    const want = this.union();
    if (want.length === 0) return;
    for (let i = 0; i < want.length; i += MAX_TOPICS) {
      // Each stream goes on after the last event the one it replaces
      // heard: the same topics but for what the set changed.
      const k = i / MAX_TOPICS;
      this.start(want.slice(i, i + MAX_TOPICS), old[k]?.cursor || this.cursor, afterEnd);
    }
  }

  private start(topics: Topic[], after: string, afterEnd: boolean) {
    let es: EventSource;
    try {
      es = this.open(topics, after);
    } catch {
      this.stop("Live updates are not available in this browser.");
      return;
    }
    const s: Stream = { es, topics, cursor: after, ready: false, afterEnd };
    this.streams.push(s);
    const mine = () => this.streams.includes(s);
    es.addEventListener("ready", (ev) => {
      if (!mine()) return;
      s.ready = true;
      s.afterEnd = false;
      this.refusals = 0;
      this.drops = 0;
      this.ended = "";
      // Started from now: its cursor is the one to resume after.
      const c = str(parse((ev as MessageEvent).data)?.cursor);
      if (!s.cursor && c) s.cursor = c;
      if (!this.cursor && c) this.cursor = c;
      if (this.streams.every((x) => x.ready)) this.setState({ state: "live", reason: "" });
    });
    es.addEventListener("write", (ev) => {
      const m = ev as MessageEvent;
      if (!mine() || !m.lastEventId) return;
      s.cursor = m.lastEventId;
      this.cursor = m.lastEventId;
      if (this.recent.has(m.lastEventId)) return; // sent again by a reopened stream
      this.recent.add(m.lastEventId);
      if (this.recent.size > RECENT) this.recent.delete(this.recent.values().next().value as string);
      const topic = str(parse(m.data)?.topic);
      if (topic) this.tell(topic, { t: "write", topic, cursor: m.lastEventId, data: String(m.data) });
    });
    // Presence has no cursor (it is not stored): each is told as it comes.
    es.addEventListener("presence", (ev) => {
      const data = String((ev as MessageEvent).data);
      const topic = str(parse(data)?.topic);
      if (!mine() || !topic) return;
      const m = { t: "presence" as const, topic, data };
      this.presence.set(topic, m);
      this.tell(topic, m);
    });
    es.addEventListener("proposals", (ev) => {
      const n = parse((ev as MessageEvent).data)?.pending;
      if (!mine() || typeof n !== "number") return;
      const changed = n !== this.pending;
      this.pending = n;
      if (changed) this.tell(PROPOSALS, { t: "proposals", pending: n });
    });
    es.addEventListener("gone", (ev) => {
      const d = parse((ev as MessageEvent).data);
      const topic = str(d?.topic);
      if (!mine() || !topic) return;
      const g = { t: "gone" as const, topic, reason: str(d?.reason), deleted: d?.deleted === true };
      this.gone.set(topic, g);
      this.tell(topic, g);
      this.changed();
    });
    es.addEventListener("resync", (ev) => {
      const d = parse((ev as MessageEvent).data);
      const topic = str(d?.topic);
      if (mine() && topic) this.tell(topic, { t: "resync", topic, reason: str(d?.reason) });
    });
    es.addEventListener("end", (ev) => {
      if (!mine()) return;
      // The server ended the stream (its lifetime over, signed out): open
      // it again after the last event; if that is refused, stop.
      this.ended = str(parse((ev as MessageEvent).data)?.reason);
      this.setState({ state: "connecting", reason: "" });
      this.openStreams(true);
    });
    es.addEventListener("error", () => {
      if (!mine()) return;
      // The browser would reconnect by itself, with the last event ID it
      // saw; the hub does, with the last one any stream heard. A refusal
      // (an answer that is not the stream: signed out, say) closes the
      // EventSource; after an end, or a few in a row, the hub stops.
      const refused = es.readyState === EventSource.CLOSED && !s.ready;
      es.close();
      s.ready = false;
      let wait: number;
      if (refused) {
        if (s.afterEnd) return this.stop(this.ended);
        if (++this.refusals >= REFUSALS) return this.stop("");
        wait = RETRY_MS[this.refusals - 1];
      } else {
        wait = RETRY_MS[Math.min(this.drops++, RETRY_MS.length - 1)];
      }
      // The stream keeps its place, topics and cursor until it is opened
      // again.
      this.setState({ state: "connecting", reason: "" });
      this.reopen(wait);
    });
  }

  private stop(reason: string) {
    this.closeStreams();
    this.setState({ state: "stopped", reason });
  }

  private setState(st: HubState) {
    if (st.state === this.state.state && st.reason === this.state.reason) return;
    this.state = st;
    for (const c of this.clients.values()) c.port.post({ t: "state", ...st });
  }

  private tell(topic: Topic, m: FromHub) {
    for (const c of this.clients.values()) if (c.topics.has(topic)) c.port.post(m);
  }
}
