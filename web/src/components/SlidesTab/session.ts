import { api, errorText, queries, queryClient, type Precondition, type Slide, type SlideFields, type TabContent } from "../../api";
import type { RemoteChange } from "../../live";
import type { Saver, SaveState } from "../../save";
import { keepDrafts, restoreDrafts } from "./draft";
import { themeOf } from "./layouts";
import { fieldName, textFields, type Clash, type Deck, type Drafts, type Lost, type TextField } from "./types";
import type { TabProps } from "../tab";

// A slides tab's editing session: the deck as the server has it (base),
// the person's unsaved text over it, and every write through the Note's
// save path. Text is saved as the person types (debounced). A write
// refused because someone wrote in between (412) is sent again on the new
// version when this tab did not change; when it did, the slides are read
// again, the person's unsaved text is kept, and a field both changed is
// shown with theirs to choose from. Reads and writes go one after another,
// each on the version the one before it left.

const DEBOUNCE_MS = 700;

// RECENT_MS is how long after saving a field the page says who replaced
// it.
const RECENT_MS = 60_000;

// short is a field's text as a notice quotes it.
function short(s: string): string {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > 60 ? t.slice(0, 57) + "…" : t;
}

// NEW_TITLE is what the server calls a slide the person just added (a
// slide needs a title): the page shows its title field empty until they
// type one, and never sends this name back.
export const NEW_TITLE = "New slide";

