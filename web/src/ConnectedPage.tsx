import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { api, errorText, queries, type Connection } from "./api";
import { Link } from "./router";
import { Dialog, ErrorBox, Loading, when, Notice } from "./ui";
import "./connected.css";

// ConnectedPage lists the agents' connections (OAuth clients) and the
// personal access tokens: what each may do, which Notes and Rooms it
// reaches, when it was made and last used, with a way to revoke each. It
// leads to Needs your approval, where agents send people.

const scopeNames: Record<string, string> = { "osfoundry:read": "Read", "osfoundry:write": "Write" };

function scopeText(s: string): string {
  return scopeNames[s] ?? s;
}

// grantText is what a grant reaches, in words: "All Notes and Rooms", or
// the names.
export function grantText(e: Pick<Connection, "notes" | "rooms" | "names">): string {
  if (e.notes === null && e.rooms === null) return "All Notes and Rooms";
  const names = e.names ?? {};
  const list = (ids: string[], what: "Note" | "Room") => {
    if (ids.length === 0) return `no ${what}s`;
    const shown = ids.map((id) => (names[id] !== undefined ? `“${names[id] || "Untitled"}”` : `a deleted ${what}`));
    return `the ${what}${ids.length === 1 ? "" : "s"} ${shown.join(", ")}`;
  };
  const notes = e.notes === null ? "all Notes" : list(e.notes, "Note");
  const rooms = e.rooms === null ? "all Rooms" : list(e.rooms, "Room");
  const s = notes + "; " + rooms;
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function ConnectedPage({ pending }: { pending?: number | null }) {
  const q = useQuery(queries.connections());
  const list = q.data ?? null;
  const error = q.isError ? errorText(q.error) : "";
  const [notice, setNotice] = useState("");
  const [revoking, setRevoking] = useState<Connection | null>(null);
  const [busy, setBusy] = useState(false);
  const [revokeError, setRevokeError] = useState("");
  const load = () => void q.refetch();

  const revoke = () => {
    if (!revoking) return;
    const c = revoking;
    setBusy(true);
    setRevokeError("");
    api
      .revoke(c.id)
      .then(() => {
        setNotice(`${c.name || "The connection"} is revoked: its next call is refused, and it can connect again only with your consent.`);
        setRevoking(null);
        load();
      })
      .catch((e: unknown) => setRevokeError(e instanceof Error ? e.message : String(e)))
      .finally(() => setBusy(false));
  };

  const active = (list ?? []).filter((c) => !c.revoked);
  const clients = active.filter((c) => c.kind !== "token");
  const tokens = active.filter((c) => c.kind === "token");
  const revoked = (list ?? []).filter((c) => c.revoked);
  return (
    <section className="page connected" aria-labelledby="connected-title">
      <div className="page-head">
        <h1 id="connected-title">Connected</h1>
      </div>
      <p className="lead">The agents connected to this workspace, and the personal access tokens that scripts use.</p>

      <section className="approvals-link" aria-labelledby="approvals-link-title">
        <div>
          <h2 id="approvals-link-title">Needs your approval</h2>
          <p>
            {pending
              ? `${pending} app${pending === 1 ? "" : "s"} proposed by agents ${pending === 1 ? "waits" : "wait"} for your review.`
              : "Apps that agents propose for your Rooms wait here for your review before they reach a launcher."}
          </p>
        </div>
        <Link to="/approvals" className={pending ? "button primary" : "button secondary"}>
          {pending ? `Review ${pending} pending` : "Open Needs your approval"}
        </Link>
      </section>

      <Notice text={notice} onDismiss={() => setNotice("")} role="status" />
      {error ? <ErrorBox text={error} onRetry={load} /> : null}
      {!error && list === null ? <Loading what="Loading connections…" /> : null}
      {list !== null && active.length === 0 ? (
        <div className="empty">
          <h2>Nothing is connected</h2>
          <p>
            Point an MCP client at this server's <code>/mcp</code> address (Settings → Workspace shows it): it signs in here and asks for your consent. A
            script can use a personal access token.
          </p>
          <Link to="/settings/tokens" className="button secondary">
            Create a token
          </Link>
        </div>
      ) : null}
      {clients.length > 0 ? <Group title="Connected clients" id="clients" entries={clients} onRevoke={setRevoking} /> : null}
      {tokens.length > 0 ? <Group title="Personal access tokens" id="tokens" entries={tokens} onRevoke={setRevoking} /> : null}
      {revoked.length > 0 ? (
        <details className="revoked-list">
          <summary>Revoked ({revoked.length})</summary>
          <ul className="conn-list" aria-label="Revoked connections and tokens">
            {revoked.map((c) => (
              <li key={c.id} className="conn is-revoked">
                <div className="conn-main">
                  <span className="conn-name">{c.name || c.client_host || c.id}</span>
                  <span className="conn-meta">
                    {c.kind === "token" ? "Personal access token" : "Connected client"} · {c.user.email} · revoked {when(c.revoked_at ?? undefined)}
                  </span>
                </div>
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      <Dialog id="revoke" open={revoking !== null} title="Revoke this connection?" onClose={() => (busy ? undefined : (setRevoking(null), setRevokeError("")))}>
        <p>
          “{revoking?.name || revoking?.id}” will lose its access at once: its next call is refused. It can connect again only with your consent.
        </p>
        {revokeError ? <p className="field-error" role="alert">{revokeError}</p> : null}
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => (setRevoking(null), setRevokeError(""))} disabled={busy} autoFocus>
            Cancel
          </button>
          <button type="button" className="danger" onClick={revoke} disabled={busy}>
            {busy ? "Revoking…" : "Revoke"}
          </button>
        </div>
      </Dialog>
    </section>
  );
}

// Group is a list of entries, each with what it can do and reach, and
// Revoke (the Settings page lists the tokens with it too).
export function Group({ title, id, entries, onRevoke }: { title: string; id: string; entries: Connection[]; onRevoke: (e: Connection) => void }) {
  return (
    <section className="conn-group" aria-labelledby={id + "-title"}>
      <h2 id={id + "-title"}>
        {title} <span className="conn-count">{entries.length}</span>
      </h2>
      <ul className="conn-list" id={id + "-list"}>
        {entries.map((c) => {
          const name = c.name || c.client_host || c.id;
          return (
            <li key={c.id} className="conn" data-id={c.id}>
              <div className="conn-main">
                <span className="conn-name">
                  {name}
                  {c.client_host && c.client_host !== name ? <span className="conn-host"> · {c.client_host}</span> : null}
                </span>
                <span className="conn-kind">
                  {c.kind === "token" ? "Personal access token" : "Connected client"} of {c.user.email}
                </span>
                <dl className="conn-facts">
                  <div>
                    <dt>Can</dt>
                    <dd>
                      {!c.scopes?.length ? (
                        "nothing"
                      ) : (
                        <span className="conn-scopes">
                          {c.scopes.map((s) => (
                            <span key={s} className="scope" title={s}>
                              {scopeText(s)}
                            </span>
                          ))}
                        </span>
                      )}
                    </dd>
                  </div>
                  <div>
                    <dt>Reaches</dt>
                    <dd className="conn-grant">{grantText(c)}</dd>
                  </div>
                  <div>
                    <dt>Created</dt>
                    <dd>
                      <time dateTime={c.created_at} title={new Date(c.created_at).toLocaleString()}>
                        {when(c.created_at)}
                      </time>
                    </dd>
                  </div>
                  <div>
                    <dt>Last used</dt>
                    <dd className="conn-used">
                      {c.last_used_at ? (
                        <time dateTime={c.last_used_at} title={new Date(c.last_used_at).toLocaleString()}>
                          {when(c.last_used_at)}
                        </time>
                      ) : (
                        "never used"
                      )}
                    </dd>
                  </div>
                </dl>
              </div>
              <div className="conn-actions">
                <button type="button" className="secondary small danger-text" onClick={() => onRevoke(c)} aria-label={"Revoke " + name}>
                  Revoke
                </button>
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
