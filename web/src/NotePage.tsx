import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from "react";
import { api, type NoteView, type TabContent, type TabRef } from "./api";
import { Link, navigate } from "./router";
import { ErrorBox, Loading } from "./ui";
import { MarkdownTab, type SaveState } from "./MarkdownTab";
import { SlidesTab } from "./SlidesTab";
import { SheetTab } from "./SheetTab";
import { SourcesTab } from "./SourcesTab";
import { FilesTab } from "./FilesTab";
import { LiveGone, LiveMarker, useLive } from "./live";
import type { RemoteChange, TabProps } from "./tabs";

// The Note page: its header (title, version, saving state), its tab strip
// (exact tab IDs in the URL), and the open tab.

const stateText: Record<SaveState, string> = {
  saved: "Saved",
  saving: "Saving…",
  unsaved: "Unsaved changes",
  conflict: "Conflict",
  error: "Not saved",
};

function tabFromURL(): string {
  return new URLSearchParams(location.search).get("tab") ?? "";
}

export function NotePage({ id, me, meId }: { id: string; me: string; meId: string }) {
  const [note, setNote] = useState<NoteView | null>(null);
  const [error, setError] = useState("");
  const [tab, setTab] = useState(tabFromURL);
  const [version, setVersion] = useState(0);
  const [save, setSave] = useState<SaveState>("saved");
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});

  const load = useCallback(() => {
    setError("");
    const ctl = new AbortController();
    api
      .note(id, ctl.signal)
      .then((n) => {
        setNote(n);
        setVersion(n.version);
      })
      .catch((e: unknown) => {
        if (e instanceof DOMException && e.name === "AbortError") return;
        setError(e instanceof Error ? e.message : String(e));
      });
    return () => ctl.abort();
  }, [id]);
  useEffect(load, [load]);

  // The page follows the Note live: a write by anyone else reloads the tab
  // strip (quietly, keeping the open tab), and the open tab's view gets it
  // as remote.
  const live = useLive(id, meId);
  const seen = useCallback((v: number) => setVersion((cur) => Math.max(cur, v)), []);
  useEffect(() => {
    const r = live.remote;
    if (!r) return;
    seen(r.version);
    const ctl = new AbortController();
    api
      .note(id, ctl.signal)
      .then((n) => setNote(n))
      .catch(() => {});
    return () => ctl.abort();
  }, [live.remote, id, seen]);

  useEffect(() => {
    const onPop = () => setTab(tabFromURL());
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  const tabs = note ? [...note.tabs].sort((a, b) => a.position - b.position) : [];
  const current = tabs.find((t) => t.tab_id === tab) ?? tabs[0];

  useEffect(() => {
    if (note) document.title = `${note.title} · Foundry`;
  }, [note]);

  const open = useCallback(
    (t: TabRef, focus = false) => {
      setTab(t.tab_id);
      navigate(`/notes/${encodeURIComponent(id)}?tab=${encodeURIComponent(t.tab_id)}`, true);
      if (focus) tabRefs.current[t.tab_id]?.focus();
    },
    [id],
  );

  // Ctrl/Cmd+1…9 opens the nth tab, from anywhere on the page.
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return;
      const n = Number(e.key);
      if (!Number.isInteger(n) || n < 1 || n > 9 || n > tabs.length) return;
      e.preventDefault();
      open(tabs[n - 1], true);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [tabs, open]);

  if (error) {
    return (
      <section className="page">
        <Link to="/" className="back">
          ← Notes
        </Link>
        <ErrorBox text={error} onRetry={load} />
      </section>
    );
  }
  if (!note || !current) {
    return (
      <section className="page">
        <Loading what="Opening the Note…" />
      </section>
    );
  }

  const onStripKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const i = tabs.findIndex((t) => t.tab_id === current.tab_id);
    let j = -1;
    if (e.key === "ArrowRight") j = (i + 1) % tabs.length;
    else if (e.key === "ArrowLeft") j = (i - 1 + tabs.length) % tabs.length;
    else if (e.key === "Home") j = 0;
    else if (e.key === "End") j = tabs.length - 1;
    if (j < 0) return;
    e.preventDefault();
    open(tabs[j], true);
  };

  return (
    <section className="page wide note-page">
      <div className="note-head">
        <Link to="/" className="back">
          ← Notes
        </Link>
        <h1 id="note-title">{note.title}</h1>
        <div className="note-status">
          <LiveMarker writer={live.writer} />
          <span className="version">Version {version}</span>
          <span className={"save-state is-" + save} role="status" aria-live="polite" id="save-state">
            {stateText[save]}
          </span>
        </div>
      </div>
      <LiveGone gone={live.gone} />
      <div className="tabstrip" role="tablist" aria-labelledby="note-title" onKeyDown={onStripKey}>
        {tabs.map((t, i) => {
          const selected = t.tab_id === current.tab_id;
          return (
            <button
              key={t.tab_id}
              type="button"
              role="tab"
              id={"tab-" + t.tab_id}
              data-tab-id={t.tab_id}
              aria-selected={selected}
              aria-controls="tabpanel"
              tabIndex={selected ? 0 : -1}
              title={i < 9 ? `Ctrl+${i + 1}` : undefined}
              ref={(el) => {
                tabRefs.current[t.tab_id] = el;
              }}
              onClick={() => open(t)}
              className="tab"
            >
              <span className="tab-type" aria-hidden="true">
                {typeIcon(t.type)}
              </span>
              {t.label || t.type}
            </button>
          );
        })}
      </div>
      <div className="tabpanel" role="tabpanel" id="tabpanel" aria-labelledby={"tab-" + current.tab_id}>
        <TabView key={current.tab_id} noteId={note.id} tab={current} me={me} meId={meId} remote={live.remote} onVersion={seen} onState={setSave} />
      </div>
    </section>
  );
}

