import { EditorView, basicSetup } from "codemirror";
import { ChangeSet, EditorSelection, EditorState, Text, Transaction, type Extension } from "@codemirror/state";
import { collab, getSyncedVersion, receiveUpdates, sendableUpdates, type Update } from "@codemirror/collab";
import { markdown } from "@codemirror/lang-markdown";
import { api, errorText, queries, queryClient, unreachable, type Peer, type TextUpdate, type TextUpdates } from "../../api";
import type { RemoteChange } from "../../live";
import type { SaveState } from "../../save";
import { clearDraft, saveDraft, type Draft } from "./draft";
import { merge3, textChanges } from "./merge";
import { keepInView, listContinuation, theme, viewAnchor } from "./editor";
import { PeerColors, peerDecorations, peers, setPeers, type PeerMark } from "./peers";
import type { MarkdownProps, TextConflict } from "./types";

// A markdown tab's live editing session: CodeMirror with @codemirror/collab,
// synced with the server's text (the authority) by its revisions.
//
// - The editor opens on the tab's text at its text_rev. What the person
//   types is a local update, pushed promptly (PUSH_MS after the first
//   key, then as soon as the push before answers: one push at a time)
//   on the revision the editor has synced to. The server takes it only
//   on its current revision; otherwise the editor pulls the updates after
//   its revision, rebases its own over them (receiveUpdates) and pushes
//   again. No one's typing is lost, and nothing asks the person to choose.
// - When the page's live stream says a write changed this tab, and after
//   a refused push, the editor pulls.
// - Offline, the updates wait (the header says so) and go when the server
//   answers again; they are kept as a draft in the browser until then, to
//   survive a reload.
// - When the server no longer keeps the updates after the editor's
//   revision (resync: it sends the whole text), the editor takes that
//   text. Updates of the person's not pushed yet are merged onto it line
//   by line; only when both changed the same lines is the conflict card
//   shown, the person's text kept in the editor until they choose.
//
// The others' cursors and selections (presence) are drawn in the editor
// (peers.ts), mapped from their revision to the editor's text; the
// person's own are posted, mapped back to the revision the editor has.

const PUSH_MS = 100;
const MAX_UPDATES = 100; // the most change sets one push takes
const RETRY_MS = [1000, 2000, 4000, 8000, 10000];
const LOG = 500; // the updates kept to map the others' positions
const DETACHED_TRIES = 5; // pushes tried after the tab was left

// Shown is what the view renders of the session.
export type Shown = {
  text: (t: string) => void;
  conflict: (c: TextConflict | null) => void;
  error: (e: string) => void;
  state: (s: SaveState) => void;
};

type Logged = { rev: number; changes: ChangeSet };

