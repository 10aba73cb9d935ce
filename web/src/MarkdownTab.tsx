import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { EditorView, basicSetup } from "codemirror";
import { Transaction } from "@codemirror/state";
import { markdown } from "@codemirror/lang-markdown";
import MarkdownIt from "markdown-it";
import DOMPurify from "dompurify";
import { api, ApiError, writers, type Change } from "./api";
import { clearDraft, loadDraft, saveDraft, type Draft } from "./draft";
import { changedLines, merge3, textChanges } from "./merge";
import type { RemoteChange } from "./tabs";

// The markdown tab: CodeMirror beside a sanitized preview. It saves as the
// person types (debounced) and on Ctrl/Cmd+S, with the version it last saw
// and an Idempotency-Key per attempt; the unsaved text is a local draft
// until the server has it. A save refused because someone wrote in between
// (412) keeps the person's text and offers a merge.
//
// Live: when someone else writes this tab, the editor takes their text in
// as a small set of changes (the cursor, selection, scroll, focus and undo
// history stay). If the person has unsaved text, their change is merged in
// around it at once when the two touch different lines (the person's text
// stays unsaved and is saved on the new version); when they touch the same
// lines the editor is left alone and the next save meets the 412 path,
// which keeps the person's text and shows both side by side.

export type SaveState = "saved" | "saving" | "unsaved" | "conflict" | "error";

const DEBOUNCE_MS = 800;
const RETRY_MS = 5000;

// theme is the editor's look in the app's palette (its custom properties
// reach into the shadow root).
const theme = EditorView.theme({
  "&": { minHeight: "24rem", height: "100%", color: "var(--fg)", backgroundColor: "var(--card)", borderRadius: "var(--radius)", fontSize: ".95rem" },
  "&.cm-focused": { outline: "3px solid var(--focus)", outlineOffset: "0" },
  ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", lineHeight: "1.55" },
  ".cm-content": { caretColor: "var(--fg)" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--fg)" },
  ".cm-gutters": { backgroundColor: "var(--soft)", color: "var(--muted)", borderRight: "1px solid var(--line)", borderRadius: "var(--radius) 0 0 var(--radius)" },
  ".cm-activeLine": { backgroundColor: "color-mix(in srgb, var(--note-bg) 55%, transparent)" },
  ".cm-activeLineGutter": { backgroundColor: "color-mix(in srgb, var(--note-bg) 80%, transparent)", color: "var(--fg)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": { backgroundColor: "color-mix(in srgb, var(--accent) 30%, transparent)" },
});

// An anchor is a place in the text and where it is on screen.
type Anchor = { pos: number; top: number };

// viewAnchor is the first line of the editor in view (null: none is).
function viewAnchor(v: EditorView): Anchor | null {
  const r = v.scrollDOM.getBoundingClientRect();
  const y = Math.max(r.top, 0) + 1;
  if (y >= Math.min(r.bottom, window.innerHeight)) return null;
  const pos = v.lineBlockAtHeight(y - v.documentTop).from;
  const c = v.coordsAtPos(pos);
  return c ? { pos, top: c.top } : null;
}

// keepInView scrolls the page so that a.pos is where a.top was: lines an
// editor above what the person reads does not push it away. (The
// editor's own scroller keeps its place by itself; the page's does not.)
function keepInView(v: EditorView, a: Anchor) {
  const fix = (top: number | null | undefined) => {
    if (top != null && Math.abs(top - a.top) > 0.5) window.scrollBy(0, top - a.top);
  };
  fix(v.coordsAtPos(a.pos)?.top);
  // Once the editor has measured its new lines, again.
  v.requestMeasure({ read: (view) => view.coordsAtPos(a.pos)?.top, write: fix });
}

const md = new MarkdownIt({ html: false, linkify: true });

function newKey(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
}

type Conflict = { theirs: string; version: number; who: string };
type Attempt = { text: string; version: number; key: string };

type Props = {
  noteId: string;
  tabId: string;
  label: string;
  text: string; // the server's text
  version: number; // the Note's version that text is
  me: string;
  remote?: RemoteChange | null; // the newest write the page learned of
  onVersion: (v: number) => void;
  onState: (s: SaveState) => void;
};

export function MarkdownTab(p: Props) {
  const [offer, setOffer] = useState<Draft | null>(() => {
    const d = loadDraft(p.noteId, p.tabId);
    if (d && d.text === p.text) {
      clearDraft(p.noteId, p.tabId);
      return null;
    }
    return d;
  });
  // A draft not restored yet is text the server does not have.
  useEffect(() => {
    if (offer) p.onState("unsaved");
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [offer]);
  if (offer) {
    return (
      <div className="draft-offer notice" role="region" aria-label="Unsaved text">
        <div>
          <p>
            <strong>You have unsaved text from {offer.at ? new Date(offer.at).toLocaleString() : "earlier"}</strong>: it was not saved to the
            Note. Restore it to keep working on it, or discard it.
          </p>
          <pre className="draft-text">{offer.text}</pre>
        </div>
        <div className="draft-actions">
          <button type="button" className="primary" onClick={() => setOffer(null)} data-restore="">
            Restore
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              clearDraft(p.noteId, p.tabId);
              setOffer(null);
              p.onState("saved");
            }}
          >
            Discard
          </button>
        </div>
      </div>
    );
  }
  return <Editor {...p} restored={loadDraft(p.noteId, p.tabId)} />;
}

