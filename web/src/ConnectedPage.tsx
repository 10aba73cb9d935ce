import { useCallback, useEffect, useState } from "react";
import { api, type Connection } from "./api";
import { Dialog, ErrorBox, Loading, when } from "./ui";

// ConnectedPage lists the agents' connections (OAuth clients) and the
// personal access tokens, with a way to revoke each.
export function ConnectedPage() {
  const [list, setList] = useState<Connection[] | null>(null);
  const [error, setError] = useState("");
  const [notice, setNotice] = useState("");
  const [revoking, setRevoking] = useState<Connection | null>(null);
  const [busy, setBusy] = useState(false);
  const load = useCallback(() => {
    setError("");
    api
      .connections()
      .then((r) => setList(r.connections ?? []))
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, []);
  useEffect(load, [load]);

  const revoke = () => {
    if (!revoking) return;
    const c = revoking;
    setBusy(true);
    api
      .revoke(c.id)
      .then(() => setNotice(`${c.name || "The connection"} is revoked: it can no longer reach Foundry.`))
      .catch((e: unknown) => setNotice(e instanceof Error ? e.message : String(e)))
      .finally(() => {
        setBusy(false);
        setRevoking(null);
        load();
      });
  };

  const active = (list ?? []).filter((c) => !c.revoked);
  return (
    <section className="page" aria-labelledby="connected-title">
      <div className="page-head">
        <h1 id="connected-title">Connected</h1>
      </div>
      <p className="lead">The agents connected to this workspace, and the personal access tokens that scripts use.</p>
      {notice ? (
        <div className="notice" role="status">
          <p>{notice}</p>
          <button type="button" className="ghost small" onClick={() => setNotice("")} aria-label="Dismiss this message">
            Dismiss
          </button>
        </div>
      ) : null}
      {error ? <ErrorBox text={error} onRetry={load} /> : null}
      {!error && list === null ? <Loading what="Loading connections…" /> : null}
      {list !== null && active.length === 0 ? (
        <div className="empty">
          <h2>Nothing is connected</h2>
          <p>
            Point an MCP client at this server's <code>/mcp</code> address: it signs in here and asks for your consent.
          </p>
        </div>
      ) : null}
      {active.length > 0 ? (
        <ul className="notes" aria-label="Connections">
          {active.map((c) => (
            <li key={c.id} className="note">
              <div className="note-main">
                <span className="note-title-static">{c.name || c.client_host || c.id}</span>
                <span className="note-meta">
                  {c.kind === "token" ? "Personal access token" : "Connected client"} · {c.user.email} · {c.scopes.join(", ")} ·{" "}
                  {c.last_used_at ? "used " + when(c.last_used_at) : "never used"}
                </span>
              </div>
              <div className="note-actions">
                <button type="button" className="ghost small danger-text" onClick={() => setRevoking(c)} aria-label={"Revoke " + (c.name || c.id)}>
                  Revoke
                </button>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
      <Dialog id="revoke" open={revoking !== null} title="Revoke this connection?" onClose={() => setRevoking(null)}>
        <p>“{revoking?.name}” will lose its access at once. It can connect again only with your consent.</p>
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => setRevoking(null)} disabled={busy} autoFocus>
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
