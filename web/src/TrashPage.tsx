import { useState } from "react";
import { useInfiniteQuery } from "@tanstack/react-query";
import { api, ApiError, errorText, keys, queries, queryClient, type TrashedNote } from "./api";
import { Link, navigate } from "./router";
import { ErrorBox, Loading, Notice, when } from "./ui";

// The trash: the Notes deleted in the last days the server keeps them
// (keep_days), each with who deleted it, when, and the day it is removed
// for good; Restore brings one back as it was, connected access included.

// day is a date a person reads ("12 Jan 2027").
const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });

export function TrashPage() {
  const q = useInfiniteQuery(queries.trash());
  const [notice, setNotice] = useState("");
  const [restored, setRestored] = useState<{ id: string; title: string } | null>(null);
  const [busy, setBusy] = useState("");
  const notes = q.data ? q.data.pages.flatMap((p) => p.notes) : [];
  const days = q.data?.pages[0]?.keep_days ?? 30;
  const next = q.data?.pages[q.data.pages.length - 1]?.next_cursor ?? "";

  const restore = (n: TrashedNote) => {
    setBusy(n.id);
    setNotice("");
    api
      .untrashNote(n)
      .then(() => {
        setRestored({ id: n.id, title: n.title });
        void queryClient.invalidateQueries({ queryKey: keys.allNotes });
        return q.refetch();
      })
      .catch((e: unknown) => {
        if (e instanceof ApiError && (e.status === 412 || e.status === 400 || e.status === 404)) void q.refetch();
        setNotice(errorText(e));
      })
      .finally(() => setBusy(""));
  };

  return (
    <section className="page" aria-labelledby="trash-title">
      <Link to="/" className="back">
        ← Notes
      </Link>
      <div className="page-head">
        <h1 id="trash-title">Trash</h1>
      </div>
      <p className="lead">Deleted Notes stay here for {days} days, out of every list and every agent's reach. Restore one to bring it back as it was.</p>
      <Notice text={notice} onDismiss={() => setNotice("")} role="alert" />
      <Notice
        text={restored ? `Restored “${restored.title}”.` : ""}
        onDismiss={() => setRestored(null)}
        action={restored ? { text: "Open it", run: () => navigate("/notes/" + encodeURIComponent(restored.id)) } : undefined}
      />
      {q.isPending ? <Loading what="Loading the trash…" /> : null}
      {q.isError ? <ErrorBox text={errorText(q.error)} onRetry={() => void q.refetch()} /> : null}
      {q.data && notes.length === 0 ? (
        <div className="empty">
          <h2>The trash is empty</h2>
          <p>A Note you delete comes here for {days} days before it is removed for good.</p>
          <Link to="/" className="button secondary">
            Go to Notes
          </Link>
        </div>
      ) : null}
      {notes.length > 0 ? (
        <ul className="notes trash" aria-label="Notes in the trash">
          {notes.map((n) => (
            <li className="note" key={n.id} aria-busy={busy === n.id || undefined}>
              <div className="note-main">
                <span className="note-title">{n.title || "Untitled"}</span>
                <span className="note-meta">
                  Deleted <time dateTime={n.deleted_at}>{when(n.deleted_at)}</time>
                  {n.deleted_by.name ? " by " + n.deleted_by.name : ""} · removed for good on <time dateTime={n.purge_at}>{day(n.purge_at)}</time>
                </span>
              </div>
              <div className="note-actions">
                <button type="button" className="secondary small" onClick={() => restore(n)} disabled={busy !== ""} aria-label={"Restore " + n.title}>
                  {busy === n.id ? "Restoring…" : "Restore"}
                </button>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
      {next ? (
        <button type="button" className="secondary more" onClick={() => void q.fetchNextPage()} disabled={q.isFetchingNextPage}>
          {q.isFetchingNextPage ? "Loading…" : "Show more"}
        </button>
      ) : null}
    </section>
  );
}
