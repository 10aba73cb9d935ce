import { useCallback, useEffect, useMemo, useState } from "react";
import MarkdownIt from "markdown-it";
import DOMPurify from "dompurify";
import { ApiError, call, writers, type TabContent, type TabRef } from "./api";
import { Dialog, ErrorBox, Loading, when } from "./ui";
import type { RemoteChange } from "./tabs";
import "./history.css";

// The Note's history: every version, newest first, with who made it, when
// and what it changed; any version opened read-only (its tab strip and
// each tab's content); and a restore, which makes a new version.

type Who = { kind: string; id: string; name: string };
type VersionEntry = { version: number; kind: string; who: Who; at: string; changed: string[]; bytes: number };
type History = { id: string; version: number; versions: VersionEntry[] };
type VersionView = { id: string; title: string; version: number; current_version: number; tabs: TabRef[] };

const md = new MarkdownIt({ html: false, linkify: true });

const notePath = (id: string) => "/api/notes/" + encodeURIComponent(id);

// kindText says what kind of change a version was.
const kindText: Record<string, string> = {
  note_created: "Created the Note",
  note_renamed: "Renamed the Note",
  access_changed: "Changed connected access",
  tab_created: "Added a tab",
  tab_renamed: "Renamed a tab",
  tab_moved: "Moved a tab",
  tab_deleted: "Deleted a tab",
  tab_edited: "Edited",
  text_saved: "Edited the text",
  text_edited: "Edited the text",
  source_added: "Added a source",
  source_deleted: "Deleted a source",
  sources: "Changed the sources",
  restored: "Restored an older version",
};

function describeKind(kind: string): string {
  if (kindText[kind]) return kindText[kind];
  const t = kind.replace(/_/g, " ").trim();
  return t ? t.charAt(0).toUpperCase() + t.slice(1) : "Changed";
}

// whoText names who made a version: the person (you, for the person signed
// in), or the connected client or token.
function whoText(w: Who, me: string): string {
  const name = w.name || (w.kind === "person" ? "A person" : "An agent");
  if (w.kind === "person") return name === me ? `${name} (you)` : name;
  if (w.kind === "client") return `${name} (connected client)`;
  if (w.kind === "token") return `${name} (access token)`;
  return name;
}

// goneTab names a tab no longer in the strip by its type (a tab ID starts
// with it: "slides-2-…").
function goneTab(id: string): string {
  const type = id.split("-")[0];
  const names: Record<string, string> = { slides: "a Slides tab", sheet: "a Sheet tab" };
  return (names[type] ?? "a tab") + " since deleted";
}

export type HistoryProps = {
  noteId: string;
  tabs: TabRef[]; // the strip now, to name changed tabs
  me: string;
  remote: RemoteChange | null;
  selected: string; // the version open ("" none)
  onSelect: (version: number) => void;
  onBack: () => void;
  onRestored: (version: number) => void;
};

export function HistoryView(p: HistoryProps) {
  const [hist, setHist] = useState<History | null>(null);
  const [error, setError] = useState("");
  const load = useCallback((signal?: AbortSignal) => {
    setError("");
    call<History>(notePath(p.noteId) + "/history", { signal })
      .then(setHist)
      .catch((e: unknown) => {
        if (e instanceof DOMException && e.name === "AbortError") return;
        setError(e instanceof Error ? e.message : String(e));
      });
  }, [p.noteId]);
  useEffect(() => {
    const ctl = new AbortController();
    load(ctl.signal);
    return () => ctl.abort();
  }, [load]);
  // A new version, by anyone, appears at once.
  useEffect(() => {
    if (!p.remote) return;
    const ctl = new AbortController();
    load(ctl.signal);
    return () => ctl.abort();
  }, [p.remote, load]);

  const labels = useMemo(() => {
    const m: Record<string, string> = {};
    for (const t of p.tabs) m[t.tab_id] = t.label || t.type;
    return m;
  }, [p.tabs]);

  if (error) return <ErrorBox text={error} onRetry={() => load()} />;
  if (!hist) return <Loading what="Reading the history…" />;
  const versions = [...hist.versions].sort((a, b) => b.version - a.version);
  const sel = Number(p.selected);
  const chosen = versions.find((v) => v.version === sel);

  return (
    <div className="history">
      <div className="history-head">
        <h2 id="history-title">History</h2>
        <p className="muted">
          {versions.length === 1 ? "One version" : `${versions.length} versions`}, newest first. Open one to see it as it was; restoring it makes a
          new version, so nothing is lost.
        </p>
        <button type="button" className="secondary small" onClick={p.onBack} id="history-back">
          ← Back to the Note
        </button>
      </div>
      <div className="history-split">
        <ol className="history-list" aria-labelledby="history-title">
          {versions.map((v) => {
            const changed = v.changed.map((id) => labels[id] ?? goneTab(id));
            return (
              <li key={v.version}>
                <button
                  type="button"
                  className="history-entry"
                  data-version={v.version}
                  aria-current={v.version === sel ? "true" : undefined}
                  onClick={() => p.onSelect(v.version)}
                >
                  <span className="history-line">
                    <span className="history-version">Version {v.version}</span>
                    {v.version === hist.version ? <span className="history-badge">current</span> : null}
                    <time dateTime={v.at} title={new Date(v.at).toLocaleString()} className="muted">
                      {when(v.at)}
                    </time>
                  </span>
                  <span className="history-who" data-who-kind={v.who.kind}>
                    {whoText(v.who, p.me)}
                  </span>
                  <span className="history-what">
                    {describeKind(v.kind)}
                    {changed.length ? <span className="muted"> · {changed.join(", ")}</span> : null}
                  </span>
                </button>
              </li>
            );
          })}
        </ol>
        <div className="history-detail">
          {chosen ? (
            <VersionDetail key={chosen.version} noteId={p.noteId} entry={chosen} current={hist.version} me={p.me} onRestored={p.onRestored} onStale={() => load()} />
          ) : (
            <div className="empty">
              <p>Pick a version on the left to see the Note as it was then, and to restore it.</p>
            </div>
          )}
        </div>
      </div>
    </div>
  );
}

