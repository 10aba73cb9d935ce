import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { Slide } from "../../api";
import { SlideView } from "./SlideView";

// Present shows the deck one slide at a time, full screen (the Fullscreen
// API on its own element; where the browser refuses, it covers the
// window instead), each slide drawn by SlideView as the editor's preview
// draws it. The keys: → ↓ Space PageDown Enter next, ← ↑ PageUp Backspace
// previous, Home and End, P the presenter view (the slide, the next one,
// the speaker notes, the time since the start), Esc leaves; leaving full
// screen leaves too. onClose is told the slide it ended on.

const next = new Set(["ArrowRight", "ArrowDown", " ", "PageDown", "Enter"]);
const prev = new Set(["ArrowLeft", "ArrowUp", "PageUp", "Backspace"]);

// elapsed is a duration as the presenter reads it: 4:07, 1:02:09.
export function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

// finish ends a presentation once, however many ways it is left at once
// (Esc both leaves full screen and is a key).
function finish(l: { i: number; onClose: (at: number) => void; closed: boolean }) {
  if (l.closed) return;
  l.closed = true;
  l.onClose(l.i);
}

export function Present({ slides, start, onClose }: { slides: Slide[]; start: number; onClose: (at: number) => void }) {
  const root = useRef<HTMLDivElement>(null);
  const [at, setAt] = useState(start);
  const [presenter, setPresenter] = useState(false);
  const [began] = useState(() => Date.now());
  const [now, setNow] = useState(began);
  const n = slides.length;
  const i = Math.max(0, Math.min(at, n - 1));
  // The slide shown and the latest onClose, for the handlers below.
  const last = useRef({ i, onClose, closed: false });
  useEffect(() => {
    last.current.i = i;
    last.current.onClose = onClose;
  });
  const close = () => finish(last.current);

  // Full screen once shown; leaving it (Esc, the browser's own control)
  // ends the presentation.
  useEffect(() => {
    const el = root.current;
    if (!el) return;
    el.focus();
    let full = false;
    const onChange = () => {
      if (document.fullscreenElement === el) full = true;
      else if (full) finish(last.current);
    };
    document.addEventListener("fullscreenchange", onChange);
    if (typeof el.requestFullscreen === "function") {
      el.requestFullscreen().catch(() => {
        // Refused (no permission, an iframe): the presentation covers the window.
      });
    }
    return () => {
      document.removeEventListener("fullscreenchange", onChange);
      if (document.fullscreenElement === el) document.exitFullscreen().catch(() => {});
    };
  }, []);

  // The presenter's clock.
  useEffect(() => {
    if (!presenter) return;
    const t = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(t);
  }, [presenter]);

  const go = (to: number) => setAt(Math.max(0, Math.min(to, n - 1)));
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    // Tab stays among the presentation's buttons: the page behind is not shown.
    if (e.key === "Tab") {
      const all = [...(root.current?.querySelectorAll<HTMLButtonElement>("button:not(:disabled)") ?? [])];
      const at = all.indexOf(e.target as HTMLButtonElement);
      const to = e.shiftKey ? (at <= 0 ? all.length - 1 : at - 1) : at < 0 || at === all.length - 1 ? 0 : at + 1;
      e.preventDefault();
      all[to]?.focus();
      return;
    }
    // A focused button keeps Enter and Space for itself.
    const onButton = e.target instanceof HTMLButtonElement && (e.key === "Enter" || e.key === " ");
    if (onButton) return;
    let done = true;
    if (next.has(e.key)) go(i + 1);
    else if (prev.has(e.key)) go(i - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(n - 1);
    else if (e.key === "p" || e.key === "P") setPresenter((v) => !v);
    else if (e.key === "Escape") close();
    else done = false;
    if (done) e.preventDefault();
  };

  const cur = slides[i];
  const after = slides[i + 1];
  const counter = n ? `${i + 1} / ${n}` : "0 / 0";
  const bar = (
    <div className="sl-pr-bar">
      <button type="button" className="sl-pr-btn" onClick={() => go(i - 1)} disabled={i <= 0} aria-label="Previous slide">
        <span aria-hidden="true">‹</span>
      </button>
      <span className="sl-pr-count" aria-live="polite" data-present-count="">
        {counter}
      </span>
      <button type="button" className="sl-pr-btn" onClick={() => go(i + 1)} disabled={i >= n - 1} aria-label="Next slide">
        <span aria-hidden="true">›</span>
      </button>
      <button type="button" className="sl-pr-btn" onClick={() => setPresenter((v) => !v)} aria-pressed={presenter} title="Presenter view (P)" aria-keyshortcuts="P">
        Presenter view
      </button>
      <button type="button" className="sl-pr-btn" onClick={close} title="Stop presenting (Esc)" aria-keyshortcuts="Escape">
        Exit
      </button>
    </div>
  );

  return (
    <div ref={root} className="sl-present" role="dialog" aria-modal="true" aria-label={`Presenting slide ${counter}`} tabIndex={-1} onKeyDown={onKey} data-presenter={presenter || undefined}>
      {presenter ? (
        <div className="sl-pv">
          <div className="sl-pv-head">
            <span className="sl-pv-time" aria-label="Time since the start">
              {elapsed(now - began)}
            </span>
            {bar}
          </div>
          <div className="sl-pv-current" aria-label="Current slide" role="group">
            {cur ? <SlideView slide={cur} /> : <p>No slides.</p>}
          </div>
          <div className="sl-pv-side">
            <section className="sl-pv-next" aria-labelledby="sl-pv-next-h">
              <h2 id="sl-pv-next-h">Next</h2>
              {after ? <SlideView slide={after} /> : <p className="sl-pv-end">End of the deck</p>}
            </section>
            <section className="sl-pv-notes" aria-labelledby="sl-pv-notes-h">
              <h2 id="sl-pv-notes-h">Speaker notes</h2>
              {cur?.notes.trim() ? <div className="sl-pv-text">{cur.notes}</div> : <p className="sl-pv-none">No speaker notes on this slide.</p>}
            </section>
          </div>
        </div>
      ) : (
        <>
          <div className="sl-stage" onClick={() => go(i + 1)}>
            {cur ? <SlideView slide={cur} /> : <p>No slides.</p>}
          </div>
          {bar}
        </>
      )}
    </div>
  );
}
