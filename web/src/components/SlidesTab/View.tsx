import { useEffect, useMemo, useRef, useState, type DragEvent, type KeyboardEvent } from "react";
import { createPortal } from "react-dom";
import type { Slide } from "../../api";
import { Dialog, Notice } from "../../ui";
import type { TabProps } from "../tab";
import { Present } from "./Present";
import { NEW_TITLE } from "./session";
import { SlideView } from "./SlideView";
import { layoutOf, layouts, themeOf, themes } from "./layouts";
import { fieldName, textFields, type Drafts } from "./types";
import { useSlides } from "./useSlides";

// The slides editor: the deck as cards (drag or Alt+↑/↓ to reorder) and
// the selected slide's title, body and notes beside a preview in its
// layout and theme; Present shows it full screen. How it saves: session.ts.

// presentKeys is the shortcut that presents, as the platform writes it.
const mac = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
const presentKeys = mac ? "⌘+Enter" : "Ctrl+Enter";

const isBlank = (s: Slide, fresh: string, drafts: Drafts) => s.slide_id === fresh && drafts[s.slide_id]?.title === undefined && s.title === NEW_TITLE;

export function SlidesTab(p: TabProps) {
  const { session, deck } = useSlides(p);
  const { base, drafts, clashes, lost, selected, busy, error, notice, fresh } = deck;
  const [confirm, setConfirm] = useState<Slide | null>(null);
  const [presenting, setPresenting] = useState(false);
  const presentButton = useRef<HTMLButtonElement>(null);
  const [dragging, setDragging] = useState("");
  const [dropAt, setDropAt] = useState(-1);
  const cards = useRef<Record<string, HTMLButtonElement | null>>({});
  // focusId is the card to focus once the render that moves it is done.
  const focusId = useRef("");
  useEffect(() => {
    if (!focusId.current) return;
    cards.current[focusId.current]?.focus();
    focusId.current = "";
  });
  // A new slide's title takes focus once the render that shows it is
  // committed (a timer could run before it).
  useEffect(() => {
    if (deck.titleFocus) document.getElementById("sl-field-title")?.focus();
  }, [deck.titleFocus]);

  // The slide the address points at (a search hit) is selected, its card
  // focused and scrolled into view.
  const want = p.target?.slide;
  const wantKey = p.target?.key;
  useEffect(() => {
    if (!want || !session.snapshot().base.some((s) => s.slide_id === want)) return;
    session.select(want);
    const card = cards.current[want];
    card?.focus();
    card?.scrollIntoView({ block: "nearest" });
  }, [session, want, wantKey]);

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
    const from = base.findIndex((s) => s.slide_id === id);
    const gap = dropAt;
    setDragging("");
    setDropAt(-1);
    if (from < 0 || gap < 0) return;
    const to = gap > from ? gap - 1 : gap;
    session.move(id, to);
  };
  const onCardKey = (e: KeyboardEvent<HTMLButtonElement>, s: Slide, i: number) => {
    if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
      e.preventDefault();
      session.move(s.slide_id, e.key === "ArrowUp" ? i - 1 : i + 1);
      focusId.current = s.slide_id;
    } else if (!e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
      e.preventDefault();
      const j = e.key === "ArrowUp" ? i - 1 : i + 1;
      const t = base[j];
      if (t) {
        session.select(t.slide_id);
        focusId.current = t.slide_id;
      }
    }
  };

  // The slide just added shows its title empty until the person types one
  // (the server calls it NEW_TITLE meanwhile).
  const blank = (s: Slide) => isBlank(s, fresh, drafts);
  const shown = useMemo(() => base.map((s) => ({ ...s, ...drafts[s.slide_id], ...(isBlank(s, fresh, drafts) ? { title: "" } : {}) })), [base, drafts, fresh]);
  const index = shown.findIndex((s) => s.slide_id === selected);
  const sel = index >= 0 ? shown[index] : undefined;
  const selBlank = index >= 0 && blank(base[index]);

  // Ctrl/Cmd+Enter presents from the selected slide.
  const canPresent = base.length > 0 && !presenting;
  useEffect(() => {
    if (!canPresent) return;
    const onKey = (e: globalThis.KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key === "Enter") {
        e.preventDefault();
        setPresenting(true);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [canPresent]);
  const stopPresenting = (at: number) => {
    setPresenting(false);
    const s = shown[at];
    if (s && s.slide_id !== selected) session.select(s.slide_id);
    window.setTimeout(() => presentButton.current?.focus(), 0);
  };

  const lostBox = lost.length ? (
    <div className="notice sl-lost" role="region" aria-label="Text from a deleted slide">
      <div>
        {lost.map((l, i) => (
          <p key={i}>
            {l.who} deleted the slide “{l.title || "Untitled"}” while you were writing in it. Your text is kept here.{" "}
            <button type="button" className="secondary small" onClick={() => session.restoreLost(i)}>
              Add it back
            </button>{" "}
            <button type="button" className="ghost small" onClick={() => session.dropLost(i)}>
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
      <button type="button" className="secondary" onClick={() => session.retry()}>
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
          <button type="button" className="primary" onClick={() => session.addSlide()} disabled={busy > 0}>
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
      <Notice text={notice} onDismiss={() => session.dismiss("notice")} role="status" />
      <div className="sl-split">
        <section className="sl-deck" aria-labelledby="sl-deck-title">
          <div className="sl-deck-head">
            <h2 id="sl-deck-title">
              Slides <span className="muted">({base.length})</span>
            </h2>
            <button type="button" className="primary small" ref={presentButton} onClick={() => setPresenting(true)} title={`Present from this slide, full screen (${presentKeys})`} aria-keyshortcuts="Control+Enter Meta+Enter" data-present="">
              <span aria-hidden="true">▶</span> Present
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
                  onClick={() => session.select(s.slide_id)}
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
          <button type="button" className="secondary small sl-add" onClick={() => session.addSlide()} title={index >= 0 ? `A new slide after slide ${index + 1}` : undefined} data-add-slide="">
            + Add slide
          </button>
        </section>
        {sel ? (
          <section className="sl-editor" aria-labelledby="sl-editor-title">
            <div className="sl-editor-head">
              <h2 id="sl-editor-title">Slide {index + 1}</h2>
              <div className="sl-tools">
                <button type="button" className="secondary small" onClick={() => session.move(sel.slide_id, index - 1)} disabled={index === 0}>
                  <span aria-hidden="true">↑</span> Move up
                </button>
                <button type="button" className="secondary small" onClick={() => session.move(sel.slide_id, index + 1)} disabled={index === shown.length - 1}>
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
                        <input id={id} type="text" value={value} maxLength={500} placeholder="Slide title" onChange={(e) => session.type(sel.slide_id, f, e.target.value)} aria-invalid={value.trim() === "" && !selBlank ? true : undefined} aria-describedby={value.trim() === "" ? "sl-title-need" : undefined} />
                      ) : (
                        <textarea id={id} value={value} rows={f === "body" ? 7 : 3} onChange={(e) => session.type(sel.slide_id, f, e.target.value)} aria-describedby={f === "body" ? "sl-body-hint" : undefined} />
                      )}
                      {f === "title" && selBlank ? (
                        <p className="sl-hint muted" id="sl-title-need">
                          Type the slide's title; until it has one, the deck calls it “{NEW_TITLE}”.
                        </p>
                      ) : f === "title" && value.trim() === "" ? (
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
                            <button type="button" className="primary small" onClick={() => session.keepMine(sel.slide_id, f)}>
                              Keep mine
                            </button>
                            <button type="button" className="secondary small" onClick={() => session.takeTheirs(sel.slide_id, f)}>
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
                        <input type="radio" name="sl-layout" value={l.id} checked={layoutOf(sel) === l.id} onChange={() => session.setLook(sel.slide_id, { layout: l.id })} />
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
                        <input type="radio" name="sl-theme" value={t.id} checked={themeOf(sel) === t.id} onChange={() => session.setLook(sel.slide_id, { theme: t.id })} />
                        <span className="sl-swatch" data-theme={t.id} aria-hidden="true" />
                        {t.name}
                      </label>
                    ))}
                  </div>
                  {base.some((s) => themeOf(s) !== themeOf(sel)) ? (
                    <button type="button" className="secondary small sl-all" onClick={() => session.themeAll(themeOf(sel))}>
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
      {presenting ? <Present slides={shown} start={Math.max(index, 0)} onClose={stopPresenting} /> : null}
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
              <button type="button" className="danger" onClick={() => (setConfirm(null), session.remove(confirm))} data-confirm-delete="">
                Delete slide
              </button>
            </div>
          </>
        ) : null}
      </Dialog>
      {/* The deck as printed (Print or save as PDF): one slide a page, the rest of
          the page left out by the print stylesheet. */}
      {createPortal(
        <div className="sl-print" aria-hidden="true">
          {base.map((s) => (
            <div key={s.slide_id} className="sl-print-page">
              <SlideView slide={s} />
            </div>
          ))}
        </div>,
        document.body,
      )}
    </div>
  );
}
