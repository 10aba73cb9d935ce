import { useCallback, useEffect, useRef, useState, type DragEvent, type FormEvent, type KeyboardEvent } from "react";
import { api, ApiError, call, writers, type NoteView, type TabContent, type TabRef } from "./api";
import { Link, navigate } from "./router";
import { Dialog, ErrorBox, Loading, Notice } from "./ui";
import { MarkdownTab, type SaveState } from "./MarkdownTab";
import { SlidesTab } from "./SlidesTab";
import { SheetTab } from "./SheetTab";
import { SourcesTab } from "./SourcesTab";
import { FilesTab } from "./FilesTab";
import { HistoryView } from "./HistoryView";
import { LiveGone, LiveMarker, useLive } from "./live";
import type { RemoteChange, TabProps } from "./tabs";
import "./strip.css";

// The Note page: its header (title, version, saving state, History), its
// tab strip (exact tab IDs in the URL; add, rename, reorder, delete), and
// the open tab — or, with ?history in the URL, the Note's history.

const stateText: Record<SaveState, string> = {
  saved: "Saved",
  saving: "Saving…",
  unsaved: "Unsaved changes",
  conflict: "Conflict",
  error: "Not saved",
};

// MaxLabel is the server's rule for a label, in characters. maxLength
// counts UTF-16 units (an emoji is two), so the field holds twice as many
// and the server's refusal of more says why.
const MaxLabel = 100;

// Fixed tabs are in every Note: they cannot be deleted.
const fixedTypes = ["markdown", "files", "sources"];

function tabFromURL(): string {
  return new URLSearchParams(location.search).get("tab") ?? "";
}

// historyFromURL is null off the history view, else the version asked
// for ("" for none).
function historyFromURL(): string | null {
  return new URLSearchParams(location.search).get("history");
}

type TabCreated = { tab_id: string; version: number };
type Written = { version: number };

const tabsPath = (id: string) => "/api/notes/" + encodeURIComponent(id) + "/tabs";

