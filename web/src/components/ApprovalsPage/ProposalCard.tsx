import { useState, type ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { api, ApiError, errorText, queries, type Decision, type Proposal } from "../../api";
import { Dialog, ErrorBox, Loading, when } from "../../ui";
import { CodeBox, Compile, failing, Messages } from "./Code";

// ProposalCard is one proposal: who proposed it for which Room, every
// file in full (read when opened) and its compile result, and the
// decision.
export function byWhom(p: Proposal): string {
  const n = p.proposed_by?.name;
  if (n) return n;
  return p.proposed_by?.kind === "person" ? "a person" : "an agent";
}

export function ProposalCard({ p, onDecided, onGone }: { p: Proposal; onDecided: (d: Decision, how: "approve" | "decline") => void; onGone: (text: string) => void }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState<"" | "approve" | "decline">("");
  const [error, setError] = useState("");
  // Which decision asks first: Decline always, Approve when the code does
  // not compile.
  const [confirming, setConfirming] = useState<"" | "approve" | "decline">("");
  const id = p.proposal_id;
  const dom = "p-" + id.replace(/[^A-Za-z0-9_-]/g, "_");
  const repo = p.kind === "repository";

  // The files are read when the person opens them.
  const q = useQuery({ ...queries.proposal(id), enabled: open });
  const detail = q.data ?? null;
  const detailError = q.isError ? errorText(q.error) : "";
  const loadDetail = () => void q.refetch();

  const decide = (how: "approve" | "decline") => {
    setBusy(how);
    setError("");
    api
      .decide(id, how)
      .then((d) => onDecided(d, how))
      .catch((e: unknown) => {
        const msg = e instanceof Error ? e.message : String(e);
        if (e instanceof ApiError && e.status === 409) {
          onGone(/already/i.test(msg) ? `“${p.name}”: ${msg}` : `“${p.name}” was already decided by someone else: ${msg}`);
          return;
        }
        if (e instanceof ApiError && e.status === 404) {
          onGone(`“${p.name}” is no longer waiting for a decision: it was removed.`);
          return;
        }
        if (e instanceof ApiError && e.status === 403) {
          setError(`You cannot decide on this proposal: only the owner of ${p.room_name || "its Room"} or a workspace owner can. (${msg})`);
        } else {
          setError(msg);
        }
        setBusy("");
      })
      .finally(() => setConfirming(""));
  };

  const errors = p.compile?.errors ?? [];
  const broken = failing(p);
  // The dialog names the first errors; the card shows them all.
  const shown = broken.slice(0, 5);
  return (
    <article className="proposal-card" aria-labelledby={dom + "-name"} id={dom}>
      <header className="proposal-head">
        <div className="proposal-title">
          <h2 id={dom + "-name"}>{p.name}</h2>
          <span className="proposal-kind">{repo ? "Repository app" : "Snippet app"}</span>
        </div>
        <p className="proposal-meta">
          Proposed by <strong>{byWhom(p)}</strong> for the Room <strong>{p.room_name || p.room_id}</strong>
          {p.proposed_at ? (
            <>
              {" · "}
              <time dateTime={p.proposed_at} title={new Date(p.proposed_at).toLocaleString()}>
                {when(p.proposed_at)}
              </time>
            </>
          ) : null}
        </p>
      </header>

      {repo ? (
        <div className="proposal-repo">
          <p>
            Repository <strong>{p.repository?.name || p.repository?.repository_id || "—"}</strong>
            {p.repository?.version_id ? (
              <>
                , pinned version <code>{p.repository.version_id}</code>
              </>
            ) : null}
            . This path does not build or deploy a bundle.
          </p>
        </div>
      ) : null}

      <details
        className="proposal-files"
        onToggle={(e) => {
          setOpen((e.currentTarget as HTMLDetailsElement).open);
        }}
      >
        <summary>{repo ? "Review repository code before approving" : `Review all proposed files (${p.file_count})`}</summary>
        {open ? (
          <div className="proposal-files-body">
            {detailError ? <ErrorBox text={detailError} onRetry={loadDetail} /> : null}
            {!detailError && detail === null ? <Loading what="Loading the files…" /> : null}
            {detail !== null && detail.files.length === 0 ? <p className="muted">There are no files to show.</p> : null}
            {detail?.files.map((f) => (
              <CodeBox key={f.path} file={f} errors={errors.filter((m) => m.file === f.path)} />
            ))}
          </div>
        ) : null}
      </details>

      <Compile p={p} warnings={detail?.warnings ?? []} />

      <p className="proposal-warning">Approval makes this code available in the Room app launcher. Review the files before approving.</p>
      {error ? <ErrorBox text={error} /> : null}
      <div className="proposal-actions">
        <button
          type="button"
          className="primary"
          onClick={() => (broken.length ? setConfirming("approve") : decide("approve"))}
          disabled={busy !== ""}
          aria-describedby={dom + "-name"}
        >
          {busy === "approve" ? "Approving…" : "Approve and create"}
        </button>
        <button type="button" className="secondary" onClick={() => setConfirming("decline")} disabled={busy !== ""} aria-describedby={dom + "-name"}>
          {busy === "decline" ? "Declining…" : "Decline"}
        </button>
      </div>
      <Confirm
        id={dom + "-approve"}
        open={confirming === "approve"}
        title="Approve code that does not compile?"
        busy={busy}
        how="approve"
        label={busy === "approve" ? "Approving…" : "Approve anyway"}
        onCancel={() => setConfirming("")}
        onConfirm={() => decide("approve")}
      >
        <p>
          “{p.name}” does not compile: {broken.length} error{broken.length === 1 ? "" : "s"}. In the launcher of {p.room_name || "the Room"} its tab will show
          these errors instead of the app.
        </p>
        <Messages list={shown} />
        {broken.length > shown.length ? <p className="muted">…and {broken.length - shown.length} more, listed on the card.</p> : null}
      </Confirm>
      <Confirm
        id={dom + "-decline"}
        open={confirming === "decline"}
        title="Decline this proposal?"
        busy={busy}
        how="decline"
        label={busy === "decline" ? "Declining…" : "Decline"}
        onCancel={() => setConfirming("")}
        onConfirm={() => decide("decline")}
      >
        <p>
          “{p.name}” will not reach the launcher of {p.room_name || "the Room"}. {byWhom(p)} can propose it again.
        </p>
      </Confirm>
    </article>
  );
}


// Confirm is a decision that asks first: what it does, Cancel (focused)
// and the decision's own button.
function Confirm(props: {
  id: string;
  open: boolean;
  title: string;
  busy: "" | "approve" | "decline";
  how: "approve" | "decline";
  label: string;
  onCancel: () => void;
  onConfirm: () => void;
  children: ReactNode;
}) {
  return (
    <Dialog id={props.id} open={props.open} title={props.title} onClose={props.onCancel}>
      {props.children}
      <div className="dialog-actions">
        <button type="button" className="secondary" onClick={props.onCancel} disabled={props.busy !== ""} autoFocus>
          Cancel
        </button>
        <button type="button" className="danger" onClick={props.onConfirm} disabled={props.busy !== ""}>
          {props.label}
        </button>
      </div>
    </Dialog>
  );
}
