import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent, type KeyboardEvent } from "react";
import { ApiError, writers, type Change, type Slide, type TabContent } from "./api";
import type { TabProps } from "./tabs";
import type { SaveState } from "./MarkdownTab";
import { Dialog, Notice } from "./ui";
import { SlideView } from "./slides/SlideView";
import { layoutOf, layouts, newKey, slidesApi, textFields, themeOf, themes, type SlidePatch, type TextField } from "./slides/api";
import { keepDrafts, restoreDrafts, type Clash, type Drafts, type Lost } from "./slides/draft";
import "./slides.css";

// The slides editor: the deck as cards (drag or Alt+↑/↓ to reorder) and
// the selected slide's title, body and notes beside a preview in its
// layout and theme. Text is saved as the person types (debounced), every
// write with the version it is based on and an Idempotency-Key per
// attempt. A write refused because someone wrote in between (412) is
// sent again on the new version when this tab did not change; when it
// did, the slides are reloaded, the person's unsaved text is kept, and a
// field both changed is shown with theirs to choose from.

const DEBOUNCE_MS = 700;
const RETRY_MS = 4000;


const fieldName: Record<TextField, string> = { title: "Title", body: "Body", notes: "Speaker notes" };

function sameDeck(a: Slide[], b: Slide[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function moved(list: Slide[], id: string, to: number): Slide[] {
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

const sleep = (ms: number) => new Promise((r) => window.setTimeout(r, ms));

export function SlidesTab(p: TabProps) {
  const tabId = p.content.tab_id;
  const [base, setBaseState] = useState<Slide[]>(p.content.slides ?? []);
  // Text kept in the browser from before (a reload, a closed window).
  const [kept] = useState(() => restoreDrafts(p.noteId, p.content.tab_id, p.content.slides ?? []));
  const [drafts, setDraftsState] = useState<Drafts>(kept.drafts);
  const [clashes, setClashesState] = useState<Record<string, Clash>>(kept.clashes);
  const [lost, setLost] = useState<Lost[]>(kept.lost);
  const [selected, setSelected] = useState<string>(p.content.slides?.[0]?.slide_id ?? "");
  const [busy, setBusy] = useState(0);
  const [error, setError] = useState("");
  const [notice, setNotice] = useState("");
  const [confirm, setConfirm] = useState<Slide | null>(null);
  const [dragging, setDragging] = useState("");
  const [dropAt, setDropAt] = useState(-1);
  const [focusId, setFocusId] = useState("");
  // titleFocus asks for the title field's focus once the render that
  // shows a new slide is committed (a timer could run before it).
  const [titleFocus, setTitleFocus] = useState(0);

  const baseRef = useRef(base);
  const draftsRef = useRef(drafts);
  const clashRef = useRef(clashes);
  const version = useRef(p.content.version);
  const chain = useRef<Promise<void>>(Promise.resolve());
  const timer = useRef<number | undefined>(undefined);
  const alive = useRef(true);
  const cards = useRef<Record<string, HTMLButtonElement | null>>({});
  const props = useRef(p);
  props.current = p;

  const setBase = (s: Slide[]) => {
    baseRef.current = s;
    setBaseState(s);
  };
  const setDrafts = (d: Drafts) => {
    draftsRef.current = d;
    setDraftsState(d);
  };
  const setClashes = (c: Record<string, Clash>) => {
    clashRef.current = c;
    setClashesState(c);
  };
  const seen = (v: number) => {
    if (v > version.current) version.current = v;
    props.current.onVersion(v);
  };

  // enqueue runs writes one after another, each on the version the one
  // before it left.
  const enqueue = useCallback((fn: () => Promise<void>) => {
    setBusy((n) => n + 1);
    chain.current = chain.current
      .then(fn)
      .catch((e: unknown) => {
        if (alive.current) setError(e instanceof Error ? e.message : String(e));
      })
      .finally(() => {
        if (alive.current) setBusy((n) => n - 1);
      });
  }, []);

  // applyServer takes the server's deck as the new base. A field the person
  // has unsaved text in that the server changed too is a clash; a slide
  // the person was writing in that is gone keeps its text as "lost".
  const applyServer = (cur: TabContent, who: string): boolean => {
    const old = baseRef.current;
    const next = cur.slides ?? [];
    const d: Drafts = { ...draftsRef.current };
    const c: Record<string, Clash> = { ...clashRef.current };
    const gone: Lost[] = [];
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
          c[id + ":" + f] = { theirs: n[f], who };
        }
      }
      if (Object.keys(mine).length) d[id] = mine;
      else delete d[id];
    }
    setDrafts(d);
    setClashes(c);
    if (gone.length) setLost((l) => [...l, ...gone]);
    setBase(next);
    seen(cur.version);
    if (!next.some((s) => s.slide_id === selectedRef.current)) setSelected(next[0]?.slide_id ?? "");
    // True when the person's unsaved text is kept and goes on being saved
    // (no field to choose, no slide gone).
    return Object.keys(d).length > 0 && gone.length === 0;
  };
  const selectedRef = useRef(selected);
  selectedRef.current = selected;

  const reload = async (who: string) => {
    const cur = await slidesApi.read(props.current.noteId, tabId);
    if (alive.current) applyServer(cur, who);
  };

  // guarded sends one write. On a 412 it reloads the deck: when the deck
  // is what this page had, or retryIfChanged, it sends again on the new
  // version (a new attempt, so a new key); otherwise it answers
  // "changed", and the caller works out what to send now. An unreachable
  // server gets the same attempt again, a little later.
  const guarded = async <T,>(send: (v: number, key: string) => Promise<T>, retryIfChanged: boolean, local?: (s: Slide[]) => Slide[]): Promise<T | "changed"> => {
    let key = newKey();
    for (let tries = 0; ; tries++) {
      try {
        const out = await send(version.current, key);
        if (alive.current) setError("");
        return out;
      } catch (e) {
        if (!alive.current) throw e;
        if (e instanceof ApiError && e.status === 412 && tries < 5) {
          const had = baseRef.current;
          const cur = await slidesApi.read(props.current.noteId, tabId);
          const changed = !sameDeck(cur.slides ?? [], had);
          const mine = e.changes.filter((c: Change) => !c.changed || c.changed.length === 0 || c.changed.includes(tabId));
          const who = whoName(writers(mine.length ? mine : e.changes, props.current.me));
          const kept = applyServer(cur, who);
          if (changed && kept && !Object.keys(clashRef.current).length) setNotice(`${who} changed these slides while you were writing: the deck is reloaded, and your unsaved text is kept and saved on it.`);
          if (local) setBase(local(baseRef.current));
          key = newKey();
          if (changed && !retryIfChanged) return "changed";
          continue;
        }
        if (e instanceof ApiError && (e.status === 0 || e.status >= 500) && tries < 20) {
          setError(e.message + " Retrying…");
          await sleep(RETRY_MS);
          continue;
        }
        throw e;
      }
    }
  };

  // saveText sends the unsaved text, slide by slide, until none is left.
  const saveText = useCallback(() => {
    window.clearTimeout(timer.current);
    enqueue(async () => {
      for (let round = 0; round < 50 && alive.current; round++) {
        const d = draftsRef.current;
        let id = "";
        let patch: SlidePatch = {};
        for (const sid of Object.keys(d)) {
          const sl = baseRef.current.find((s) => s.slide_id === sid);
          if (!sl) continue;
          const pt: SlidePatch = {};
          for (const f of textFields) {
            const v = d[sid][f];
            if (v === undefined || clashRef.current[sid + ":" + f]) continue;
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
        const res = await guarded((v, key) => slidesApi.patch(props.current.noteId, tabId, id, sent, v, key), false);
        if (res === "changed" || !alive.current) continue;
        seen(res.version);
        setBase(baseRef.current.map((s) => (s.slide_id === id ? { ...s, ...sent } : s)));
        const nd: Drafts = { ...draftsRef.current };
        const left = { ...nd[id] };
        for (const f of textFields) if (left[f] !== undefined && left[f] === sent[f]) delete left[f];
        if (Object.keys(left).length) nd[id] = left;
        else delete nd[id];
        setDrafts(nd);
      }
    });
  }, [enqueue]); // eslint-disable-line react-hooks/exhaustive-deps

  // act is one of the person's deliberate changes (add, move, delete, a
  // look): it is applied here at once and sent again on the new version
  // after a 412, since it does not depend on the text it was based on.
  const act = (send: (v: number, key: string) => Promise<unknown>, local?: (s: Slide[]) => Slide[], after?: (res: unknown) => void) => {
    if (local) setBase(local(baseRef.current));
    enqueue(async () => {
      const res = await guarded(send, true, local);
      if (res === "changed" || !alive.current) return;
      const v = (res as { version?: number } | undefined)?.version;
      if (typeof v === "number") seen(v);
      after?.(res);
    });
  };

  // The save state the Note's header shows.
  const dirty = Object.keys(drafts).some((id) => Object.keys(drafts[id]).length > 0);
  const hasClash = Object.keys(clashes).length > 0;
  useEffect(() => {
    let s: SaveState = "saved";
    if (error) s = "error";
    else if (hasClash) s = "conflict";
    else if (busy > 0) s = "saving";
    else if (dirty) s = "unsaved";
    props.current.onState(s);
  }, [busy, dirty, hasClash, error]);

  // Another's write to this tab (an agent's, another person's, or this
  // person's on another page): reload it, keeping what the person is
  // typing (the fields stay mounted, so focus and caret stay too).
  const lastSeq = useRef(p.remote?.seq ?? 0);
  useEffect(() => {
    const r = p.remote;
    if (!r || r.seq === lastSeq.current) return;
    lastSeq.current = r.seq;
    if (!r.changed.includes(tabId)) return;
    enqueue(async () => {
      // This page's own write, already applied.
      if (r.mine && r.version <= version.current) return;
      const who = r.mine ? "You (on another page)" : whoName(r.who.name || (r.who.kind === "person" ? "a person" : "an agent"));
      const cur = await slidesApi.read(props.current.noteId, tabId);
      if (!alive.current) return;
      if (sameDeck(cur.slides ?? [], baseRef.current)) {
        seen(cur.version);
        return;
      }
      if (applyServer(cur, who) && !Object.keys(clashRef.current).length) setNotice(`${who} changed these slides while you were writing: your unsaved text is kept and saved on the new version.`);
    });
  }, [p.remote]); // eslint-disable-line react-hooks/exhaustive-deps

  // Ctrl/Cmd+S saves now; leaving the tab saves what is left.
  useEffect(() => {
    alive.current = true;
    const onKey = (e: globalThis.KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "s") {
        e.preventDefault();
        saveText();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("keydown", onKey);
      if (Object.keys(draftsRef.current).length) saveText();
      alive.current = false;
      window.clearTimeout(timer.current);
    };
  }, [saveText]);

  // The unsaved text is kept in the browser until the server has it; kept
  // text from before is saved at once.
  useEffect(() => {
    keepDrafts(p.noteId, tabId, drafts, base, clashes, lost);
  }, [drafts, base, clashes, lost]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    if (Object.keys(kept.drafts).length) saveText();
  }, []); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    if (!focusId) return;
    cards.current[focusId]?.focus();
    setFocusId("");
  }, [focusId, base]);

  const type = (id: string, f: TextField, v: string) => {
    const d = { ...draftsRef.current, [id]: { ...draftsRef.current[id], [f]: v } };
    setDrafts(d);
    // At once, not after the render: a reload may come before it.
    keepDrafts(p.noteId, tabId, d, baseRef.current, clashRef.current, lost);
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(saveText, DEBOUNCE_MS);
  };

  useEffect(() => {
    if (titleFocus) document.getElementById("sl-field-title")?.focus();
  }, [titleFocus]);

  const addSlide = (from?: Lost) => {
    const cur = baseRef.current.find((s) => s.slide_id === selectedRef.current);
    const at = from ? baseRef.current.length : cur ? baseRef.current.indexOf(cur) + 1 : baseRef.current.length;
    const body: SlidePatch & { title: string } = from
      ? { title: from.title.trim() || "New slide", body: from.body, notes: from.notes }
      : { title: "New slide", position: at };
    // A new slide takes the theme of the slide it follows: one deck, one look.
    const theme = cur ? themeOf(cur) : "";
    if (theme && theme !== "paper") body.theme = theme;
    act(
      (v, key) => slidesApi.add(p.noteId, tabId, body, v, key),
      undefined,
      (res) => {
        const r = res as { slide_id: string };
        const s: Slide = { slide_id: r.slide_id, title: body.title, body: body.body ?? "", notes: body.notes ?? "", theme: body.theme };
        const list = baseRef.current.slice();
        list.splice(Math.min(body.position ?? list.length, list.length), 0, s);
        setBase(list);
        setSelected(r.slide_id);
        if (!from) setTitleFocus((n) => n + 1);
      },
    );
  };

  const move = (id: string, to: number) => {
    const from = baseRef.current.findIndex((s) => s.slide_id === id);
    if (from < 0 || to < 0 || to >= baseRef.current.length || to === from) return;
    act((v, key) => slidesApi.patch(p.noteId, tabId, id, { position: to }, v, key), (s) => moved(s, id, to));
  };

  const setLook = (id: string, look: { layout?: string; theme?: string }) => {
    act(
      (v, key) => slidesApi.patch(p.noteId, tabId, id, look, v, key),
      (s) => s.map((x) => (x.slide_id === id ? { ...x, ...look } : x)),
    );
  };

  const themeAll = (theme: string) => {
    for (const s of baseRef.current) if (themeOf(s) !== theme) setLook(s.slide_id, { theme });
  };

  const remove = (s: Slide) => {
    setConfirm(null);
    const i = baseRef.current.findIndex((x) => x.slide_id === s.slide_id);
    const nd = { ...draftsRef.current };
    delete nd[s.slide_id];
    setDrafts(nd);
    const nc = { ...clashRef.current };
    for (const f of textFields) delete nc[s.slide_id + ":" + f];
    setClashes(nc);
    const rest = baseRef.current.filter((x) => x.slide_id !== s.slide_id);
    setSelected(rest[Math.min(i, rest.length - 1)]?.slide_id ?? "");
    act(
      (v, key) => slidesApi.remove(p.noteId, tabId, s.slide_id, v, key),
      (list) => list.filter((x) => x.slide_id !== s.slide_id),
      () => {
        // A 204 has no body: read the deck for the version it made.
        enqueue(async () => {
          await reload("Someone");
        });
      },
    );
  };

  // Drag and drop: dropAt is the gap (0…n) the dragged card would land in.
  const onDragOver = (e: DragEvent<HTMLLIElement>, i: number) => {
    if (!dragging) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "move";
    const r = e.currentTarget.getBoundingClientRect();
    const after = r.height > 0 ? e.clientY > r.top + r.height / 2 : false;
    setDropAt(after ? i + 1 : i);
  };
  const onDrop = (e: DragEvent<HTMLElement>) => {
    e.preventDefault();
    const id = dragging || e.dataTransfer.getData("text/plain");
    const from = baseRef.current.findIndex((s) => s.slide_id === id);
    const gap = dropAt;
    setDragging("");
    setDropAt(-1);
    if (from < 0 || gap < 0) return;
    const to = gap > from ? gap - 1 : gap;
    move(id, to);
  };
  const onCardKey = (e: KeyboardEvent<HTMLButtonElement>, s: Slide, i: number) => {
    if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
      e.preventDefault();
      move(s.slide_id, e.key === "ArrowUp" ? i - 1 : i + 1);
      setFocusId(s.slide_id);
    } else if (!e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
      e.preventDefault();
      const j = e.key === "ArrowUp" ? i - 1 : i + 1;
      const t = base[j];
      if (t) {
        setSelected(t.slide_id);
        setFocusId(t.slide_id);
      }
    }
  };

  const shown = useMemo(() => base.map((s) => ({ ...s, ...drafts[s.slide_id] })), [base, drafts]);
  const index = shown.findIndex((s) => s.slide_id === selected);
  const sel = index >= 0 ? shown[index] : undefined;

  const lostBox = lost.length ? (
    <div className="notice sl-lost" role="region" aria-label="Text from a deleted slide">
      <div>
        {lost.map((l, i) => (
          <p key={i}>
            {l.who} deleted the slide “{l.title || "Untitled"}” while you were writing in it. Your text is kept here.{" "}
            <button type="button" className="secondary small" onClick={() => (addSlide(l), setLost((x) => x.filter((_, j) => j !== i)))}>
              Add it back
            </button>{" "}
            <button type="button" className="ghost small" onClick={() => setLost((x) => x.filter((_, j) => j !== i))}>
              Discard
            </button>
          </p>
        ))}
      </div>
    </div>
  ) : null;

  const errorBox = error ? (
    <div className="error-box" role="alert">
      <p>Not saved: {error}</p>
      <button type="button" className="secondary" onClick={() => (setError(""), saveText())}>
        Try again
      </button>
    </div>
  ) : null;

  if (base.length === 0) {
    return (
      <div className="sl-tab">
        {errorBox}
        {lostBox}
        <div className="empty sl-empty">
          <h2>No slides yet</h2>
          <p>Add the first slide and write its title, body and speaker notes here, or ask an agent connected to this Note to draft an outline.</p>
          <button type="button" className="primary" onClick={() => addSlide()} disabled={busy > 0}>
            Add a slide
          </button>
        </div>
      </div>
    );
  }

  return (
    <div className="sl-tab">
      {errorBox}
      {lostBox}
      <Notice text={notice} onDismiss={() => setNotice("")} role="status" />
      <div className="sl-split">
        <section className="sl-deck" aria-labelledby="sl-deck-title">
          <div className="sl-deck-head">
            <h2 id="sl-deck-title">
              Slides <span className="muted">({base.length})</span>
            </h2>
            <button type="button" className="secondary small" onClick={() => addSlide()} data-add-slide="">
              + Add slide
            </button>
          </div>
          <p className="sl-hint muted" id="sl-reorder-hint">
            Drag a slide to reorder it, or press Alt+↑ / Alt+↓.
          </p>
          <ol className="sl-list" onDragLeave={(e) => e.currentTarget === e.target && setDropAt(-1)}>
            {shown.map((s, i) => (
              <li
                key={s.slide_id}
                className={"sl-item" + (dragging === s.slide_id ? " is-dragging" : "") + (dropAt === i ? " drop-before" : "") + (dropAt === i + 1 && i === shown.length - 1 ? " drop-after" : "")}
                data-slide-id={s.slide_id}
                draggable
                onDragStart={(e) => {
                  e.dataTransfer.effectAllowed = "move";
                  e.dataTransfer.setData("text/plain", s.slide_id);
                  setDragging(s.slide_id);
                }}
                onDragEnd={() => {
                  setDragging("");
                  setDropAt(-1);
                }}
                onDragOver={(e) => onDragOver(e, i)}
                onDrop={onDrop}
              >
                <button
                  type="button"
                  className="sl-card"
                  aria-current={s.slide_id === selected ? "true" : undefined}
                  aria-describedby="sl-reorder-hint"
                  ref={(el) => {
                    cards.current[s.slide_id] = el;
                  }}
                  onClick={() => setSelected(s.slide_id)}
                  onKeyDown={(e) => onCardKey(e, s, i)}
                >
                  <span className="sl-no">{i + 1}</span>
                  <span className="sl-thumb" aria-hidden="true">
                    <SlideView slide={s} />
                  </span>
                  <span className="sr-only">
                    Slide {i + 1}: {s.title.trim() || "Untitled slide"}
                  </span>
                </button>
              </li>
            ))}
          </ol>
        </section>
        {sel ? (
          <section className="sl-editor" aria-labelledby="sl-editor-title">
            <div className="sl-editor-head">
              <h2 id="sl-editor-title">Slide {index + 1}</h2>
              <div className="sl-tools">
                <button type="button" className="secondary small" onClick={() => move(sel.slide_id, index - 1)} disabled={index === 0}>
                  <span aria-hidden="true">↑</span> Move up
                </button>
                <button type="button" className="secondary small" onClick={() => move(sel.slide_id, index + 1)} disabled={index === shown.length - 1}>
                  <span aria-hidden="true">↓</span> Move down
                </button>
                <button type="button" className="ghost small danger-text" onClick={() => setConfirm(base[index])}>
                  Delete
                </button>
              </div>
            </div>
            <div className="sl-work">
              <div className="sl-fields">
                {textFields.map((f) => {
                  const clash = clashes[sel.slide_id + ":" + f];
                  const id = "sl-field-" + f;
                  const value = sel[f];
                  return (
                    <div className="sl-field" key={f}>
                      <label htmlFor={id}>{fieldName[f]}</label>
                      {f === "title" ? (
                        <input id={id} type="text" value={value} maxLength={500} onChange={(e) => type(sel.slide_id, f, e.target.value)} aria-invalid={value.trim() === "" ? true : undefined} aria-describedby={value.trim() === "" ? "sl-title-need" : undefined} />
                      ) : (
                        <textarea id={id} value={value} rows={f === "body" ? 7 : 3} onChange={(e) => type(sel.slide_id, f, e.target.value)} aria-describedby={f === "body" ? "sl-body-hint" : undefined} />
                      )}
                      {f === "title" && value.trim() === "" ? (
                        <p className="field-error" id="sl-title-need">
                          Every slide needs a title: it is saved once it has one.
                        </p>
                      ) : null}
                      {f === "body" ? (
                        <p className="sl-hint muted" id="sl-body-hint">
                          One point per line; start a line with “- ” for a bullet. Two columns: a line “---” splits the body.
                        </p>
                      ) : null}
                      {clash ? (
                        <div className="sl-clash" role="region" aria-label={fieldName[f] + ": their change"}>
                          <p>
                            <strong>{clash.who}</strong> changed the {fieldName[f].toLowerCase()} while you were writing. Yours is kept above and not saved yet; theirs:
                          </p>
                          <pre tabIndex={0}>{clash.theirs || "(empty)"}</pre>
                          <div className="sl-clash-actions">
                            <button
                              type="button"
                              className="primary small"
                              onClick={() => {
                                const c = { ...clashRef.current };
                                delete c[sel.slide_id + ":" + f];
                                setClashes(c);
                                saveText();
                              }}
                            >
                              Keep mine
                            </button>
                            <button
                              type="button"
                              className="secondary small"
                              onClick={() => {
                                const c = { ...clashRef.current };
                                delete c[sel.slide_id + ":" + f];
                                setClashes(c);
                                const d = { ...draftsRef.current, [sel.slide_id]: { ...draftsRef.current[sel.slide_id] } };
                                delete d[sel.slide_id][f];
                                setDrafts(d);
                              }}
                            >
                              Take theirs
                            </button>
                          </div>
                        </div>
                      ) : null}
                    </div>
                  );
                })}
              </div>
              <div className="sl-look">
                <div className="sl-preview" role="img" aria-label={`Preview of slide ${index + 1} in the ${layoutOf(sel)} layout and ${themeOf(sel)} theme`}>
                  <SlideView slide={sel} />
                </div>
                <fieldset className="sl-pick-group">
                  <legend>Layout</legend>
                  <div className="sl-options">
                    {layouts.map((l) => (
                      <label key={l.id} className="sl-option" data-checked={layoutOf(sel) === l.id || undefined}>
                        <input type="radio" name="sl-layout" value={l.id} checked={layoutOf(sel) === l.id} onChange={() => setLook(sel.slide_id, { layout: l.id })} />
                        <span className="sl-layout-icon" data-layout={l.id} aria-hidden="true" />
                        {l.name}
                      </label>
                    ))}
                  </div>
                </fieldset>
                <fieldset className="sl-pick-group">
                  <legend>Theme</legend>
                  <div className="sl-options">
                    {themes.map((t) => (
                      <label key={t.id} className="sl-option" data-checked={themeOf(sel) === t.id || undefined}>
                        <input type="radio" name="sl-theme" value={t.id} checked={themeOf(sel) === t.id} onChange={() => setLook(sel.slide_id, { theme: t.id })} />
                        <span className="sl-swatch" data-theme={t.id} aria-hidden="true" />
                        {t.name}
                      </label>
                    ))}
                  </div>
                  {base.some((s) => themeOf(s) !== themeOf(sel)) ? (
                    <button type="button" className="secondary small sl-all" onClick={() => themeAll(themeOf(sel))}>
                      Use {themes.find((t) => t.id === themeOf(sel))?.name ?? themeOf(sel)} on every slide
                    </button>
                  ) : null}
                </fieldset>
              </div>
            </div>
          </section>
        ) : (
          <section className="sl-editor empty">
            <p>Choose a slide to edit it.</p>
          </section>
        )}
      </div>
      <Dialog open={confirm !== null} title="Delete this slide?" id="sl-delete" onClose={() => setConfirm(null)}>
        {confirm ? (
          <>
            <p>
              Slide {base.findIndex((s) => s.slide_id === confirm.slide_id) + 1}, “{confirm.title || "Untitled slide"}”, is deleted from the deck for everyone. The Note's history keeps the version before.
            </p>
            <div className="dialog-actions">
              <button type="button" className="secondary" onClick={() => setConfirm(null)}>
                Cancel
              </button>
              <button type="button" className="danger" onClick={() => remove(confirm)} data-confirm-delete="">
                Delete slide
              </button>
            </div>
          </>
        ) : null}
      </Dialog>
    </div>
  );
}
