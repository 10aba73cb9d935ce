import { useEffect, useRef, type KeyboardEvent } from "react";
import type { MenuItem } from "./types";

// The items the arrows move between: buttons that are not disabled, and
// links.
const itemSelector = "button:not(:disabled), a[role=menuitem]";

// Menu is a button that opens a short list of actions: arrows move, Enter
// picks, Escape closes and gives focus back to the button.
export function Menu(props: { id: string; label: string; text: string; open: boolean; setOpen: (o: boolean) => void; items: MenuItem[] }) {
  const btn = useRef<HTMLButtonElement>(null);
  const list = useRef<HTMLDivElement>(null);
  const { open, setOpen } = props;
  useEffect(() => {
    if (!open) return;
    const first = list.current?.querySelector<HTMLElement>(itemSelector);
    first?.focus();
    const onDown = (e: MouseEvent) => {
      const t = e.target as Node;
      if (!list.current?.contains(t) && !btn.current?.contains(t)) setOpen(false);
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, [open, setOpen]);
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const items = Array.from(list.current?.querySelectorAll<HTMLElement>(itemSelector) ?? []);
    const i = items.indexOf(document.activeElement as HTMLElement);
    if (e.key === "Escape" || e.key === "Tab") {
      if (e.key === "Escape") e.preventDefault();
      setOpen(false);
      btn.current?.focus();
    } else if (e.key === "ArrowDown") {
      e.preventDefault();
      items[(i + 1) % items.length]?.focus();
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      items[(i - 1 + items.length) % items.length]?.focus();
    }
  };
  return (
    <div className="menu-wrap">
      <button
        ref={btn}
        type="button"
        className="secondary small strip-button"
        id={props.id + "-button"}
        aria-label={props.label}
        title={props.label}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? props.id + "-menu" : undefined}
        onClick={() => setOpen(!open)}
      >
        <span aria-hidden="true">{props.text}</span>
      </button>
      {open ? (
        <div className="menu" role="menu" id={props.id + "-menu"} aria-label={props.label} ref={list} onKeyDown={onKey}>
          {props.items.map((it) =>
            it.href ? (
              <a
                key={it.key}
                role="menuitem"
                data-item={it.key}
                className="menu-item"
                href={it.href}
                download
                onClick={() => {
                  setOpen(false);
                  btn.current?.focus();
                  it.run();
                }}
              >
                {it.text}
              </a>
            ) : (
            <button
              key={it.key}
              type="button"
              role="menuitem"
              data-item={it.key}
              className={"menu-item" + (it.danger ? " danger-text" : "")}
              disabled={it.disabled}
              onClick={() => {
                setOpen(false);
                btn.current?.focus();
                it.run();
              }}
            >
              {it.text}
            </button>
            ),
          )}
        </div>
      ) : null}
    </div>
  );
}
