import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent, type RefObject } from "react";
import type { SearchHit } from "../../api";
import { navigate } from "../../router";
import { grouped, hitHref, MaxQuery, snippetPieces, typeWord, whereText } from "./query";
import { useSearch } from "./useSearch";
import "./search.css";

// Search is the header's search field and the search palette (⌘K on a
// Mac, Ctrl+K elsewhere, from anywhere on the page): a modal dialog with
// a combobox and its listbox of results, grouped by Note, each a tab, a
// place in it and a snippet with the matched words marked. Keyboard
// first: ↑/↓ move, Enter opens the Note at that place, Esc closes and the
// focus goes back where it was. Typing in the header field opens the
// palette with what was typed.

const mac = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
export const searchKeys = mac ? "⌘K" : "Ctrl+K";

// isSearchKey is the palette's shortcut: ⌘K on a Mac (where Ctrl+K is a
// text field's own), Ctrl+K elsewhere.
function isSearchKey(e: globalThis.KeyboardEvent): boolean {
  return e.key.toLowerCase() === "k" && !e.altKey && !e.shiftKey && (mac ? e.metaKey && !e.ctrlKey : e.ctrlKey && !e.metaKey);
}

// deepFocus is the element that has the focus, inside shadow roots too
// (the markdown editor's).
function deepFocus(): HTMLElement | null {
  let a = document.activeElement;
  while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
  return a instanceof HTMLElement ? a : null;
}

export function Search() {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState("");
  // What the header field holds while an input method composes in it.
  const [pre, setPre] = useState("");
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const opener = useRef<HTMLElement | null>(null);

  // show opens the palette: with what was typed in the header field
  // (the caret after it), or with the last query selected.
  const show = (typed?: string) => {
    const d = dialog.current;
    if (!d) return;
    if (!d.open) {
      opener.current = deepFocus();
      d.showModal();
    }
    setOpen(true);
    const el = input.current;
    if (typed !== undefined) setText(typed);
    if (el) {
      el.focus();
      if (typed !== undefined) requestAnimationFrame(() => el.setSelectionRange(typed.length, typed.length));
      else el.select();
    }
  };
  const showRef = useRef(show);
  useEffect(() => {
    showRef.current = show;
  });

  // close closes the palette; back: the focus goes back where it was.
  const close = (back: boolean) => {
    const d = dialog.current;
    if (d?.open) d.close();
    setOpen(false);
    const o = opener.current;
    opener.current = null;
    if (back && o?.isConnected) o.focus();
  };

  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (!isSearchKey(e)) return;
      // Another dialog, or a presentation, keeps the keys.
      if (document.fullscreenElement || document.querySelector("dialog[open]:not(.search-dialog), [aria-modal='true']:not(.search-dialog)")) return;
      e.preventDefault();
      e.stopPropagation();
      showRef.current();
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, []);

  const typedInHeader = (value: string) => {
    setPre("");
    show(value);
  };

  return (
    <div className="topsearch">
      <label className="topsearch-field">
        <span className="sr-only">Search Notes</span>
        <SearchIcon />
        <input
          type="text"
          role="searchbox"
          enterKeyHint="search"
          id="header-search"
          value={pre}
          placeholder={`Search  ${searchKeys}`}
          aria-haspopup="dialog"
          aria-keyshortcuts="Control+K Meta+K"
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => {
            if ((e.nativeEvent as InputEvent).isComposing) setPre(e.target.value);
            else if (e.target.value !== "") typedInHeader(e.target.value);
            else setPre("");
          }}
          onCompositionEnd={(e) => e.currentTarget.value !== "" && typedInHeader(e.currentTarget.value)}
          onKeyDown={(e) => {
            if ((e.key === "Enter" || e.key === "ArrowDown") && !e.nativeEvent.isComposing) {
              e.preventDefault();
              setPre("");
              show(pre || undefined);
            }
          }}
        />
      </label>
      <button type="button" className="ghost small topsearch-button" aria-haspopup="dialog" aria-keyshortcuts="Control+K Meta+K" aria-label="Search Notes" onClick={() => show()}>
        <SearchIcon />
      </button>
      <dialog
        ref={dialog}
        className="search-dialog"
        aria-labelledby="search-title"
        onCancel={(e) => {
          e.preventDefault();
          close(true);
        }}
        onClose={() => setOpen(false)}
        onClick={(e) => e.target === e.currentTarget && close(true)}
      >
        <Palette open={open} text={text} setText={setText} input={input} close={close} />
      </dialog>
    </div>
  );
}

type PaletteProps = {
  open: boolean;
  text: string;
  setText: (s: string) => void;
  input: RefObject<HTMLInputElement | null>;
  close: (back: boolean) => void;
};