function newClientID(): string {
  const b = new Uint8Array(9);
  crypto.getRandomValues(b);
  return "c-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

const textOf = (s: string) => Text.of(s.split("\n"));

export class MarkdownSession {
  props: MarkdownProps;
  readonly clientID: string;
  private shown: Shown;
  private view: EditorView | null = null;
  private host: HTMLElement | null = null;
  private st: EditorState; // the state while there is no view
  private synced: Text; // the server's text at the synced revision
  private log: Logged[] = []; // the newest updates taken, oldest first
  private version: number; // the newest Note version learned of
  private conflict: TextConflict | null = null;
  private merging: Draft | null = null; // a draft from before live editing, merged once mounted
  private running = false;
  private wantPull = false;
  private inbox: TextUpdate[] = []; // updates the live stream carried, taken by the sync loop
  private pushTimer: number | undefined;
  private retryTimer: number | undefined;
  private failures = 0;
  private offline = false;
  private error = "";
  private alive = false;
  private lastSeq: number;
  private who = "";
  private others: Peer[] = [];
  private pulledFor = 0; // the newest peer revision a pull was asked for
  private colors = new PeerColors();
  private stateShown: SaveState | null = null;

  constructor(props: MarkdownProps, restored: Draft | null, shown: Shown) {
    this.props = props;
    this.shown = shown;
    this.version = props.version;
    this.lastSeq = props.remote?.seq ?? 0;
    const fromDraft = restored ? this.replay(restored) : null;
    if (fromDraft) {
      this.clientID = fromDraft.client;
      this.st = fromDraft.state;
      this.synced = textOf(restored?.base ?? "");
    } else {
      this.clientID = newClientID();
      this.st = this.newState(props.text, props.textRev);
      this.synced = this.st.doc;
      // A draft without its updates (from before live editing) is merged
      // onto the server's text once the editor is there.
      if (restored) this.merging = restored;
    }
  }

  // replay is the editor's state of a restored draft: its base at its
  // revision, and its unconfirmed updates made again, in order, by its
  // client.
  private replay(d: Draft): { client: string; state: EditorState } | null {
    if (d.rev === undefined || !d.client || !d.updates) return null;
    try {
      const saved = this.clientIDFor(d.client);
      let st = this.newState(d.base, d.rev, saved);
      for (const u of d.updates) st = st.update({ changes: ChangeSet.fromJSON(u) }).state;
      if (st.doc.toString() !== d.text) return null;
      return { client: saved, state: st };
    } catch {
      return null;
    }
  }

  private clientIDFor(c: string): string {
    return /^[A-Za-z0-9_-]{1,64}$/.test(c) ? c : newClientID();
  }

  private extensions(rev: number, clientID: string): Extension {
    return [
      basicSetup,
      markdown(),
      listContinuation,
      theme,
      peers,
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ "aria-label": "Markdown text of " + this.props.label, "aria-multiline": "true" }),
      collab({ startVersion: rev, clientID }),
      EditorView.updateListener.of((u) => this.updated(u.transactions, u.docChanged, u.selectionSet)),
    ];
  }

  private newState(doc: string, rev: number, clientID = this.clientID, selection?: EditorSelection): EditorState {
    return EditorState.create({ doc, selection, extensions: this.extensions(rev, clientID) });
  }

  // update takes the view's newest props.
  update(props: MarkdownProps) {
    const peersChanged = props.peers !== this.props.peers;
    this.props = props;
    if (peersChanged) this.setOthers(props.peers);
  }

  private get state(): EditorState {
    return this.view?.state ?? this.st;
  }

  doc(): string {
    return this.state.doc.toString();
  }

  // apply dispatches tr to the editor (or, with the tab left, to its
  // state).
  private apply(tr: Transaction) {
    if (this.view) this.view.dispatch(tr);
    else {
      this.st = tr.state;
      this.updated([tr], tr.docChanged, tr.selection !== undefined);
    }
  }

  // updated is every change of the editor's state.
  private updated(trs: readonly Transaction[], docChanged: boolean, selectionSet: boolean) {
    const local = trs.some((tr) => tr.docChanged && !tr.annotation(Transaction.remote));
    if (docChanged) {
      this.shown.text(this.state.doc.toString());
      this.keep();
    }
    if (local && !this.conflict) this.schedulePush();
    if (docChanged || selectionSet) this.tellWhere();
    this.showState();
  }

  private setState(s: SaveState) {
    if (s === this.stateShown) return;
    this.stateShown = s;
    this.shown.state(s);
    this.props.onState(s);
  }

  private showState() {
    const pending = sendableUpdates(this.state).length > 0;
    // The host says how far the editor is synced (for tests and tools).
    const host = this.host;
    if (host) {
      host.dataset.rev = String(getSyncedVersion(this.state));
      host.dataset.pending = String(sendableUpdates(this.state).length);
    }
    if (this.conflict) this.setState("conflict");
    else if (this.error) this.setState("error");
    else if (this.offline) this.setState(pending ? "offline" : "saved");
    else this.setState(pending ? "saving" : "saved");
  }

  private setConflict(c: TextConflict | null) {
    this.conflict = c;
    this.shown.conflict(c);
    this.showState();
  }

  private setError(e: string) {
    this.error = e;
    this.shown.error(e);
    this.showState();
  }

  private seen(v: number | undefined) {
    if (typeof v !== "number" || v <= this.version) return;
    this.version = v;
    this.props.onVersion(v);
  }

  // keep saves the person's unconfirmed updates as a draft, or clears it
  // when the server has everything.
  private keep() {
    const { noteId, tabId } = this.props;
    const un = sendableUpdates(this.state);
    if (un.length === 0 && !this.conflict) {
      clearDraft(noteId, tabId);
      return;
    }
    saveDraft(noteId, tabId, {
      text: this.doc(),
      base: this.synced.toString(),
      version: this.version,
      rev: getSyncedVersion(this.state),
      client: this.clientID,
      updates: un.map((u) => u.changes.toJSON()),
      at: new Date().toISOString(),
    });
  }

  // --- syncing -----------------------------------------------------------

  private schedulePush() {
    if (this.pushTimer !== undefined || this.running) return;
    this.pushTimer = window.setTimeout(() => {
      this.pushTimer = undefined;
      this.kick();
    }, PUSH_MS);
  }

  // kick runs the sync loop now, unless it runs already (it then does
  // what was asked before it stops).
  private kick = () => {
    window.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (!this.running) void this.loop();
  };

  private async loop() {
    this.running = true;
    let step = "";
    try {
      for (;;) {
        if (this.conflict) break;
        if (this.inbox.length > 0) this.takeInbox();
        if (this.wantPull) {
          if (!this.alive && sendableUpdates(this.state).length === 0) break;
          step = "pull";
          this.wantPull = false;
          await this.pull();
        } else if (sendableUpdates(this.state).length > 0) {
          step = "push";
          window.clearTimeout(this.pushTimer);
          this.pushTimer = undefined;
          await this.push();
        } else break;
        this.failures = 0;
        if (this.offline || this.error) {
          this.offline = false;
          this.setError("");
        }
      }
    } catch (e) {
      if (step === "pull") this.wantPull = true;
      this.failed(e);
    } finally {
      this.running = false;
      this.showState();
    }
  }

  private failed(e: unknown) {
    const detached = !this.alive;
    if (unreachable(e)) {
      this.offline = true;
      this.failures++;
      if (detached && this.failures >= DETACHED_TRIES) return; // the draft keeps it
      const wait = RETRY_MS[Math.min(this.failures - 1, RETRY_MS.length - 1)];
      this.retryTimer = window.setTimeout(this.kick, wait);
      return;
    }
    if (detached) return;
    this.setError(errorText(e));
  }

  // retry is the error box's Try again.
  retry = () => {
    this.failures = 0;
    this.setError("");
    this.wantPull = true;
    this.kick();
  };

  // save is Ctrl/Cmd+S: push what waits at once.
  save = () => {
    window.clearTimeout(this.pushTimer);
    this.pushTimer = undefined;
    this.kick();
  };

  private async push() {
    const ups = sendableUpdates(this.state);
    const batch = ups.slice(0, MAX_UPDATES);
    const rev = getSyncedVersion(this.state);
    const r = await api.pushText(this.props.noteId, { rev, client_id: this.clientID, updates: batch.map((u) => u.changes.toJSON()) });
    this.seen(r.version);
    if (!r.accepted || getSyncedVersion(this.state) !== rev) {
      // The text moved on: pull, rebase, push again.
      this.wantPull = true;
      return;
    }
    // Taken as revisions rev+1…: the editor's first updates are confirmed
    // (nothing was taken in meanwhile: one push or pull at a time).
    this.take(batch.map((u, i) => ({ rev: rev + i + 1, update: { changes: u.changes, clientID: this.clientID } })));
    if (r.rev > rev + batch.length) this.wantPull = true;
  }

  private async pull() {
    const after = getSyncedVersion(this.state);
    const r = await api.pullText(this.props.noteId, after);
    this.seen(r.version);
    if (getSyncedVersion(this.state) !== after) {
      this.wantPull = true;
      return;
    }
    if (r.resync) {
      this.resync(r);
      return;
    }
    const { taken, all } = this.contiguous(r.updates, after);
    if (taken.length > 0 && !this.take(taken)) return;
    if (taken.length < all || r.rev > after + taken.length) this.wantPull = true;
  }

  // contiguous is ups (any order, any revisions) as the updates that
  // follow revision after one by one, and how many were after it.
  private contiguous(ups: readonly TextUpdate[], after: number): { taken: { rev: number; update: Update }[]; all: number } {
    const next = [...ups].filter((u) => u.rev > after).sort((a, b) => a.rev - b.rev);
    const taken: { rev: number; update: Update }[] = [];
    for (const u of next) {
      if (u.rev !== after + taken.length + 1) break; // not contiguous: pull again
      let changes: ChangeSet;
      try {
        changes = ChangeSet.fromJSON(u.changes);
      } catch {
        break;
      }
      if (u.client_id !== this.clientID && u.actor?.name) this.who = u.actor.name;
      taken.push({ rev: u.rev, update: { changes, clientID: u.client_id } });
    }
    return { taken, all: next.length };
  }

  // takeInbox takes the updates the live stream carried, between pushes
  // and pulls (the sync loop's own turn): those that follow the editor's
  // revision go in as a pull's would; a gap asks for a pull.
  private takeInbox() {
    const ups = this.inbox;
    this.inbox = [];
    const { taken, all } = this.contiguous(ups, getSyncedVersion(this.state));
    if (taken.length > 0 && !this.take(taken)) return;
    if (taken.length < all) this.wantPull = true;
  }

  // take applies updates the server made at their revisions (each the
  // next after the editor's), the editor's own ones among them confirmed.
  // A change set that does not fit the text is a bug somewhere: the text
  // is read again whole.
  private take(ups: { rev: number; update: Update }[]): boolean {
    let synced = this.synced;
    try {
      for (const u of ups) synced = u.update.changes.apply(synced);
      const v = this.view;
      const anchor = v ? viewAnchor(v) : null;
      const tr = receiveUpdates(this.state, ups.map((u) => u.update));
      this.apply(tr);
      if (v && anchor && tr.docChanged) keepInView(v, { pos: tr.changes.mapPos(anchor.pos, 1), top: anchor.top });
    } catch (e) {
      console.error("markdown: an update does not fit the text; reading it again", e);
      void this.reread();
      return false;
    }
    this.synced = synced;
    for (const u of ups) this.log.push({ rev: u.rev, changes: u.update.changes });
    if (this.log.length > LOG) this.log.splice(0, this.log.length - LOG);
    this.keep();
    this.drawPeers();
    this.tellWhere();
    return true;
  }

  // reread takes the tab's whole text again, as a resync.
  private async reread() {
    const { noteId, tabId } = this.props;
    try {
      const cur = await queryClient.fetchQuery({ ...queries.tab(noteId, tabId), staleTime: 0 });
      this.resync({ note_id: noteId, rev: cur.text_rev ?? 0, version: cur.version, updates: [], resync: true, text: cur.text ?? "" });
    } catch (e) {
      this.failed(e);
    }
  }

  // resync takes the server's whole text at r.rev: the person's updates
  // not on the server yet are merged onto it when they touch other lines
  // than what changed, and put before the person otherwise.
  private resync(r: TextUpdates) {
    const theirs = r.text ?? "";
    const mine = this.doc();
    const base = this.synced.toString();
    if (sendableUpdates(this.state).length === 0) {
      this.reset(theirs, r.rev);
      return;
    }
    const m = merge3(base, theirs, mine);
    if (m.clean) {
      this.reset(theirs, r.rev);
      this.local(theirs, m.text);
      return;
    }
    this.setConflict({ theirs, version: r.version, rev: r.rev, who: this.who || "Someone", base });
    this.keep();
  }

  // reset makes the editor hold text at rev, synced, its selection kept
  // where it was in the text as far as the text is the same.
  private reset(text: string, rev: number) {
    const old = this.state;
    let selection: EditorSelection | undefined;
    try {
      const ch = old.changes(textChanges(old.doc.toString(), text));
      selection = old.selection.map(ch);
    } catch {
      selection = undefined;
    }
    const st = this.newState(text, rev, this.clientID, selection);
    if (this.view) this.view.setState(st);
    else this.st = st;
    this.synced = st.doc;
    this.log = [];
    this.shown.text(text);
    this.keep();
    this.drawPeers();
    this.tellWhere();
    this.showState();
  }

  // local makes the editor's text, from, into to as the person's own
  // change (pushed as theirs).
  private local(from: string, to: string) {
    const changes = textChanges(from, to);
    if (changes.length) this.apply(this.state.update({ changes, userEvent: "input" }));
  }

  // heard is a write the page learned of.
  heard(remote: RemoteChange) {
    if (remote.seq <= this.lastSeq) return;
    this.lastSeq = remote.seq;
    this.seen(remote.version);
    if (remote.kind !== "resync" && remote.changed.length > 0 && !remote.changed.includes(this.props.tabId)) return;
    if (!remote.mine && remote.who.name) this.who = remote.who.name;
    // The event carries the write's updates when they were few enough:
    // then no pull is needed.
    if (remote.text && remote.text.length > 0 && remote.kind !== "resync") this.inbox.push(...remote.text);
    else this.wantPull = true;
    this.kick();
  }

  // settle ends a conflict: the server's text becomes the editor's, and
  // t is put on it as the person's change.
  settle(t: string) {
    const c = this.conflict;
    if (!c) return;
    this.conflict = null;
    this.reset(c.theirs, c.rev);
    this.local(c.theirs, t);
    this.setConflict(null);
    this.keep();
    this.kick();
  }

  // --- presence ----------------------------------------------------------

  // tellWhere posts the person's cursor and selection, at the revision
  // the editor has synced to (mapped back over the updates not confirmed
  // yet).
  private tellWhere() {
    const p = this.props.presence;
    if (!p || !this.alive) return;
    const st = this.state;
    let { anchor, head } = st.selection.main;
    const un = sendableUpdates(st);
    for (let i = un.length - 1; i >= 0; i--) {
      const inv = un[i].changes.invertedDesc;
      anchor = inv.mapPos(anchor, -1);
      head = inv.mapPos(head, -1);
    }
    p.at(this.props.tabId, { rev: getSyncedVersion(st), selection: { anchor, head } });
  }

  private setOthers(list: Peer[]) {
    this.others = list;
    this.drawPeers();
  }

  // posAt is where a peer's position at revision rev is in the editor's
  // text.
  private posAt(rev: number, pos: number): number {
    const st = this.state;
    const synced = getSyncedVersion(st);
    let p = pos;
    if (rev < synced) {
      const i = this.log.findIndex((l) => l.rev === rev + 1);
      if (i >= 0) for (const l of this.log.slice(i)) p = l.changes.mapPos(Math.min(p, l.changes.length), 1);
    } else if (rev > synced && rev > this.pulledFor) {
      // The peer has updates this editor has not taken yet: pull them.
      this.pulledFor = rev;
      this.wantPull = true;
      queueMicrotask(this.kick);
    }
    p = Math.max(0, Math.min(p, this.synced.length));
    for (const u of sendableUpdates(st)) p = u.changes.mapPos(Math.min(p, u.changes.length), 1);
    return Math.min(p, st.doc.length);
  }

  private drawPeers() {
    const v = this.view;
    if (!v) return;
    const marks: PeerMark[] = [];
    for (const o of this.others) {
      if (o.tab_id !== this.props.tabId || !o.selection) continue;
      this.colors.add(o.color);
      marks.push({
        client: o.client_id,
        name: o.person?.name || "Someone",
        color: o.color,
        anchor: this.posAt(o.rev, o.selection.anchor ?? 0),
        head: this.posAt(o.rev, o.selection.head ?? o.selection.anchor ?? 0),
      });
    }
    const doc = v.state.doc;
    v.dispatch({ effects: setPeers.of(peerDecorations(marks, doc.length, (pos) => doc.lineAt(pos).number)) });
  }

  // reveal puts the cursor at the start of line n (1-based; the last line
  // when the text has fewer), that line in the middle of the window, and
  // the focus in the editor. Without the editor (the tab left), nothing.
  reveal(n: number) {
    const v = this.view;
    if (!v) return;
    const doc = v.state.doc;
    const line = doc.line(Math.max(1, Math.min(Math.floor(n), doc.lines)));
    v.dispatch({ selection: { anchor: line.from }, effects: EditorView.scrollIntoView(line.from, { y: "center" }), userEvent: "select" });
    v.focus();
  }

  // --- the view ----------------------------------------------------------

  // mount makes the editor in host and answers how to take it down (the
  // session's state outlives it: what is not pushed yet still goes).
  mount(host: HTMLDivElement): () => void {
    this.alive = true;
    this.host = host;
    // The editor lives in a shadow root: there CodeMirror's styles go into
    // a constructed style sheet, which the page's policy (no inline
    // styles) allows, rather than into a <style> element, which it blocks.
    const shadow = host.shadowRoot ?? host.attachShadow({ mode: "open" });
    const parent = document.createElement("div");
    parent.className = "md-editor-root";
    shadow.replaceChildren(parent);
    const v = new EditorView({ state: this.st, parent, root: shadow });
    this.view = v;
    this.colors.attach(shadow);
    this.shown.text(this.doc());
    const d = this.merging;
    this.merging = null;
    if (d) {
      // A draft from before live editing: merged onto the server's text
      // when the two changed other lines, else the conflict card.
      const m = merge3(d.base, this.props.text, d.text);
      if (m.clean) this.local(this.props.text, m.text);
      else {
        this.apply(this.state.update({ changes: textChanges(this.props.text, d.text), userEvent: "input" }));
        this.setConflict({ theirs: this.props.text, version: this.props.version, rev: this.props.textRev, who: "Someone", base: d.base });
      }
    }
    this.drawPeers();
    this.tellWhere();
    this.showState();
    // What was written since the read, and what waits from a draft.
    this.wantPull = true;
    this.kick();
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "s") {
        e.preventDefault();
        this.save();
      }
    };
    window.addEventListener("keydown", onKey);
    window.addEventListener("online", this.kick);
    return () => {
      this.alive = false;
      window.removeEventListener("keydown", onKey);
      window.removeEventListener("online", this.kick);
      this.st = v.state;
      v.destroy();
      this.view = null;
      // Leaving the tab pushes what is not pushed yet (the draft keeps it
      // if that fails).
      if (!this.conflict && sendableUpdates(this.st).length > 0) {
        this.failures = 0;
        this.kick();
      } else {
        window.clearTimeout(this.retryTimer);
        window.clearTimeout(this.pushTimer);
      }
    };
  }
}
