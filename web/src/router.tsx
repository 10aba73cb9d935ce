import { useEffect, useState, type MouseEvent, type ReactNode } from "react";

// A small history router: the server serves index.html on every client
// route, and links change the path without a reload.

const listeners = new Set<() => void>();

// navigate goes to a path; notice is a sentence the next page shows once
// (what the page left says it did), kept in the history entry.
export function navigate(to: string, replace = false, notice = "") {
  const state = notice ? { notice } : null;
  if (replace) history.replaceState(state, "", to);
  else history.pushState(state, "", to);
  listeners.forEach((l) => l());
}

// takeNotice is the notice the page was navigated to with (see navigate),
// forgotten from the history entry so that back and reload do not show it
// again.
export function takeNotice(): string {
  const st: unknown = history.state;
  const n = st !== null && typeof st === "object" && "notice" in st && typeof st.notice === "string" ? st.notice : "";
  if (n) history.replaceState(null, "", location.href);
  return n;
}

// onNavigate calls fn after every change of the page's address: a
// navigate (a link, a replace) and the browser's back and forward. It
// answers how to stop.
export function onNavigate(fn: () => void): () => void {
  listeners.add(fn);
  window.addEventListener("popstate", fn);
  return () => {
    listeners.delete(fn);
    window.removeEventListener("popstate", fn);
  };
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    return onNavigate(() => setPath(location.pathname));
  }, []);
  return path;
}

type LinkProps = { to: string; className?: string; children: ReactNode; current?: boolean };

export function Link({ to, className, children, current }: LinkProps) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} className={className} onClick={onClick} aria-current={current ? "page" : undefined}>
      {children}
    </a>
  );
}