function VersionDetail(p: { noteId: string; entry: VersionEntry; current: number; me: string; onRestored: (v: number) => void; onStale: () => void }) {
  const v = p.entry.version;
  const [view, setView] = useState<VersionView | null>(null);
  const [error, setError] = useState("");
  const [tab, setTab] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [restoreErr, setRestoreErr] = useState("");
  const load = useCallback(() => {
    setError("");
    const ctl = new AbortController();
    call<VersionView>(notePath(p.noteId) + "/versions/" + v, { signal: ctl.signal })
      .then((x) => {
        setView(x);
        setTab((t) => (x.tabs.some((r) => r.tab_id === t) ? t : (x.tabs[0]?.tab_id ?? "")));
      })
      .catch((e: unknown) => {
        if (e instanceof DOMException && e.name === "AbortError") return;
        setError(e instanceof Error ? e.message : String(e));
      });
    return () => ctl.abort();
  }, [p.noteId, v]);
  useEffect(load, [load]);

  const restore = () => {
    setBusy(true);
    setRestoreErr("");
    call<{ version: number }>(notePath(p.noteId) + "/restore", { method: "POST", body: { version: v }, ifMatch: p.current })
      .then((r) => {
        setConfirming(false);
        p.onRestored(r.version);
      })
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 412) {
          const who = writers(e.changes, p.me) || "someone";
          setRestoreErr(`The Note changed meanwhile (by ${who}): the history is up to date now; restore again if you still want version ${v}.`);
          p.onStale();
        } else {
          setRestoreErr(e instanceof Error ? e.message : String(e));
        }
      })
      .finally(() => setBusy(false));
  };

  if (error) return <ErrorBox text={error} onRetry={load} />;
  if (!view) return <Loading what={`Opening version ${v}…`} />;
  const isCurrent = v === p.current;
  return (
    <section className="version-view" aria-labelledby="version-title">
      <div className="version-head">
        <div>
          <h3 id="version-title">
            Version {v}
            {isCurrent ? " (current)" : ""}
          </h3>
          <p className="muted">
            {whoText(p.entry.who, p.me)} · {new Date(p.entry.at).toLocaleString()} · “{view.title}”
          </p>
        </div>
        <button type="button" className="primary" id="restore-button" disabled={isCurrent} onClick={() => setConfirming(true)}>
          Restore this version
        </button>
      </div>
      {restoreErr && !confirming ? <ErrorBox text={restoreErr} /> : null}
      <div className="tabstrip version-strip" role="tablist" aria-label={`Tabs at version ${v}`}>
        {view.tabs.map((t) => (
          <button
            key={t.tab_id}
            type="button"
            role="tab"
            id={"vtab-" + t.tab_id}
            aria-selected={t.tab_id === tab}
            aria-controls="version-panel"
            tabIndex={t.tab_id === tab ? 0 : -1}
            className="tab"
            onClick={() => setTab(t.tab_id)}
            onKeyDown={(e) => {
              const i = view.tabs.findIndex((x) => x.tab_id === t.tab_id);
              let j = -1;
              if (e.key === "ArrowRight") j = (i + 1) % view.tabs.length;
              else if (e.key === "ArrowLeft") j = (i - 1 + view.tabs.length) % view.tabs.length;
              if (j < 0) return;
              e.preventDefault();
              setTab(view.tabs[j].tab_id);
              document.getElementById("vtab-" + view.tabs[j].tab_id)?.focus();
            }}
          >
            {t.label || t.type}
          </button>
        ))}
      </div>
      <div className="version-panel" role="tabpanel" id="version-panel" aria-labelledby={tab ? "vtab-" + tab : undefined}>
        {tab ? <VersionTab key={tab} noteId={p.noteId} version={v} tab={tab} /> : <p className="muted">This version has no tabs.</p>}
      </div>
      <Dialog id="restore" open={confirming} title={`Restore version ${v}?`} onClose={() => setConfirming(false)}>
        <p>
          The Note becomes what it was at version {v} — its tabs and everything in them — as a new version {p.current + 1}. The versions in between stay
          in the history, so this can be undone by restoring again.
        </p>
        {restoreErr ? <p className="field-error">{restoreErr}</p> : null}
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => setConfirming(false)} disabled={busy} autoFocus>
            Cancel
          </button>
          <button type="button" className="primary" id="restore-confirm" onClick={restore} disabled={busy}>
            {busy ? "Restoring…" : "Restore"}
          </button>
        </div>
      </Dialog>
    </section>
  );
}