export function NotePage({ id, me, meId }: { id: string; me: string; meId: string }) {
  const [note, setNote] = useState<NoteView | null>(null);
  const [error, setError] = useState("");
  const [tab, setTab] = useState(tabFromURL);
  const [hist, setHist] = useState(historyFromURL);
  const [version, setVersion] = useState(0);
  const [save, setSave] = useState<SaveState>("saved");
  const [notice, setNotice] = useState("");
  const [busy, setBusy] = useState(false);
  const [renaming, setRenaming] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<TabRef | null>(null);
  const [addOpen, setAddOpen] = useState(false);
  const [actionsOpen, setActionsOpen] = useState(false);
  const [dragId, setDragId] = useState<string | null>(null);
  const [dropAt, setDropAt] = useState<number | null>(null);
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});
  const versionRef = useRef(0);
  const dragRef = useRef<string | null>(null);

  const seen = useCallback((v: number) => {
    versionRef.current = Math.max(versionRef.current, v);
    setVersion((cur) => Math.max(cur, v));
  }, []);

  const load = useCallback(() => {
    setError("");
    const ctl = new AbortController();
    api
      .note(id, ctl.signal)
      .then((n) => {
        setNote(n);
        seen(n.version);
      })
      .catch((e: unknown) => {
        if (e instanceof DOMException && e.name === "AbortError") return;
        setError(e instanceof Error ? e.message : String(e));
      });
    return () => ctl.abort();
  }, [id, seen]);
  useEffect(load, [load]);

  // reloadStrip reads the tab strip again, quietly.
  const reloadStrip = useCallback(
    (signal?: AbortSignal) =>
      api
        .note(id, signal)
        .then((n) => {
          setNote(n);
          seen(n.version);
          return n;
        })
        .catch(() => null),
    [id, seen],
  );

  // The page follows the Note live: a write by anyone else reloads the tab
  // strip (quietly, keeping the open tab), and the open tab's view gets it
  // as remote.
  const live = useLive(id, meId);
  // The open tab's view gets every change but the ones that leave it
  // nothing to read again: its own deletion, and the Note's.
  const [tabRemote, setTabRemote] = useState<RemoteChange | null>(null);
  const [noteRemote, setNoteRemote] = useState<RemoteChange | null>(null);
  const deletingHere = useRef("");
  const openRef = useRef<TabRef | null>(null);
  useEffect(() => {
    const r = live.remote;
    if (!r) return;
    seen(r.version);
    if (r.kind === "note_deleted") return; // the page says so (LiveGone)
    setNoteRemote(r);
    const cur = openRef.current;
    if (r.kind === "tab_deleted" && cur && r.changed.includes(cur.tab_id)) {
      if (deletingHere.current !== cur.tab_id) {
        const who = r.mine ? "You deleted it on another page" : `${r.who.name || "Someone"} deleted it`;
        setNotice(`The tab “${cur.label || cur.type}” is gone: ${who}. The Note's History keeps it.`);
      }
    } else {
      setTabRemote(r);
    }
    const ctl = new AbortController();
    void reloadStrip(ctl.signal);
    return () => ctl.abort();
  }, [live.remote, reloadStrip, seen]);

  useEffect(() => {
    const onPop = () => {
      setTab(tabFromURL());
      setHist(historyFromURL());
    };
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  const tabs = note ? [...note.tabs].sort((a, b) => a.position - b.position) : [];
  const current = tabs.find((t) => t.tab_id === tab) ?? tabs[0];
  openRef.current = current ?? null;

  useEffect(() => {
    if (note) document.title = (hist !== null ? "History · " : "") + `${note.title} · Foundry`;
  }, [note, hist]);

  const notePath = "/notes/" + encodeURIComponent(id);
  const open = useCallback(
    (t: TabRef, focus = false) => {
      setTab(t.tab_id);
      navigate(`${notePath}?tab=${encodeURIComponent(t.tab_id)}`, true);
      if (focus) tabRefs.current[t.tab_id]?.focus();
    },
    [notePath],
  );

  const showHistory = (v: string) => {
    setHist(v);
    navigate(`${notePath}?history${v ? "=" + encodeURIComponent(v) : ""}`, hist !== null);
  };
  const closeHistory = () => {
    setHist(null);
    navigate(`${notePath}${current ? "?tab=" + encodeURIComponent(current.tab_id) : ""}`);
  };

  // Ctrl/Cmd+1…9 opens the nth tab, from anywhere on the page.
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey || hist !== null) return;
      const n = Number(e.key);
      if (!Number.isInteger(n) || n < 1 || n > 9 || n > tabs.length) return;
      e.preventDefault();
      open(tabs[n - 1], true);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [tabs, open, hist]);

  // write runs one change of the strip, based on the newest version the
  // page has seen. On 412 the strip is read again and the page says who
  // changed the Note; any other refusal is shown as the server says it.
  const write = async <T extends Written>(what: string, run: (v: number) => Promise<T>): Promise<T | null> => {
    setBusy(true);
    setNotice("");
    try {
      const res = await run(versionRef.current);
      if (res && typeof res.version === "number") seen(res.version);
      await reloadStrip();
      return res;
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) {
        const who = writers(e.changes, me);
        await reloadStrip();
        setNotice(`${who ? who.charAt(0).toUpperCase() + who.slice(1) : "Someone"} changed this Note meanwhile, so ${what} was not done. The tab strip is up to date now: try again.`);
      } else {
        setNotice(e instanceof Error ? e.message : String(e));
      }
      return null;
    } finally {
      setBusy(false);
    }
  };

  const addTab = async (type: "slides" | "sheet") => {
    setAddOpen(false);
    const label = type === "slides" ? "Slides" : "Sheet";
    const res = await write(`adding the ${label} tab`, (v) =>
      call<TabCreated>(tabsPath(id), { method: "POST", body: { type, label }, ifMatch: v }),
    );
    if (res) {
      setTab(res.tab_id);
      navigate(`${notePath}?tab=${encodeURIComponent(res.tab_id)}`, true);
      window.setTimeout(() => tabRefs.current[res.tab_id]?.focus(), 0);
    }
  };

  const move = async (t: TabRef, to: number) => {
    const from = tabs.findIndex((x) => x.tab_id === t.tab_id);
    if (to < 0 || to >= tabs.length || to === from) return;
    // Show the new order at once; the server's answer replaces it.
    setNote((n) => {
      if (!n) return n;
      const order = [...tabs];
      const [m] = order.splice(from, 1);
      order.splice(to, 0, m);
      return { ...n, tabs: order.map((x, i) => ({ ...x, position: i })) };
    });
    await write(`moving “${t.label || t.type}”`, (v) =>
      call<Written>(tabsPath(id) + "/" + encodeURIComponent(t.tab_id), { method: "PATCH", body: { position: to }, ifMatch: v }),
    );
    window.setTimeout(() => tabRefs.current[t.tab_id]?.focus(), 0);
  };

  const rename = async (t: TabRef, label: string): Promise<boolean> => {
    const res = await write(`renaming “${t.label || t.type}”`, (v) =>
      call<Written>(tabsPath(id) + "/" + encodeURIComponent(t.tab_id), { method: "PATCH", body: { label }, ifMatch: v }),
    );
    if (res) {
      setRenaming(null);
      window.setTimeout(() => tabRefs.current[t.tab_id]?.focus(), 0);
    }
    return res !== null;
  };

  const remove = async (t: TabRef) => {
    deletingHere.current = t.tab_id;
    const res = await write(`deleting “${t.label || t.type}”`, (v) =>
      call<void>(tabsPath(id) + "/" + encodeURIComponent(t.tab_id), { method: "DELETE", ifMatch: v }).then(() => ({ version: 0 })),
    );
    setDeleting(null);
    if (res && current && current.tab_id === t.tab_id) {
      const rest = tabs.filter((x) => x.tab_id !== t.tab_id);
      if (rest[0]) open(rest[0], true);
    }
  };

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

  const index = tabs.findIndex((t) => t.tab_id === current.tab_id);
  const onStripKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if ((e.target as HTMLElement).tagName === "INPUT") return;
    const i = index;
    if (e.altKey && e.shiftKey && (e.key === "ArrowLeft" || e.key === "ArrowRight")) {
      e.preventDefault();
      void move(current, e.key === "ArrowLeft" ? i - 1 : i + 1);
      return;
    }
    if (e.key === "F2") {
      e.preventDefault();
      setRenaming(current.tab_id);
      return;
    }
    if (e.key === "Delete" && !fixedTypes.includes(current.type)) {
      e.preventDefault();
      setDeleting(current);
      return;
    }
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    let j = -1;
    if (e.key === "ArrowRight") j = (i + 1) % tabs.length;
    else if (e.key === "ArrowLeft") j = (i - 1 + tabs.length) % tabs.length;
    else if (e.key === "Home") j = 0;
    else if (e.key === "End") j = tabs.length - 1;
    if (j < 0) return;
    e.preventDefault();
    open(tabs[j], true);
  };

  // Dragging a tab onto another puts it at that tab's place.
  const onDragStart = (e: DragEvent<HTMLButtonElement>, t: TabRef) => {
    dragRef.current = t.tab_id;
    setDragId(t.tab_id);
    if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
    e.dataTransfer?.setData("text/plain", t.tab_id);
  };
  const onDragOver = (e: DragEvent<HTMLButtonElement>, i: number) => {
    if (dragRef.current === null) return;
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = "move";
    if (dropAt !== i) setDropAt(i);
  };
  const onDrop = (e: DragEvent<HTMLButtonElement>, i: number) => {
    e.preventDefault();
    const t = tabs.find((x) => x.tab_id === dragRef.current);
    dragRef.current = null;
    setDragId(null);
    setDropAt(null);
    if (t) void move(t, i);
  };
  const onDragEnd = () => {
    dragRef.current = null;
    setDragId(null);
    setDropAt(null);
  };

  const viewing = hist !== null;
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
          {viewing ? null : (
            <span className={"save-state is-" + save} role="status" aria-live="polite" id="save-state">
              {stateText[save]}
            </span>
          )}
          <button
            type="button"
            className={"secondary small" + (viewing ? " is-on" : "")}
            id="history-button"
            aria-pressed={viewing}
            onClick={() => (viewing ? closeHistory() : showHistory(""))}
          >
            History
          </button>
        </div>
      </div>
      <LiveGone gone={live.gone} />
      <Notice text={notice} onDismiss={() => setNotice("")} role="alert" className="strip-notice" />
      {viewing ? (
        <HistoryView
          noteId={note.id}
          tabs={tabs}
          me={me}
          remote={noteRemote}
          selected={hist ?? ""}
          onSelect={(v) => showHistory(String(v))}
          onBack={closeHistory}
          onRestored={(v) => {
            seen(v);
            void reloadStrip().then((n) => {
              // The tab that was open, if the restored strip has it.
              const keep = n?.tabs.some((t) => t.tab_id === current.tab_id) ? current.tab_id : "";
              setHist(null);
              setTab(keep);
              navigate(notePath + (keep ? "?tab=" + encodeURIComponent(keep) : ""), true);
              setNotice(`Restored: the Note is at version ${v} now.`);
            });
          }}
        />
      ) : (
        <>
          <div className="strip-bar" aria-busy={busy}>
            <div className="tabstrip" role="tablist" aria-labelledby="note-title" onKeyDown={onStripKey}>
              {tabs.map((t, i) => {
                const selected = t.tab_id === current.tab_id;
                if (renaming === t.tab_id) {
                  return <RenameTab key={t.tab_id} tab={t} onCancel={() => setRenaming(null)} onSave={(label) => rename(t, label)} />;
                }
                const cls = "tab" + (dragId === t.tab_id ? " is-dragging" : "") + (dropAt === i && dragId !== t.tab_id ? " is-drop" : "");
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
                    title={(i < 9 ? `Ctrl+${i + 1} · ` : "") + "double-click to rename, drag to move"}
                    ref={(el) => {
                      tabRefs.current[t.tab_id] = el;
                    }}
                    onClick={() => open(t)}
                    onDoubleClick={() => setRenaming(t.tab_id)}
                    draggable={!busy}
                    onDragStart={(e) => onDragStart(e, t)}
                    onDragOver={(e) => onDragOver(e, i)}
                    onDrop={(e) => onDrop(e, i)}
                    onDragEnd={onDragEnd}
                    className={cls}
                  >
                    <span className="tab-type" aria-hidden="true">
                      {typeIcon(t.type)}
                    </span>
                    {t.label || t.type}
                  </button>
                );
              })}
            </div>
            <div className="strip-tools">
              <Menu
                id="tab-actions"
                label={`Actions for the tab “${current.label || current.type}”`}
                text="⋯"
                open={actionsOpen}
                setOpen={setActionsOpen}
                items={[
                  { key: "rename", text: "Rename… (F2)", run: () => setRenaming(current.tab_id) },
                  { key: "left", text: "Move left (Alt+Shift+←)", disabled: index === 0, run: () => void move(current, index - 1) },
                  { key: "right", text: "Move right (Alt+Shift+→)", disabled: index === tabs.length - 1, run: () => void move(current, index + 1) },
                  fixedTypes.includes(current.type)
                    ? { key: "delete", text: "Delete (every Note keeps this tab)", disabled: true, run: () => {} }
                    : { key: "delete", text: "Delete…", danger: true, run: () => setDeleting(current) },
                ]}
              />
              <Menu
                id="add-tab"
                label="Add a tab"
                text="+"
                open={addOpen}
                setOpen={setAddOpen}
                items={[
                  { key: "slides", text: "▭ Slides tab", run: () => void addTab("slides") },
                  { key: "sheet", text: "▦ Sheet tab", run: () => void addTab("sheet") },
                ]}
              />
            </div>
          </div>
          <div className="tabpanel" role="tabpanel" id="tabpanel" aria-labelledby={"tab-" + current.tab_id}>
            <TabView key={current.tab_id} noteId={note.id} tab={current} me={me} meId={meId} remote={tabRemote} onVersion={seen} onState={setSave} />
          </div>
        </>
      )}
      <Dialog id="delete-tab" open={deleting !== null} title="Delete this tab?" onClose={() => setDeleting(null)}>
        <p>
          The {deleting?.type} tab “{deleting?.label}” and everything in it will be deleted, for you and for every agent. The Note's History
          keeps it: restore an older version to bring it back.
        </p>
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => setDeleting(null)} disabled={busy} autoFocus>
            Cancel
          </button>
          <button type="button" className="danger" id="delete-tab-confirm" onClick={() => deleting && void remove(deleting)} disabled={busy}>
            {busy ? "Deleting…" : "Delete tab"}
          </button>
        </div>
      </Dialog>
    </section>
  );
}

