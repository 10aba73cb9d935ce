import { useState, type FormEvent } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, errorText, keys, queries, type Me } from "../../api";
import { CopyField, FormError, Reading, useMessages } from "./parts";

// Workspace: its name (an owner renames it) and the server's address as
// it sees it, with the MCP address agents connect to.
export function Workspace({ me }: { me: Me }) {
  const q = useQuery(queries.workspace());
  const qc = useQueryClient();
  const ws = q.data ?? null;
  const owner = me.user.role === "owner";
  const [name, setName] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const { say: setNotice, view: messages } = useMessages();
  const shown = name ?? ws?.name ?? "";

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    api
      .renameWorkspace(shown)
      .then((w) => {
        qc.setQueryData(keys.workspace, w);
        void qc.invalidateQueries({ queryKey: keys.me });
        setName(null);
        setNotice(`The workspace is now called “${w.name}”.`);
      })
      .catch((err: unknown) => setError(errorText(err)))
      .finally(() => setBusy(false));
  };

  return (
    <section className="settings-part" aria-labelledby="workspace-title">
      <h2 id="workspace-title">Workspace</h2>
      <Reading error={q.error} isError={q.isError} loaded={ws !== null} what="Loading the workspace…" retry={() => void q.refetch()} />
      {ws ? (
        <>
          {messages}
          {owner ? (
            <form className="settings-form" onSubmit={submit} aria-label="Rename the workspace">
              <div className="form-row">
                <label className="field grow">
                  <span>Name</span>
                  <input name="workspace-name" required maxLength={200} value={shown} onChange={(e) => setName(e.currentTarget.value)} />
                </label>
                <button type="submit" className="primary" disabled={busy || shown.trim() === "" || shown === ws.name}>
                  {busy ? "Saving…" : "Rename"}
                </button>
              </div>
              <FormError text={error} />
            </form>
          ) : (
            <p>
              The workspace is called <strong>{ws.name}</strong>. An owner renames it.
            </p>
          )}
          <div className="settings-form">
            <CopyField id="public-url" label="Public URL" value={ws.public_url} mono />
            <p className="muted">
              {ws.public_url_configured
                ? "The address people and agents reach this server at, as the server was configured."
                : "The server was started without a public URL, so this is the address this page was opened at; links and agents use the configured one when it is set."}
            </p>
            <CopyField id="mcp-url" label="MCP address" value={ws.mcp_url} mono />
            <p className="muted">Give this address to an MCP client (Claude Code, the MCP Inspector): it signs in here and asks for your consent.</p>
          </div>
        </>
      ) : null}
    </section>
  );
}
