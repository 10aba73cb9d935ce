import { useEffect, useMemo, useState } from "react";
import { useInfiniteQuery } from "@tanstack/react-query";
import { errorText, queries } from "../../api";
import { ErrorBox, Loading, when } from "../../ui";
import { Changes } from "./DiffView";
import { VersionDetail } from "./VersionDetail";
import { clock, describeKind, goneTab, groupVersions, spanText, whatText, whoText, type HistoryProps, type VersionGroup } from "./types";
import "./history.css";

// The Note's history, newest first, a page at a time ("Show older"): a
// writer's versions made close together are one entry ("Ana edited
// Budget, 14 changes, 10:02–10:06") that opens on what they changed
// together and on each of its versions; any version opens read-only (what
// it changed, its tab strip and each tab's content) and can be restored,
// which makes a new version. Every version keeps its number, the one a
// restore or an agent's expected_version names.
export function HistoryView(p: HistoryProps) {
  // A new version, by anyone, appears at once: the live stream has the
  // pages loaded read again.
  const q = useInfiniteQuery(queries.history(p.noteId));
  const pages = q.data?.pages;
  const load = () => void q.refetch();
  const [open, setOpen] = useState<Record<number, boolean>>({});

  const labels = useMemo(() => {
    const m: Record<string, string> = {};
    for (const t of p.tabs) m[t.tab_id] = t.label || t.type;
    return m;
  }, [p.tabs]);
  const versions = useMemo(() => (pages ?? []).flatMap((pg) => pg.versions), [pages]);
  const groups = useMemo(() => groupVersions(versions), [versions]);
  const sel = Number(p.selected);
  const chosen = versions.find((v) => v.version === sel);
  const oldest = versions.length ? versions[versions.length - 1].version : 0;

  // A version asked for (in the URL) older than the pages loaded: load
  // older pages until it is there.
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = q;
  useEffect(() => {
    if (sel > 0 && !chosen && oldest > sel && hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [sel, chosen, oldest, hasNextPage, isFetchingNextPage, fetchNextPage]);

  if (q.isError && !pages) return <ErrorBox text={errorText(q.error)} onRetry={load} />;
  if (!pages) return <Loading what="Reading the history…" />;
  const current = pages[0].version;
  const tabsText = (ids: string[]) => ids.map((id) => labels[id] ?? goneTab(id)).join(", ");

  return (
    <div className="history">
      <div className="history-head">
        <h2 id="history-title">History</h2>
        <p className="muted">
          {current === 1 ? "One version" : `${current} versions`}, newest first; a writer's changes made close together are one entry. Open a version to
          see what it changed and the Note as it was; restoring it makes a new version, so nothing is lost.
        </p>
        <button type="button" className="secondary small" onClick={p.onBack} id="history-back">
          ← Back to the Note
        </button>
      </div>
      <div className="history-split">
        <div className="history-side">
          <ol className="history-list" aria-labelledby="history-title">
            {groups.map((g) => {
              const one = g.versions.length === 1;
              const isOpen = !one && (open[g.key] ?? (sel >= g.oldest.version && sel <= g.newest.version));
              return (
                <li key={g.key} className={"history-group" + (isOpen ? " is-open" : "")}>
                  <button
                    type="button"
                    className="history-entry"
                    data-version={one ? g.newest.version : undefined}
                    data-versions={one ? undefined : `${g.oldest.version}-${g.newest.version}`}
                    aria-current={one && g.newest.version === sel ? "true" : undefined}
                    aria-expanded={one ? undefined : isOpen}
                    aria-controls={one ? undefined : `history-group-${g.key}`}
                    onClick={() => (one ? p.onSelect(g.newest.version) : setOpen((o) => ({ ...o, [g.key]: !isOpen })))}
                  >
                    <span className="history-line">
                      <span className="history-version">{one ? `Version ${g.newest.version}` : `Versions ${g.oldest.version}–${g.newest.version}`}</span>
                      {one ? null : <span className="history-count">{g.versions.length} changes</span>}
                      {g.newest.version === current ? <span className="history-badge">current</span> : null}
                      <time dateTime={g.newest.at} title={new Date(g.newest.at).toLocaleString()} className="muted">
                        {one ? when(g.newest.at) : spanText(g)}
                      </time>
                    </span>
                    <span className="history-who" data-who-kind={g.newest.who.kind}>
                      {whoText(g.newest.who, p.me)}
                    </span>
                    <span className="history-what">
                      {whatText(g)}
                      {g.changed.length ? <span className="muted"> · {tabsText(g.changed)}</span> : null}
                    </span>
                  </button>
                  {isOpen ? <GroupBody g={g} noteId={p.noteId} sel={sel} labels={labels} tabsText={tabsText} onSelect={p.onSelect} /> : null}
                </li>
              );
            })}
          </ol>
          {q.hasNextPage ? (
            <button type="button" className="secondary small history-older" id="history-older" disabled={q.isFetchingNextPage} onClick={() => void q.fetchNextPage()}>
              {q.isFetchingNextPage ? "Reading older versions…" : `Show older (before version ${oldest})`}
            </button>
          ) : null}
        </div>
        <div className="history-detail">
          {chosen ? (
            <VersionDetail key={chosen.version} noteId={p.noteId} entry={chosen} current={current} me={p.me} labels={labels} onRestored={p.onRestored} onStale={load} />
          ) : sel > 0 && (q.hasNextPage || q.isFetchingNextPage) ? (
            <Loading what={`Finding version ${sel}…`} />
          ) : (
            <div className="empty">
              <p>Pick a version on the left to see what it changed and the Note as it was then, and to restore it.</p>
            </div>
          )}
        </div>
      </div>
    </div>
  );
}

// GroupBody is an open entry: what its versions changed together, then
// each of them, to open.
function GroupBody(p: {
  g: VersionGroup;
  noteId: string;
  sel: number;
  labels: Record<string, string>;
  tabsText: (ids: string[]) => string;
  onSelect: (v: number) => void;
}) {
  const { g } = p;
  return (
    <div className="history-group-body" id={`history-group-${g.key}`}>
      <div className="history-group-diff" aria-label={`What versions ${g.oldest.version} to ${g.newest.version} changed`}>
        <Changes noteId={p.noteId} version={g.newest.version} since={g.oldest.version - 1} labels={p.labels} />
      </div>
      <ol className="history-versions" aria-label={`Versions ${g.oldest.version} to ${g.newest.version}`}>
        {g.versions.map((v) => (
          <li key={v.version}>
            <button type="button" className="history-entry history-sub" data-version={v.version} aria-current={v.version === p.sel ? "true" : undefined} onClick={() => p.onSelect(v.version)}>
              <span className="history-line">
                <span className="history-version">Version {v.version}</span>
                <time dateTime={v.at} title={new Date(v.at).toLocaleString()} className="muted">
                  {clock(v.at)}
                </time>
              </span>
              <span className="history-what">
                {describeKind(v.kind)}
                {v.changed.length ? <span className="muted"> · {p.tabsText(v.changed)}</span> : null}
              </span>
            </button>
          </li>
        ))}
      </ol>
    </div>
  );
}