// RenameTab is a tab's label being edited in place: Enter saves (trimmed),
// Escape cancels; an empty label is refused here, before the server would.
function RenameTab(props: { tab: TabRef; onCancel: () => void; onSave: (label: string) => Promise<boolean> }) {
  const [label, setLabel] = useState(props.tab.label);
  const [err, setErr] = useState("");
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLInputElement>(null);
  const done = useRef(false);
  useEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    if (done.current) return;
    const v = label.trim();
    if (v === "") {
      setErr("A tab needs a name: type one, or press Escape to keep “" + props.tab.label + "”.");
      ref.current?.focus();
      return;
    }
    if (v === props.tab.label) {
      done.current = true;
      props.onCancel();
      return;
    }
    setBusy(true);
    done.current = true;
    void props.onSave(v).then((ok) => {
      setBusy(false);
      if (!ok) {
        done.current = false;
        ref.current?.focus();
      }
    });
  };
  const errId = "rename-tab-error";
  return (
    <form className="tab-rename" onSubmit={submit}>
      <input
        ref={ref}
        id="rename-tab-input"
        value={label}
        maxLength={2 * MaxLabel}
        disabled={busy}
        aria-label={`New name for the tab “${props.tab.label}”`}
        aria-invalid={err !== ""}
        aria-describedby={err ? errId : undefined}
        onChange={(e) => {
          setLabel(e.target.value);
          setErr("");
        }}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            done.current = true;
            props.onCancel();
          }
        }}
        onBlur={() => {
          if (!busy && !err) submit();
        }}
      />
      {err ? (
        <span className="tab-rename-error" id={errId} role="alert">
          {err}
        </span>
      ) : null}
    </form>
  );
}

