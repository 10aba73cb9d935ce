import { EditorView, basicSetup } from "codemirror";
import { Transaction } from "@codemirror/state";
import { markdown } from "@codemirror/lang-markdown";
import { api, errorText, queries, queryClient, type TabContent } from "../../api";
import type { RemoteChange } from "../../live";
import type { Saver, SaveState } from "../../save";
import { clearDraft, loadDraft, saveDraft, type Draft } from "./draft";
import { merge3, textChanges } from "./merge";
import { keepInView, listContinuation, theme, viewAnchor } from "./editor";
import type { Base, MarkdownProps, TextConflict } from "./types";

// A markdown tab's editing session: CodeMirror, the text it was started
// from (base), and the saving of the person's text through the Note's
// save path. It saves as the person types (debounced) and on Ctrl/Cmd+S,
// based on the version of its base; the unsaved text is a local draft
// until the server has it. A save refused because someone wrote in
// between (412) is sent again on the new version when this tab's text did
// not change; when it did, the person's text is kept and a merge offered.
//
// Live: when someone else writes this tab, the editor takes their text in
// as a small set of changes (the cursor, selection, scroll, focus and undo
// history stay). If the person has unsaved text, their change is merged in
// around it at once when the two touch different lines (the person's text
// stays unsaved and is saved on the new version); when they touch the same
// lines the editor is left alone and the next save meets the 412 path,
// which keeps the person's text and shows both side by side.

const DEBOUNCE_MS = 800;

// Shown is what the view renders of the session.
export type Shown = {
  text: (t: string) => void;
  conflict: (c: TextConflict | null) => void;
  error: (e: string) => void;
  state: (s: SaveState) => void;
};

export class MarkdownSession {
  props: MarkdownProps;
  base: Base;
  private view: EditorView | null = null;
  private saver: Saver;
  private shown: Shown;
  private restored: Draft | null;
  private conflict: TextConflict | null = null;
  private inflight = false;
  private sending = ""; // the text of the save under way, while inflight
  private timer: number | undefined;
  private alive = true;
  // behind: a remote write to this tab is not in the editor yet (it was
  // learned of while a save or a read was under way).
  private behind = false;
  private wanted = 0; // the newest version of this tab learned of
  private fetching = false;
  private lastSeq: number;

  constructor(props: MarkdownProps, restored: Draft | null, saver: Saver, shown: Shown) {
    this.props = props;
    this.restored = restored;
    this.base = restored ? { text: restored.base, version: restored.version } : { text: props.text, version: props.version };
    this.saver = saver;
    this.shown = shown;
    this.lastSeq = props.remote?.seq ?? 0;
  }

  // update takes the view's newest props.
  update(props: MarkdownProps) {
    this.props = props;
  }

  private setState(s: SaveState) {
    this.shown.state(s);
    this.props.onState(s);
  }

  private setConflict(c: TextConflict | null) {
    this.conflict = c;
    this.shown.conflict(c);
  }

  doc(): string {
    return this.view?.state.doc.toString() ?? "";
  }