function sameDeck(a: Slide[], b: Slide[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function moved(list: Slide[], id: string, to: number): Slide[] {
  const from = list.findIndex((s) => s.slide_id === id);
  if (from < 0) return list;
  const next = list.slice();
  const [s] = next.splice(from, 1);
  next.splice(Math.min(Math.max(to, 0), next.length), 0, s);
  return next;
}

// whoName is who wrote, to start a sentence: "Claude", "You (on another page)".
function whoName(w: string): string {
  const n = w.replace(/you, elsewhere/g, "you (on another page)") || "someone";
  // Names stay as they are spelled; only words of ours start capitalized.
  return /^(you|someone|a |an )/.test(n) ? n.charAt(0).toUpperCase() + n.slice(1) : n;
}

export class DeckSession {
  props: TabProps;
  private deck: Deck;
  private saver: Saver;
  private listeners = new Set<() => void>();
  private chain: Promise<void> = Promise.resolve();
  private timer: number | undefined;
  private alive = true;
  private lastSeq: number;
  private restored: boolean;
  // mine is what this page saved lately, by "slide_id:field": when
  // someone replaces it soon after, the page says who and with what.
  private mine = new Map<string, { v: string; at: number }>();

  constructor(props: TabProps, saver: Saver) {
    this.props = props;
    this.saver = saver;
    const slides = props.content.slides ?? [];
    // Text kept in the browser from before (a reload, a closed window).
    const kept = restoreDrafts(props.noteId, props.content.tab_id, slides);
    this.restored = Object.keys(kept.drafts).length > 0;
    this.deck = { base: slides, drafts: kept.drafts, clashes: kept.clashes, lost: kept.lost, selected: slides[0]?.slide_id ?? "", busy: 0, error: "", notice: "", titleFocus: 0, fresh: "" };
    this.lastSeq = props.remote?.seq ?? 0;
  }

  // update takes the view's newest props.
  update(props: TabProps) {
    this.props = props;
  }

  // subscribe and snapshot are the deck as a store for
  // useSyncExternalStore: each change is a new Deck.
  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => {
      this.listeners.delete(l);
    };
  };

  snapshot = (): Deck => this.deck;

  private get tabId() {
    return this.props.content.tab_id;
  }

  private get at() {
    return { id: this.props.noteId, tab_id: this.tabId };
  }

  // set changes the deck and shows it; the unsaved text is kept in the
  // browser until the server has it.
  private set(d: Partial<Deck>) {
    const before = this.deck;
    this.deck = { ...before, ...d };
    if (d.drafts || d.base || d.clashes || d.lost) keepDrafts(this.props.noteId, this.tabId, this.deck.drafts, this.deck.base, this.deck.clashes, this.deck.lost);
    for (const l of this.listeners) l();
  }

  static state(d: Deck): SaveState {
    if (d.error) return "error";
    if (Object.keys(d.clashes).length) return "conflict";
    if (d.busy > 0) return "saving";
    if (Object.keys(d.drafts).some((id) => Object.keys(d.drafts[id]).length > 0)) return "unsaved";
    return "saved";
  }

  private seen(v: number) {
    this.saver.seen(v);
    this.props.onVersion(v);
  }

  private read(): Promise<TabContent> {
    return queryClient.fetchQuery({ ...queries.tab(this.props.noteId, this.tabId), staleTime: 0 });
  }

  // queue runs reads and writes one after another.
  private queue(fn: () => Promise<void>) {
    this.set({ busy: this.deck.busy + 1 });
    this.chain = this.chain
      .then(fn)
      .catch((e: unknown) => {
        if (this.alive) this.set({ error: errorText(e) });
      })
      .finally(() => this.set({ busy: this.deck.busy - 1 }));
  }

  // applyServer takes the server's deck as the new base. Two people who
  // write one field at once are ordered by the server: a field the person
  // has unsaved text in that the server changed too keeps the person's
  // text, saved after theirs (the page says so), and a field this page
  // saved lately that someone replaced says who replaced it with what. A
  // slide the person was writing in that is gone keeps its text as
  // "lost". It answers whether the person's unsaved text is kept and goes
  // on being saved (no slide gone).
  private applyServer(cur: TabContent, who: string): boolean {
    const old = this.deck.base;
    const next = cur.slides ?? [];
    const d: Drafts = { ...this.deck.drafts };
    const c: Record<string, Clash> = { ...this.deck.clashes };
    const gone: Lost[] = [];
    const said: string[] = [];
    const now = Date.now();
    for (const [k, m] of this.mine) {
      const [id, f] = k.split(":") as [string, TextField];
      const n = next.find((s) => s.slide_id === id);
      if (now - m.at > RECENT_MS || !n) {
        this.mine.delete(k);
        continue;
      }
      if (d[id]?.[f] !== undefined || n[f] === m.v) continue;
      this.mine.delete(k);
      said.push(`${who} replaced your ${fieldName[f].toLowerCase()} “${short(m.v)}” with “${short(n[f])}”.`);
    }
    for (const id of Object.keys(d)) {
      const o = old.find((s) => s.slide_id === id);
      const n = next.find((s) => s.slide_id === id);
      const mine = { ...d[id] };
      if (!n) {
        const src = o ?? { title: "", body: "", notes: "" };
        gone.push({ title: mine.title ?? src.title, body: mine.body ?? src.body, notes: mine.notes ?? src.notes, who });
        delete d[id];
        for (const f of textFields) delete c[id + ":" + f];
        continue;
      }
      for (const f of textFields) {
        const m = mine[f];
        if (m === undefined) continue;
        const norm = (s: string) => (f === "title" ? s.trim() : s);
        if (norm(n[f]) === norm(m)) {
          delete mine[f];
          delete c[id + ":" + f];
        } else if (o && norm(n[f]) !== norm(o[f])) {
          said.push(`${who} changed the ${fieldName[f].toLowerCase()} to “${short(n[f])}” while you were writing: yours is saved after it and replaces it.`);
        }
      }
      if (Object.keys(mine).length) d[id] = mine;
      else delete d[id];
    }
    const selected = next.some((s) => s.slide_id === this.deck.selected) ? this.deck.selected : (next[0]?.slide_id ?? "");
    this.set({ drafts: d, clashes: c, lost: gone.length ? [...this.deck.lost, ...gone] : this.deck.lost, base: next, selected, ...(said.length ? { notice: said.join(" ") } : {}) });
    this.seen(cur.version);
    return Object.keys(d).length > 0 && gone.length === 0 && said.length === 0;
  }

  // write sends one write through the save path. On a 412 it reads the
  // deck again: when the deck is what this page had, or again (a
  // deliberate change, which does not depend on the text it was based
  // on), it is sent again on the new version; otherwise it answers
  // "changed", and the caller works out what to send now.
  private async write<T>(send: (pre: Precondition) => Promise<T>, again: boolean, local?: (s: Slide[]) => Slide[]): Promise<T | "changed"> {
    const out = await this.saver.run({
      send,
      maxConflicts: 5,
      retrying: (e) => this.alive && this.set({ error: e.message + " Retrying…" }),
      conflict: async (c) => {
        const had = this.deck.base;
        const cur = await this.read();
        if (!this.alive) return "stop";
        const changed = !sameDeck(cur.slides ?? [], had);
        const who = whoName(c.who(this.props.me, this.tabId));
        const kept = this.applyServer(cur, who);
        if (changed && kept && !Object.keys(this.deck.clashes).length)
          this.set({ notice: `${who} changed these slides while you were writing: the deck is reloaded, and your unsaved text is kept and saved on it.` });
        if (local) this.set({ base: local(this.deck.base) });
        return changed && !again ? "stop" : "again";
      },
    });
    if (out.ok) {
      if (this.alive) this.set({ error: "" });
      return out.value;
    }
    if ("conflict" in out) return "changed";
    throw out.error;
  }

  // saveText sends the unsaved text, slide by slide, until none is left.
  saveText = () => {
    window.clearTimeout(this.timer);
    this.queue(async () => {
      for (let round = 0; round < 50 && this.alive; round++) {
        const d = this.deck.drafts;
        let id = "";
        let patch: SlideFields = {};
        for (const sid of Object.keys(d)) {
          const sl = this.deck.base.find((s) => s.slide_id === sid);
          if (!sl) continue;
          const pt: SlideFields = {};
          for (const f of textFields) {
            const v = d[sid][f];
            if (v === undefined || this.deck.clashes[sid + ":" + f]) continue;
            if (f === "title" && v.trim() === "") continue; // a slide needs a title: saved once it has one
            if (v !== sl[f]) pt[f] = v;
          }
          if (Object.keys(pt).length) {
            id = sid;
            patch = pt;
            break;
          }
        }
        if (!id) return;
        const sent = patch;
        const res = await this.write((pre) => api.patchSlide(this.at, id, sent, pre), false);
        if (res === "changed" || !this.alive) continue;
        this.seen(res.version);
        const nd: Drafts = { ...this.deck.drafts };
        const left = { ...nd[id] };
        for (const f of textFields) if (left[f] !== undefined && left[f] === sent[f as TextField]) delete left[f];
        if (Object.keys(left).length) nd[id] = left;
        else delete nd[id];
        for (const f of textFields) if (sent[f] !== undefined) this.mine.set(id + ":" + f, { v: sent[f], at: Date.now() });
        this.set({ base: this.deck.base.map((s) => (s.slide_id === id ? { ...s, ...sent } : s)), drafts: nd });
      }
    });
  };

  // act is one of the person's deliberate changes (add, move, delete, a
  // look): it is applied here at once and sent again on the new version
  // after a 412.
  private act<T>(send: (pre: Precondition) => Promise<T>, local?: (s: Slide[]) => Slide[], after?: (res: T) => void) {
    if (local) this.set({ base: local(this.deck.base) });
    this.queue(async () => {
      const res = await this.write(send, true, local);
      if (res === "changed" || !this.alive) return;
      const v = (res as { version?: number } | undefined)?.version;
      if (typeof v === "number") this.seen(v);
      after?.(res);
    });
  }

  // retry is the error box's Try again: a write waiting for the server
  // goes at once, and the text left is saved.
  retry() {
    this.dismiss("error");
    this.saver.retryNow();
    this.saveText();
  }

  type(id: string, f: TextField, v: string) {
    this.set({ drafts: { ...this.deck.drafts, [id]: { ...this.deck.drafts[id], [f]: v } } });
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(this.saveText, DEBOUNCE_MS);
  }

  select(id: string) {
    this.set({ selected: id, fresh: id === this.deck.fresh ? id : "" });
  }

  dismiss(what: "notice" | "error") {
    this.set({ [what]: "" });
  }

  addSlide(from?: Lost) {
    const base = this.deck.base;
    const cur = base.find((s) => s.slide_id === this.deck.selected);
    const at = from ? base.length : cur ? base.indexOf(cur) + 1 : base.length;
    const body: SlideFields & { title: string } = from ? { title: from.title.trim() || NEW_TITLE, body: from.body, notes: from.notes } : { title: NEW_TITLE, position: at };
    // A new slide takes the theme of the slide it follows: one deck, one look.
    const theme = cur ? themeOf(cur) : "";
    if (theme && theme !== "paper") body.theme = theme;
    this.act(
      (pre) => api.addSlide(this.at, body, pre),
      undefined,
      (r) => {
        const s: Slide = { slide_id: r.slide_id, title: body.title, body: body.body ?? "", notes: body.notes ?? "", theme: body.theme };
        const list = this.deck.base.slice();
        list.splice(Math.min(body.position ?? list.length, list.length), 0, s);
        this.set(from ? { base: list, selected: r.slide_id } : { base: list, selected: r.slide_id, titleFocus: this.deck.titleFocus + 1, fresh: r.slide_id });
      },
    );
  }

  restoreLost(i: number) {
    const l = this.deck.lost[i];
    this.dropLost(i);
    if (l) this.addSlide(l);
  }

  dropLost(i: number) {
    this.set({ lost: this.deck.lost.filter((_, j) => j !== i) });
  }

  move(id: string, to: number) {
    const from = this.deck.base.findIndex((s) => s.slide_id === id);
    if (from < 0 || to < 0 || to >= this.deck.base.length || to === from) return;
    this.act((pre) => api.patchSlide(this.at, id, { position: to }, pre), (s) => moved(s, id, to));
  }

  setLook(id: string, look: { layout?: string; theme?: string }) {
    this.act(
      (pre) => api.patchSlide(this.at, id, look, pre),
      (s) => s.map((x) => (x.slide_id === id ? { ...x, ...look } : x)),
    );
  }

  themeAll(theme: string) {
    for (const s of this.deck.base) if (themeOf(s) !== theme) this.setLook(s.slide_id, { theme });
  }

  remove(s: Slide) {
    const base = this.deck.base;
    const i = base.findIndex((x) => x.slide_id === s.slide_id);
    const nd = { ...this.deck.drafts };
    delete nd[s.slide_id];
    const nc = { ...this.deck.clashes };
    for (const f of textFields) delete nc[s.slide_id + ":" + f];
    const rest = base.filter((x) => x.slide_id !== s.slide_id);
    this.set({ drafts: nd, clashes: nc, selected: rest[Math.min(i, rest.length - 1)]?.slide_id ?? "" });
    this.act(
      (pre) => api.deleteSlide(this.at, s.slide_id, pre),
      (list) => list.filter((x) => x.slide_id !== s.slide_id),
      (res) => {
        // An answer without the version it made: read the deck for it.
        if (res?.version === undefined)
          this.queue(async () => {
            const cur = await this.read();
            if (this.alive) this.applyServer(cur, "Someone");
          });
      },
    );
  }

  // keepMine and takeTheirs settle a field both changed.
  keepMine(id: string, f: TextField) {
    const c = { ...this.deck.clashes };
    delete c[id + ":" + f];
    this.set({ clashes: c });
    this.saveText();
  }

  takeTheirs(id: string, f: TextField) {
    const c = { ...this.deck.clashes };
    delete c[id + ":" + f];
    const d = { ...this.deck.drafts, [id]: { ...this.deck.drafts[id] } };
    delete d[id][f];
    this.set({ clashes: c, drafts: d });
  }

  // heard is a write the page learned of. Another's write to this tab (an
  // agent's, another person's, or this person's on another page) reloads
  // it, keeping what the person is typing.
  heard(r: RemoteChange) {
    if (r.seq === this.lastSeq) return;
    this.lastSeq = r.seq;
    if (!r.changed.includes(this.tabId)) return;
    this.queue(async () => {
      // This page's own write, already applied.
      if (r.mine && r.version <= this.saver.version) return;
      const who = r.mine ? "You (on another page)" : whoName(r.who.name || (r.who.kind === "person" ? "a person" : "an agent"));
      const cur = await this.read();
      if (!this.alive) return;
      if (sameDeck(cur.slides ?? [], this.deck.base)) {
        this.seen(cur.version);
        return;
      }
      if (this.applyServer(cur, who) && !Object.keys(this.deck.clashes).length)
        this.set({ notice: `${who} changed these slides while you were writing: your unsaved text is kept and saved on the new version.` });
    });
  }

  // mount: Ctrl/Cmd+S saves now; kept text from before is saved at once;
  // leaving the tab saves what is left.
  mount(): () => void {
    this.alive = true;
    const onKey = (e: globalThis.KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "s") {
        e.preventDefault();
        this.saveText();
      }
    };
    window.addEventListener("keydown", onKey);
    if (this.restored) {
      this.restored = false;
      this.saveText();
    }
    return () => {
      window.removeEventListener("keydown", onKey);
      if (Object.keys(this.deck.drafts).length) this.saveText();
      this.alive = false;
      window.clearTimeout(this.timer);
    };
  }
}