// VersionTab is one tab's content at a version, read-only.
function VersionTab(p: { noteId: string; version: number; tab: string }) {
  const [c, setC] = useState<TabContent | null>(null);
  const [error, setError] = useState("");
  const load = useCallback(() => {
    setError("");
    const ctl = new AbortController();
    call<TabContent>(notePath(p.noteId) + "/versions/" + p.version + "/tabs/" + encodeURIComponent(p.tab), { signal: ctl.signal })
      .then(setC)
      .catch((e: unknown) => {
        if (e instanceof DOMException && e.name === "AbortError") return;
        setError(e instanceof Error ? e.message : String(e));
      });
    return () => ctl.abort();
  }, [p.noteId, p.version, p.tab]);
  useEffect(load, [load]);
  const html = useMemo(() => (c?.type === "markdown" ? DOMPurify.sanitize(md.render(c.text ?? "")) : ""), [c]);
  if (error) return <ErrorBox text={error} onRetry={load} />;
  if (!c) return <Loading what="Opening the tab…" />;
  switch (c.type) {
    case "markdown":
      return (c.text ?? "").trim() === "" ? (
        <p className="muted">The text was empty at this version.</p>
      ) : (
        <div className="md-preview version-md" dangerouslySetInnerHTML={{ __html: html }} />
      );
    case "slides": {
      const slides = c.slides ?? [];
      if (slides.length === 0) return <p className="muted">No slides at this version.</p>;
      return (
        <ol className="plain-list version-list">
          {slides.map((s, i) => (
            <li key={s.slide_id}>
              <strong>
                {i + 1}. {s.title}
              </strong>
              {s.body ? <p className="version-pre">{s.body}</p> : null}
              {s.notes ? <p className="muted version-pre">Notes: {s.notes}</p> : null}
            </li>
          ))}
        </ol>
      );
    }
    case "sheet": {
      const sheets = c.sheets ?? [];
      if (sheets.length === 0) return <p className="muted">No sheets at this version.</p>;
      return (
        <ul className="plain-list version-list">
          {sheets.map((s) => {
            const rows = s.cells ?? [];
            const filled = rows.reduce((n, r) => n + (r ?? []).filter((x) => x !== null && x !== "").length, 0);
            return (
              <li key={s.sheet_id}>
                <strong>{s.name}</strong>
                <span className="muted">
                  {" "}
                  · {rows.length} {rows.length === 1 ? "row" : "rows"}, {filled} filled {filled === 1 ? "cell" : "cells"}
                </span>
                {rows.length ? <SheetPeek rows={rows} /> : null}
              </li>
            );
          })}
        </ul>
      );
    }
    case "sources": {
      const ss = c.sources ?? [];
      if (ss.length === 0) return <p className="muted">No sources at this version.</p>;
      return (
        <ul className="plain-list version-list">
          {ss.map((s) => (
            <li key={s.source_id}>
              <strong>{s.title}</strong> <span className="muted">{s.normalized_url}</span>
            </li>
          ))}
        </ul>
      );
    }
    case "files": {
      const fs = c.files ?? [];
      if (fs.length === 0) return <p className="muted">No files at this version.</p>;
      return (
        <ul className="plain-list version-list">
          {fs.map((f) => (
            <li key={f.file_id}>
              <strong>{f.name}</strong> <span className="muted">· {sizeText(f.size_bytes)}</span>
            </li>
          ))}
        </ul>
      );
    }
  }
  return <p className="muted">A {c.type} tab.</p>;
}

// SheetPeek shows the top-left corner of a sheet.
function SheetPeek({ rows }: { rows: unknown[][] }) {
  const r = rows.slice(0, 8);
  const cols = Math.min(8, Math.max(0, ...r.map((x) => (x ?? []).length)));
  if (cols === 0) return null;
  return (
    <div className="sheet-read version-sheet">
      <table>
        <tbody>
          {r.map((row, i) => (
            <tr key={i}>
              {Array.from({ length: cols }, (_, j) => (
                <td key={j}>{cellText((row ?? [])[j])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function sizeText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