function Palette({ open, text, setText, input, close }: PaletteProps) {
  const found = useSearch(open ? text : "");
  const { hits, searching, error } = found;
  const groups = useMemo(() => grouped(hits), [hits]);
  // The hits in the order they are shown (by Note), for ↑/↓.
  const order = useMemo(() => groups.flatMap((g) => g.hits), [groups]);
  const [act, setAct] = useState<{ at: number; of: SearchHit[] }>({ at: 0, of: [] });
  const active = act.of === order ? Math.min(act.at, order.length - 1) : 0;
  const moveTo = (at: number) => setAct({ at, of: order });

  useEffect(() => {
    if (order.length > 0) document.getElementById("search-hit-" + active)?.scrollIntoView({ block: "nearest" });
  }, [active, order]);

  const go = (h: SearchHit, e?: MouseEvent | KeyboardEvent) => {
    const href = hitHref(h);
    if (e && (e.ctrlKey || e.metaKey)) {
      window.open(href, "_blank", "noopener");
      return;
    }
    close(false);
    // The Note's page takes the focus (its view puts it on the place).
    document.getElementById("main")?.focus({ preventScroll: true });
    navigate(href, location.pathname + location.search === href);
  };

  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.nativeEvent.isComposing) return;
    const n = order.length;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (n > 0) moveTo(e.key === "ArrowDown" ? (active + 1) % n : (active - 1 + n) % n);
    } else if (e.key === "PageDown" || e.key === "PageUp") {
      if (n === 0) return;
      e.preventDefault();
      moveTo(e.key === "PageDown" ? Math.min(n - 1, active + 5) : Math.max(0, active - 5));
    } else if (e.key === "Enter") {
      e.preventDefault();
      if (n > 0 && !searching) go(order[active], e);
    } else if (e.key === "Escape") {
      e.preventDefault();
      close(true);
    }
  };

  const typed = text.trim();
  const notes = groups.length;
  const status =
    typed === ""
      ? "Type a word to search every Note in this workspace."
      : searching
        ? "Searching…"
        : error
          ? ""
          : hits.length === 0
            ? `No matches for “${typed}”.`
            : `${hits.length} ${hits.length === 1 ? "match" : "matches"} in ${notes} ${notes === 1 ? "Note" : "Notes"}${found.next ? ", more below" : ""}.`;
  const showList = order.length > 0 && typed !== "";
  let i = -1;

  return (
    <div className="search-box">
      <h2 id="search-title" className="sr-only">
        Search Notes
      </h2>
      <div className="search-head">
        <SearchIcon />
        <input
          ref={input}
          id="search-input"
          type="text"
          role="combobox"
          aria-label="Search Notes"
          aria-autocomplete="list"
          aria-expanded={showList}
          aria-controls={showList ? "search-results" : undefined}
          aria-activedescendant={showList && !searching ? "search-hit-" + active : undefined}
          aria-describedby="search-help"
          placeholder="Search Notes"
          autoComplete="off"
          spellCheck={false}
          enterKeyHint="go"
          maxLength={2 * MaxQuery /* UTF-16 units; the server's refusal of more says why */}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={onKey}
        />
        <button type="button" className="ghost small search-close" onClick={() => close(true)}>
          Esc<span className="sr-only"> closes the search</span>
        </button>
      </div>
      <p className="search-status" role="status" aria-live="polite">
        {status}
      </p>
      {error && typed !== "" && !searching ? (
        <p className="search-error" role="alert">
          {error}
        </p>
      ) : null}
      {showList ? (
        <div id="search-results" role="listbox" aria-label={`Results for ${typed}`} className={"search-results" + (searching ? " is-stale" : "")} aria-busy={searching || undefined}>
          {groups.map((g, gi) => (
            <div key={g.noteId} role="group" aria-labelledby={"search-note-" + gi} className="search-group">
              <div role="presentation" id={"search-note-" + gi} className="search-note">
                {g.title || "Untitled"}
              </div>
              {g.hits.map((h) => {
                i++;
                const at = i;
                const where = h.where.field === "title" ? "" : whereText(h);
                return (
                  <div
                    key={at}
                    role="option"
                    id={"search-hit-" + at}
                    aria-selected={at === active}
                    className="search-hit"
                    data-note-id={h.note_id}
                    data-tab-id={h.tab_id}
                    onMouseMove={() => at !== active && moveTo(at)}
                    onMouseDown={(e) => e.preventDefault()}
                    onClick={(e) => go(h, e)}
                  >
                    <span className="search-hit-head">
                      <span className="search-type" data-type={h.where.field === "title" ? "title" : h.tab_type}>
                        {typeWord(h)}
                      </span>
                      {h.where.field === "title" ? null : <span className="search-tab">{h.tab_label || typeWord(h)}</span>}
                      {where ? <span className="search-where">{where}</span> : null}
                    </span>
                    <span className="search-snippet">
                      {snippetPieces(h.snippet).map((p, k) => (p.mark ? <mark key={k}>{p.text}</mark> : <span key={k}>{p.text}</span>))}
                    </span>
                  </div>
                );
              })}
            </div>
          ))}
        </div>
      ) : null}
      {found.next && !searching ? (
        <button type="button" className="secondary small search-more" onClick={found.loadMore} disabled={found.loadingMore}>
          {found.loadingMore ? "Loading more…" : "More results"}
        </button>
      ) : null}
      <p id="search-help" className="search-help">
        <span>
          <kbd>↑</kbd> <kbd>↓</kbd> move
        </span>
        <span>
          <kbd>Enter</kbd> opens
        </span>
        <span>
          <kbd>Esc</kbd> closes
        </span>
        <span>“a phrase”, pre* for a prefix</span>
      </p>
    </div>
  );
}

function SearchIcon() {
  return (
    <svg className="search-icon" viewBox="0 0 20 20" width="16" height="16" aria-hidden="true" focusable="false">
      <circle cx="8.5" cy="8.5" r="5.5" fill="none" stroke="currentColor" strokeWidth="2" />
      <path d="M12.7 12.7 17 17" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
    </svg>
  );
}