  private setDoc(t: string) {
    const v = this.view;
    if (v) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: t } });
  }

  // settled is the text the server holds once the save under way, if any,
  // is answered: until then the base is the text before it.
  private settled(): string {
    return this.inflight ? this.sending : this.base.text;
  }

  private keep(t: string) {
    const { noteId, tabId } = this.props;
    if (t === this.settled() && !this.conflict) clearDraft(noteId, tabId);
    else saveDraft(noteId, tabId, { text: t, base: this.base.text, version: this.base.version, at: new Date().toISOString() });
  }

  private read(): Promise<TabContent> {
    const { noteId, tabId } = this.props;
    return queryClient.fetchQuery({ ...queries.tab(noteId, tabId), staleTime: 0 });
  }

  // retry is the error box's Try again: a save waiting for the server goes
  // at once, any other is made again.
  retry = () => {
    if (this.inflight) this.saver.retryNow();
    else this.save();
  };

  save = () => {
    window.clearTimeout(this.timer);
    if (!this.alive || this.inflight || this.conflict || !this.view) return;
    const t = this.doc();
    const { noteId, tabId } = this.props;
    if (t === this.base.text) {
      clearDraft(noteId, tabId);
      this.setState("saved");
      return;
    }
    this.inflight = true;
    this.sending = t;
    this.setState("saving");
    this.shown.error("");
    const sent = { text: t, version: this.base.version };
    let found: TextConflict | null = null;
    void this.saver
      .run({
        version: () => sent.version,
        send: (pre) => api.setText({ id: noteId, tab_id: tabId }, sent.text, pre),
        retrying: (e) => {
          if (!this.alive) return;
          this.setState("error");
          this.shown.error(e.message);
        },
        // Someone wrote in between. If this tab's text is what the person
        // started from, only another tab changed: the same text goes on the
        // new version. Otherwise the person's text is kept and a merge
        // offered.
        conflict: async (c) => {
          const cur = await this.read();
          if (!this.alive) return "stop";
          const theirs = cur.text ?? "";
          this.props.onVersion(cur.version);
          if (theirs === this.base.text) {
            this.base = { text: theirs, version: cur.version };
            sent.version = cur.version;
            return "again";
          }
          found = { theirs, version: cur.version, who: c.who(this.props.me, tabId) || "someone", base: this.base.text };
          return "stop";
        },
      })
      .then((out) => {
        this.inflight = false;
        if (out.ok) {
          if (this.alive) this.shown.error("");
          this.saved(sent.text, out.value.version);
        } else if (!this.alive) {
          return;
        } else if ("conflict" in out && found) {
          this.setConflict(found);
          this.keep(this.doc());
          this.setState("conflict");
        } else {
          this.setState("error");
          this.shown.error(errorText("error" in out ? out.error : "This tab changed meanwhile: read it again."));
        }
      });
  };

  private saved(text: string, version: number) {
    const { noteId, tabId } = this.props;
    this.base = { text, version };
    this.props.onVersion(version);
    if (!this.alive) {
      // Saved after the tab was closed: the draft is no longer needed if
      // it is this text.
      if (loadDraft(noteId, tabId)?.text === text) clearDraft(noteId, tabId);
      return;
    }
    if (this.behind) {
      if (this.wanted > this.base.version) this.catchUp();
      else this.behind = false;
    }
    if (this.doc() === this.base.text) {
      clearDraft(noteId, tabId);
      this.setState("saved");
    } else {
      this.keep(this.doc());
      this.setState("unsaved");
      this.timer = window.setTimeout(this.save, DEBOUNCE_MS);
    }
  }

  // catchUp brings the editor to the server's text of this tab, keeping
  // what the person has not saved (see the top of this file).
  private catchUp() {
    if (!this.alive) return;
    if (this.inflight || this.fetching || this.conflict) {
      this.behind = true;
      return;
    }
    this.behind = false;
    this.fetching = true;
    this.read()
      .then((cur) => {
        this.fetching = false;
        const v = this.view;
        if (!this.alive || !v) return;
        if (this.inflight || this.conflict) {
          this.behind = true;
          return;
        }
        if (cur.version > this.base.version) this.takeIn(v, cur);
        if (this.behind || cur.version < this.wanted) this.catchUp();
      })
      .catch(() => {
        this.fetching = false;
        // The next write, or the next save's 412, catches up.
      });
  }

  private takeIn(v: EditorView, cur: TabContent) {
    const theirs = cur.text ?? "";
    const mine = this.doc();
    let target: string | null = null;
    if (mine === this.base.text) target = theirs;
    else {
      const m = merge3(this.base.text, theirs, mine);
      if (m.clean) target = m.text;
    }
    if (target === null) return;
    // The base moves first: the update listener then sees the editor's
    // text against the server's.
    this.base = { text: theirs, version: cur.version };
    this.props.onVersion(cur.version);
    const changes = textChanges(mine, target);
    if (changes.length) {
      // Not in the person's undo history: Ctrl+Z undoes their own typing,
      // mapped over this change, never the other writer's.
      const anchor = viewAnchor(v);
      const tr = v.state.update({ changes, annotations: [Transaction.addToHistory.of(false), Transaction.remote.of(true)] });
      v.dispatch(tr);
      if (anchor) keepInView(v, { pos: tr.changes.mapPos(anchor.pos, 1), top: anchor.top });
    } else {
      this.keep(mine);
      this.setState(mine === theirs ? "saved" : "unsaved");
    }
  }

  // heard is a write the page learned of.
  heard(remote: RemoteChange) {
    if (remote.seq <= this.lastSeq) return;
    this.lastSeq = remote.seq;
    if (remote.changed.length > 0 && !remote.changed.includes(this.props.tabId)) return;
    // This page's own save: the editor has it already.
    if (remote.version <= this.base.version) return;
    this.wanted = Math.max(this.wanted, remote.version);
    if (remote.mine && this.inflight) {
      this.behind = true; // may be this save: decided when it answers
      return;
    }
    this.catchUp();
  }

  // settle ends a conflict: the server's text becomes the base, and the
  // editor holds t, saved on the server's version.
  settle(t: string) {
    const c = this.conflict;
    if (!c) return;
    this.base = { text: c.theirs, version: c.version };
    this.setConflict(null);
    if (this.doc() !== t) this.setDoc(t);
    this.keep(t);
    this.save();
  }

  // mount makes the editor in host (once per tab: its text then lives in
  // it) and answers how to take it down.
  mount(host: HTMLDivElement): () => void {
    this.alive = true;
    // The editor lives in a shadow root: there CodeMirror's styles go into
    // a constructed style sheet, which the page's policy (no inline
    // styles) allows, rather than into a <style> element, which it blocks.
    const shadow = host.shadowRoot ?? host.attachShadow({ mode: "open" });
    const parent = document.createElement("div");
    parent.className = "md-editor-root";
    shadow.replaceChildren(parent);
    const v = new EditorView({
      doc: this.restored ? this.restored.text : this.props.text,
      parent,
      root: shadow,
      extensions: [
        basicSetup,
        markdown(),
        listContinuation,
        theme,
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ "aria-label": "Markdown text of " + this.props.label, "aria-multiline": "true" }),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) return;
          const t = u.state.doc.toString();
          this.shown.text(t);
          this.keep(t);
          if (this.conflict) return;
          // Typing back to the base while a save is under way is not
          // saved: the save puts its own text on the server.
          if (t !== this.settled()) this.setState("unsaved");
          else this.setState(this.inflight ? "saving" : "saved");
          window.clearTimeout(this.timer);
          this.timer = window.setTimeout(this.save, DEBOUNCE_MS);
        }),
      ],
    });
    this.view = v;
    // A restored draft is saved at once (it may meet a conflict).
    if (this.restored) {
      this.setState("unsaved");
      this.timer = window.setTimeout(this.save, 0);
    }
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "s") {
        e.preventDefault();
        this.save();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => {
      // Leaving the tab saves what is not saved yet (the draft keeps it
      // if that fails).
      if (!this.conflict && !this.inflight && this.doc() !== this.base.text) this.save();
      this.alive = false;
      window.removeEventListener("keydown", onKey);
      window.clearTimeout(this.timer);
      v.destroy();
      this.view = null;
    };
  }
}
