import { useMemo } from "react";
import { useQuery } from "@tanstack/react-query";
import { errorText, queries } from "../../api";
import { ErrorBox, Loading, when } from "../../ui";
import { VersionDetail } from "./VersionDetail";
import { describeKind, goneTab, whoText, type HistoryProps } from "./types";
import "./history.css";

// The Note's history: every version, newest first, with who made it, when
// and what it changed; any version opened read-only (its tab strip and
// each tab's content); and a restore, which makes a new version.
export function HistoryView(p: HistoryProps) {
  // A new version, by anyone, appears at once: the live stream has the
  // history read again.
  const q = useQuery(queries.history(p.noteId));
  const hist = q.data;
  const load = () => void q.refetch();

  const labels = useMemo(() => {
    const m: Record<string, string> = {};
    for (const t of p.tabs) m[t.tab_id] = t.label || t.type;
    return m;
  }, [p.tabs]);

  if (q.isError && !hist) return <ErrorBox text={errorText(q.error)} onRetry={load} />;
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
            <VersionDetail key={chosen.version} noteId={p.noteId} entry={chosen} current={hist.version} me={p.me} onRestored={p.onRestored} onStale={load} />
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

