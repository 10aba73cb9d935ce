import { useRef, useState } from "react";
import { Link } from "../../router";
import { ErrorBox, Loading } from "../../ui";
import { ProposalCard } from "./ProposalCard";
import { useProposals } from "./useProposals";

// Needs your approval: the apps agents proposed for the Rooms this person
// may decide on, each with every proposed file in full and its compile
// result, to approve into the Room's launcher or decline.

type Notice = { key: number; text: string; tone: "ok" | "info" };

export function ApprovalsPage({ pending }: { pending: number | null }) {
  const { list, error, load, remove } = useProposals(pending);
  const [notices, setNotices] = useState<Notice[]>([]);
  const seq = useRef(0);

  const say = (text: string, tone: Notice["tone"]) => {
    const key = ++seq.current;
    setNotices((n) => [...n.slice(-2), { key, text, tone }]);
  };

  return (
    <section className="page approvals" aria-labelledby="approvals-title">
      <div className="page-head">
        <h1 id="approvals-title">Needs your approval</h1>
      </div>
      <p className="lead">
        Apps that agents proposed for your Rooms. Nothing here runs anywhere until you approve it: review every file, then approve it into the
        Room's app launcher or decline it.
      </p>
      <div className="approval-notices" role="status" aria-live="polite">
        {notices.map((n) => (
          <div key={n.key} className={"notice approval-notice is-" + n.tone}>
            <p>{n.text}</p>
            <button type="button" className="ghost small" onClick={() => setNotices((all) => all.filter((x) => x.key !== n.key))} aria-label="Dismiss this message">
              Dismiss
            </button>
          </div>
        ))}
      </div>
      {error ? <ErrorBox text={error} onRetry={load} /> : null}
      {!error && list === null ? <Loading what="Loading proposals…" /> : null}
      {list !== null && list.length === 0 ? (
        <div className="empty" id="approvals-empty">
          <h2>Nothing needs your approval</h2>
          <p>
            When an agent proposes an app for a Room you own, it waits here for you to review its files and approve or decline it. Until then it
            reaches no launcher and runs nowhere.
          </p>
          <Link to="/connected" className="button secondary">
            See what is connected
          </Link>
        </div>
      ) : null}
      {list !== null && list.length > 0 ? (
        <ul className="proposals" aria-label="Pending proposals">
          {list.map((p) => (
            <li key={p.proposal_id}>
              <ProposalCard
                p={p}
                onDecided={(d, how) => {
                  remove(p.proposal_id);
                  say(
                    how === "approve"
                      ? `“${p.name}” is approved: it is in the app launcher of ${p.room_name || "its Room"}.`
                      : `“${p.name}” is declined: it will not reach ${p.room_name || "the Room"}'s launcher.`,
                    "ok",
                  );
                  void d;
                }}
                onGone={(text) => {
                  remove(p.proposal_id);
                  say(text, "info");
                }}
              />
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

