import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { api, errorText, queries, type VersionEntry } from "../../api";
import { useSave } from "../../save";
import { Dialog, ErrorBox, Loading } from "../../ui";
import { Changes } from "./DiffView";
import { VersionTab } from "./VersionTab";
import { whoText } from "./types";

// VersionDetail is one version, read-only: what it changed, its tab strip
// and each tab's content, and a restore, which makes a new version.
export function VersionDetail(p: {
  noteId: string;
  entry: VersionEntry;
  current: number;
  me: string;
  labels: Record<string, string>;
  onRestored: (v: number) => void;
  onStale: () => void;
}) {
  const v = p.entry.version;
  const q = useQuery(queries.version(p.noteId, v));
  const view = q.data;
  const [picked, setTab] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [restoreErr, setRestoreErr] = useState("");
  const { saver, busy } = useSave({ version: p.current });

  // A restore is based on the version the history says is current.
  const restore = async () => {
    setRestoreErr("");
    const out = await saver.run({ version: () => p.current, send: (pre) => api.restore(p.noteId, v, pre) });
    if (out.ok) {
      setConfirming(false);
      p.onRestored(out.value.version);
    } else if ("conflict" in out) {
      setRestoreErr(`The Note changed meanwhile (by ${out.conflict.who(p.me) || "someone"}): the history is up to date now; restore again if you still want version ${v}.`);
      p.onStale();
    } else {
      setRestoreErr(errorText(out.error));
    }
  };

  if (q.isError) return <ErrorBox text={errorText(q.error)} onRetry={() => void q.refetch()} />;
  if (!view) return <Loading what={`Opening version ${v}…`} />;
  // The tab picked, or the first when this version has no such tab.
  const tab = view.tabs.some((r) => r.tab_id === picked) ? picked : (view.tabs[0]?.tab_id ?? "");
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
      <h4 className="version-section">{v === 1 ? "What the Note was made with" : `What version ${v} changed`}</h4>
      <div className="version-changes">
        <Changes noteId={p.noteId} version={v} since={0} labels={p.labels} />
      </div>
      <h4 className="version-section">The Note as it was</h4>
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
          <button type="button" className="secondary" onClick={() => setConfirming(false)} disabled={busy > 0} autoFocus>
            Cancel
          </button>
          <button type="button" className="primary" id="restore-confirm" onClick={() => void restore()} disabled={busy > 0}>
            {busy ? "Restoring…" : "Restore"}
          </button>
        </div>
      </Dialog>
    </section>
  );
}