type MenuItem = { key: string; text: string; run: () => void; disabled?: boolean; danger?: boolean };

// Menu is a button that opens a short list of actions: arrows move, Enter
// picks, Escape closes and gives focus back to the button.
function Menu(props: { id: string; label: string; text: string; open: boolean; setOpen: (o: boolean) => void; items: MenuItem[] }) {
  const btn = useRef<HTMLButtonElement>(null);
  const list = useRef<HTMLDivElement>(null);
  const { open, setOpen } = props;
  useEffect(() => {
    if (!open) return;
    const first = list.current?.querySelector<HTMLButtonElement>("button:not(:disabled)");
    first?.focus();
    const onDown = (e: MouseEvent) => {
      const t = e.target as Node;
      if (!list.current?.contains(t) && !btn.current?.contains(t)) setOpen(false);
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, [open, setOpen]);
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const items = Array.from(list.current?.querySelectorAll<HTMLButtonElement>("button:not(:disabled)") ?? []);
    const i = items.indexOf(document.activeElement as HTMLButtonElement);
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
          {props.items.map((it) => (
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
          ))}
        </div>
      ) : null}
    </div>
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
    // A sheet tab is read without its cells (the grid reads those in
    // blocks as they come into view): a large sheet opens at once.
    const read =
      p.tab.type === "sheet"
        ? call<TabContent>(tabsPath(p.noteId) + "/" + encodeURIComponent(p.tab.tab_id) + "?cells=none", { signal: ctl.signal })
        : api.tab(p.noteId, p.tab.tab_id, ctl.signal);
    read
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