function typeIcon(type: string): string {
  switch (type) {
    case "markdown":
      return "¶";
    case "slides":
      return "▭";
    case "sheet":
      return "▦";
    case "sources":
      return "↗";
    case "files":
      return "▤";
  }
  return "•";
}

type TabViewProps = { noteId: string; tab: TabRef; me: string; meId: string; remote: RemoteChange | null; onVersion: (v: number) => void; onState: (s: SaveState) => void };

function TabView(p: TabViewProps) {
  const [content, setContent] = useState<TabContent | null>(null);
  const [error, setError] = useState("");
  const load = useCallback(() => {
    setError("");
    setContent(null);
    const ctl = new AbortController();
    api
      .tab(p.noteId, p.tab.tab_id, ctl.signal)
      .then((c) => {
        setContent(c);
        p.onVersion(c.version);
      })
      .catch((e: unknown) => {
        if (e instanceof DOMException && e.name === "AbortError") return;
        setError(e instanceof Error ? e.message : String(e));
      });
    return () => ctl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [p.noteId, p.tab.tab_id]);
  useEffect(load, [load]);
  useEffect(() => {
    p.onState("saved");
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [p.tab.tab_id]);

  if (error) return <ErrorBox text={error} onRetry={load} />;
  if (!content) return <Loading what={`Opening ${p.tab.label || p.tab.type}…`} />;
  const tp: TabProps = { noteId: p.noteId, content, me: p.me, meId: p.meId, remote: p.remote, onVersion: p.onVersion, onState: p.onState };
  switch (content.type) {
    case "markdown":
      return (
        <MarkdownTab
          noteId={p.noteId}
          tabId={content.tab_id}
          label={content.label || "Note"}
          text={content.text ?? ""}
          version={content.version}
          me={p.me}
          remote={p.remote}
          onVersion={p.onVersion}
          onState={p.onState}
        />
      );
    case "slides":
      return <SlidesTab {...tp} />;
    case "sheet":
      return <SheetTab {...tp} />;
    case "sources":
      return <SourcesTab {...tp} />;
    case "files":
      return <FilesTab {...tp} />;
  }
  return <p className="muted">This tab's type ({content.type}) is not shown here yet.</p>;
}