function Editor(p: Props & { restored: Draft | null }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const base = useRef({ text: p.restored ? p.restored.base : p.text, version: p.restored ? p.restored.version : p.version });
  const inflight = useRef(false);
  const attempt = useRef<Attempt | null>(null);
  const timer = useRef<number | undefined>(undefined);
  const conflictRef = useRef<Conflict | null>(null);
  const alive = useRef(true);
  const [text, setText] = useState(p.restored ? p.restored.text : p.text);
  const [conflict, setConflictState] = useState<Conflict | null>(null);
  const [error, setError] = useState("");
  const [state, setStateState] = useState<SaveState>("saved");
  const props = useRef(p);
  props.current = p;

  const setState = useCallback((s: SaveState) => {
    setStateState(s);
    props.current.onState(s);
  }, []);
  const setConflict = (c: Conflict | null) => {
    conflictRef.current = c;
    setConflictState(c);
  };
  // behind: a remote write to this tab is not in the editor yet (it was
  // learned of while a save or a fetch was under way).
  const behind = useRef(false);
  const wanted = useRef(0); // the newest version of this tab learned of
  const fetching = useRef(false);
  const doc = () => view.current?.state.doc.toString() ?? "";
  const setDoc = (t: string) => {
    const v = view.current;
    if (v) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: t } });
  };
  // settled is the text the server holds once the save under way, if any,
  // is answered: until then the base is the text before it.
  const settled = () => (inflight.current && attempt.current ? attempt.current.text : base.current.text);
  const keep = (t: string) => {
    const { noteId, tabId } = props.current;
    if (t === settled() && !conflictRef.current) clearDraft(noteId, tabId);
    else saveDraft(noteId, tabId, { text: t, base: base.current.text, version: base.current.version, at: new Date().toISOString() });
  };

  const save = useCallback(() => {
    window.clearTimeout(timer.current);
    if (!alive.current || inflight.current || conflictRef.current || !view.current) return;
    const t = doc();
    const { noteId, tabId } = props.current;
    if (t === base.current.text) {
      attempt.current = null;
      clearDraft(noteId, tabId);
      setState("saved");
      return;
    }
    // A retry of the same text on the same version is the same attempt.
    let a = attempt.current;
    if (!a || a.text !== t || a.version !== base.current.version) a = { text: t, version: base.current.version, key: newKey() };
    attempt.current = a;
    inflight.current = true;
    setState("saving");
    setError("");
    const sent = a;
    api
      .setText(noteId, tabId, sent.text, sent.version, sent.key)
      .then((res) => {
        inflight.current = false;
        attempt.current = null;
        base.current = { text: sent.text, version: res.version };
        props.current.onVersion(res.version);
        if (!alive.current) {
          // Saved after the tab was closed: the draft is no longer needed
          // if it is this text.
          if (loadDraft(noteId, tabId)?.text === sent.text) clearDraft(noteId, tabId);
          return;
        }
        if (behind.current) {
          if (wanted.current > base.current.version) catchUp();
          else behind.current = false;
        }
        if (doc() === base.current.text) {
          clearDraft(noteId, tabId);
          setState("saved");
        } else {
          keep(doc());
          setState("unsaved");
          timer.current = window.setTimeout(save, DEBOUNCE_MS);
        }
      })
      .catch((e: unknown) => {
        inflight.current = false;
        if (!alive.current) return;
        if (e instanceof ApiError && e.status === 412) {
          attempt.current = null;
          resolve412(e.changes);
          return;
        }
        setState("error");
        setError(e instanceof Error ? e.message : String(e));
        // Unreachable server: the same attempt again, a little later.
        if (e instanceof ApiError && (e.status === 0 || e.status >= 500)) timer.current = window.setTimeout(save, RETRY_MS);
        else attempt.current = null;
      });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [setState]);

  // resolve412: someone wrote in between. If this tab's text is what the
  // person started from, only another tab changed: save again on the new
  // version. Otherwise keep the person's text and offer a merge.
  const resolve412 = (changes: Change[]) => {
    const { noteId, tabId, me } = props.current;
    api
      .tab(noteId, tabId)
      .then((cur) => {
        if (!alive.current) return;
        const theirs = cur.text ?? "";
        props.current.onVersion(cur.version);
        if (theirs === base.current.text) {
          base.current = { text: theirs, version: cur.version };
          save();
          return;
        }
        const mine = changes.filter((c) => !c.changed || c.changed.length === 0 || c.changed.includes(tabId));
        setConflict({ theirs, version: cur.version, who: writers(mine.length ? mine : changes, me) || "someone" });
        keep(doc());
        setState("conflict");
      })
      .catch((e: unknown) => {
        if (!alive.current) return;
        setState("error");
        setError(e instanceof Error ? e.message : String(e));
      });
  };

  // catchUp brings the editor to the server's text of this tab, keeping
  // what the person has not saved (see the top of this file).
  const catchUp = () => {
    if (!alive.current) return;
    if (inflight.current || fetching.current || conflictRef.current) {
      behind.current = true;
      return;
    }
    behind.current = false;
    fetching.current = true;
    const { noteId, tabId } = props.current;
    api
      .tab(noteId, tabId)
      .then((cur) => {
        fetching.current = false;
        const v = view.current;
        if (!alive.current || !v) return;
        if (inflight.current || conflictRef.current) {
          behind.current = true;
          return;
        }
        if (cur.version > base.current.version) {
          const theirs = cur.text ?? "";
          const mine = doc();
          let target: string | null = null;
          if (mine === base.current.text) target = theirs;
          else {
            const m = merge3(base.current.text, theirs, mine);
            if (m.clean) target = m.text;
          }
          if (target !== null) {
            // The base moves first: the update listener then sees the
            // editor's text against the server's.
            base.current = { text: theirs, version: cur.version };
            props.current.onVersion(cur.version);
            const changes = textChanges(mine, target);
            if (changes.length) {
              // Not in the person's undo history: Ctrl+Z undoes their own
              // typing, mapped over this change, never the other writer's.
              const anchor = viewAnchor(v);
              const tr = v.state.update({ changes, annotations: [Transaction.addToHistory.of(false), Transaction.remote.of(true)] });
              v.dispatch(tr);
              if (anchor) keepInView(v, { pos: tr.changes.mapPos(anchor.pos, 1), top: anchor.top });
            } else {
              keep(mine);
              setState(mine === theirs ? "saved" : "unsaved");
            }
          }
        }
        if (behind.current) catchUp();
      })
      .catch(() => {
        fetching.current = false;
        // The next write, or the next save's 412, catches up.
      });
  };
  const remote = p.remote;
  const lastSeq = useRef(remote?.seq ?? 0);
  useEffect(() => {
    if (!remote || remote.seq <= lastSeq.current) return;
    lastSeq.current = remote.seq;
    if (remote.changed.length > 0 && !remote.changed.includes(p.tabId)) return;
    // This page's own save: the editor has it already.
    if (remote.version <= base.current.version) return;
    wanted.current = Math.max(wanted.current, remote.version);
    if (remote.mine && inflight.current) {
      behind.current = true; // may be this save: decided when it answers
      return;
    }
    catchUp();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [remote]);

  useEffect(() => {
    alive.current = true;
    if (!host.current) return;
    // The editor lives in a shadow root: there CodeMirror's styles go into
    // a constructed style sheet, which the page's policy (no inline
    // styles) allows, rather than into a <style> element, which it blocks.
    const shadow = host.current.shadowRoot ?? host.current.attachShadow({ mode: "open" });
    const parent = document.createElement("div");
    parent.className = "md-editor-root";
    shadow.replaceChildren(parent);
    const v = new EditorView({
      doc: text,
      parent,
      root: shadow,
      extensions: [
        basicSetup,
        markdown(),
        theme,
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ "aria-label": "Markdown text of " + p.label, "aria-multiline": "true" }),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) return;
          const t = u.state.doc.toString();
          setText(t);
          keep(t);
          if (conflictRef.current) return;
          // Typing back to the base while a save is under way is not
          // saved: the save puts its own text on the server.
          if (t !== settled()) setState("unsaved");
          else setState(inflight.current ? "saving" : "saved");
          window.clearTimeout(timer.current);
          timer.current = window.setTimeout(save, DEBOUNCE_MS);
        }),
      ],
    });
    view.current = v;
    // A restored draft is saved at once (it may meet a conflict).
    if (p.restored) {
      setState("unsaved");
      timer.current = window.setTimeout(save, 0);
    }
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "s") {
        e.preventDefault();
        save();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => {
      // Leaving the tab saves what is not saved yet (the draft keeps it
      // if that fails).
      if (!conflictRef.current && !inflight.current && doc() !== base.current.text) save();
      alive.current = false;
      window.removeEventListener("keydown", onKey);
      window.clearTimeout(timer.current);
      v.destroy();
      view.current = null;
    };
    // The editor is made once per tab; its text then lives in it.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const html = useMemo(() => DOMPurify.sanitize(md.render(text)), [text]);
  const merged = useMemo(() => (conflict ? merge3(base.current.text, conflict.theirs, text) : null), [conflict, text]);

  // settle ends a conflict: the server's text becomes the base, and the
  // editor holds t, saved on the server's version.
  const settle = (t: string) => {
    if (!conflict) return;
    base.current = { text: conflict.theirs, version: conflict.version };
    setConflict(null);
    if (doc() !== t) setDoc(t);
    keep(t);
    save();
  };

  return (
    <div className="md-tab">
      {conflict && merged ? (
        <section className="conflict" aria-labelledby="conflict-title" role="region">
          <h2 id="conflict-title">{conflict.who} changed this tab while you were writing</h2>
          <details className="their-change" open>
            <summary>What {conflict.who} changed</summary>
            <pre tabIndex={0} aria-label={"What " + conflict.who + " changed"}>
              {changedLines(base.current.text, conflict.theirs).join("\n") || "Nothing in this tab's text."}
            </pre>
          </details>
          {merged.clean ? (
            <>
              <p>
                Your text is kept here and was not saved yet. Your changes and theirs touch different lines: apply both to keep
                everything, then it is saved on version {conflict.version}.
              </p>
              <div className="conflict-actions">
                <button type="button" className="primary" onClick={() => settle(merged.text)}>
                  Apply both
                </button>
                <button type="button" className="secondary" onClick={() => settle(conflict.theirs)}>
                  Take theirs
                </button>
                <button type="button" className="secondary" onClick={() => settle(doc())}>
                  Keep mine
                </button>
              </div>
            </>
          ) : (
            <>
              <p>
                Your text is kept here and was not saved yet. You both changed the same lines: choose what to keep, or edit both
                into one.
              </p>
              <div className="side-by-side">
                <div>
                  <h3>Theirs (version {conflict.version})</h3>
                  <pre className="theirs" tabIndex={0} aria-label="Their text">
                    {conflict.theirs}
                  </pre>
                </div>
                <div>
                  <h3>Yours</h3>
                  <pre className="mine" tabIndex={0} aria-label="Your text">
                    {text}
                  </pre>
                </div>
              </div>
              <div className="conflict-actions">
                <button type="button" className="primary" onClick={() => settle(doc())}>
                  Keep mine
                </button>
                <button type="button" className="secondary" onClick={() => settle(conflict.theirs)}>
                  Take theirs
                </button>
                <button type="button" className="secondary" onClick={() => settle(merged.text)}>
                  Edit both
                </button>
              </div>
            </>
          )}
        </section>
      ) : null}
      {error ? (
        <div className="error-box" role="alert">
          <p>Not saved: {error}</p>
          <button type="button" className="secondary" onClick={save}>
            Try again
          </button>
        </div>
      ) : null}
      <div className="md-split">
        <div className="md-editor" ref={host} data-state={state} />
        <div className="md-preview" aria-label="Preview" role="region" tabIndex={0} dangerouslySetInnerHTML={{ __html: html }} />
      </div>
    </div>
  );
}
