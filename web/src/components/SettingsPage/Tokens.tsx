import { useState, type FormEvent } from "react";
import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, errorText, keys, queries, type Connection, type CreatedToken, type Me } from "../../api";
import { Group } from "../../ConnectedPage";
import { Loading, when } from "../../ui";
import { Confirm, FormError, Reading, ShownOnce, useMessages } from "./parts";

// Tokens: the personal access tokens a script or an MCP client that
// cannot sign in uses. Anyone creates their own (the secret is shown once)
// and revokes it; an owner sees and revokes every token of the workspace.

const scopes = [
  { scope: "osfoundry:read", label: "Read", about: "read Notes and Rooms" },
  { scope: "osfoundry:write", label: "Write", about: "edit Notes and propose apps" },
];

export function Tokens({ me }: { me: Me }) {
  const q = useQuery(queries.tokens());
  const qc = useQueryClient();
  const list = q.data ?? null;
  const owner = me.user.role === "owner";
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [revoking, setRevoking] = useState<Connection | null>(null);
  const [busy, setBusy] = useState(false);
  const { say: setNotice, fail: setFailure, view: messages } = useMessages();
  const reload = () => {
    void qc.invalidateQueries({ queryKey: keys.tokens });
    void qc.invalidateQueries({ queryKey: keys.connections });
  };
  const mine = (list ?? []).filter((t) => t.user.id === me.user.id).length;
  const active = (list ?? []).filter((t) => !t.revoked).reverse();
  const revoked = (list ?? []).filter((t) => t.revoked).reverse();

  const revoke = () => {
    if (!revoking) return;
    const t = revoking;
    setBusy(true);
    setFailure("");
    api
      .revokeToken(t.id)
      .then(() => {
        setNotice(`“${t.name}” is revoked: its next call is refused.`);
        setRevoking(null);
        reload();
      })
      .catch((e: unknown) => {
        setRevoking(null);
        setFailure(errorText(e));
        reload();
      })
      .finally(() => setBusy(false));
  };

  return (
    <section className="settings-part" aria-labelledby="tokens-title">
      <h2 id="tokens-title">Personal access tokens</h2>
      <p className="muted">
        A token lets a script, or an MCP client that cannot sign in here, act as you: with the scopes and the Notes and Rooms you choose.
        {owner ? " As an owner you see every token of the workspace." : " You see your own tokens."}
      </p>
      <TokenForm
        placeholder={`Personal token ${mine + 1}`}
        onCreated={(c) => {
          setCreated(c);
          setNotice("");
          reload();
        }}
      />
      {created ? (
        <ShownOnce id="token-secret" title={`Token “${created.token.name}” created`} label="Token" value={created.secret} onDone={() => setCreated(null)}>
          <strong>Copy it now: you will not see it again.</strong> Foundry keeps only a hash of it.
        </ShownOnce>
      ) : null}
      {messages}
      <Reading error={q.error} isError={q.isError} loaded={list !== null} what="Loading tokens…" retry={() => void q.refetch()} />
      {list !== null && active.length === 0 ? <p className="settings-empty">No token is active. Create one above when a script or a client needs one.</p> : null}
      {active.length > 0 ? <Group title="Active tokens" id="settings-tokens" entries={active} onRevoke={setRevoking} /> : null}
      {revoked.length > 0 ? (
        <details className="revoked-list">
          <summary>Revoked ({revoked.length})</summary>
          <ul className="conn-list" aria-label="Revoked tokens">
            {revoked.map((t) => (
              <li key={t.id} className="conn is-revoked">
                <div className="conn-main">
                  <span className="conn-name">{t.name}</span>
                  <span className="conn-meta">
                    {t.user.email} · revoked {when(t.revoked_at ?? undefined)}
                  </span>
                </div>
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      <Confirm id="revoke-token" open={revoking !== null} title="Revoke this token?" act="Revoke" acting="Revoking…" busy={busy} onCancel={() => setRevoking(null)} onConfirm={revoke}>
        “{revoking?.name}” stops working at once: its next call is refused. This cannot be undone; create a new token if it is needed again.
      </Confirm>
    </section>
  );
}

function TokenForm({ placeholder, onCreated }: { placeholder: string; onCreated: (c: CreatedToken) => void }) {
  const [name, setName] = useState("");
  const [chosen, setChosen] = useState<string[]>(["osfoundry:read"]);
  const [allNotes, setAllNotes] = useState(true);
  const [allRooms, setAllRooms] = useState(true);
  const [notes, setNotes] = useState<string[]>([]);
  const [rooms, setRooms] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const noteList = useInfiniteQuery({ ...queries.notes(""), enabled: !allNotes });
  const roomList = useQuery({ ...queries.rooms(), enabled: !allRooms });
  const approved = (noteList.data?.pages ?? []).flatMap((p) => p.notes ?? []).filter((n) => n.approved);
  const toggle = (list: string[], id: string, on: boolean) => (on ? [...list, id] : list.filter((x) => x !== id));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    api
      .createToken({ name, scopes: chosen, ...(allNotes ? {} : { notes }), ...(allRooms ? {} : { rooms }) })
      .then((c) => {
        setName("");
        onCreated(c);
      })
      .catch((err: unknown) => setError(errorText(err)))
      .finally(() => setBusy(false));
  };
  return (
    <form className="settings-form token-form" onSubmit={submit} aria-labelledby="new-token-title">
      <h3 id="new-token-title">Create a token</h3>
      <label className="field">
        <span>Name</span>
        <input name="name" autoComplete="off" placeholder={placeholder} value={name} maxLength={100} onChange={(e) => setName(e.currentTarget.value)} />
      </label>
      <fieldset className="choices">
        <legend>Scopes</legend>
        {scopes.map((s) => (
          <label key={s.scope} className="choice">
            <input type="checkbox" name="scope" value={s.scope} checked={chosen.includes(s.scope)} onChange={(e) => setChosen(toggle(chosen, s.scope, e.currentTarget.checked))} />
            <span>
              {s.label} <span className="muted">({s.scope}: {s.about})</span>
            </span>
          </label>
        ))}
      </fieldset>
      <fieldset className="choices">
        <legend>Notes</legend>
        <label className="choice">
          <input type="radio" name="notes-grant" checked={allNotes} onChange={() => setAllNotes(true)} />
          <span>All approved Notes, now and later</span>
        </label>
        <label className="choice">
          <input type="radio" name="notes-grant" checked={!allNotes} onChange={() => setAllNotes(false)} />
          <span>Only the Notes I choose</span>
        </label>
        {!allNotes ? (
          <div className="chosen" aria-label="Notes the token reaches">
            {noteList.isPending ? <Loading what="Loading Notes…" /> : null}
            {!noteList.isPending && approved.length === 0 ? <p className="muted">No Note has connected access switched on, so the token will reach no Note.</p> : null}
            {approved.map((n) => (
              <label key={n.id} className="choice">
                <input type="checkbox" checked={notes.includes(n.id)} onChange={(e) => setNotes(toggle(notes, n.id, e.currentTarget.checked))} />
                <span>{n.title || "Untitled"}</span>
              </label>
            ))}
          </div>
        ) : null}
      </fieldset>
      <fieldset className="choices">
        <legend>Rooms</legend>
        <label className="choice">
          <input type="radio" name="rooms-grant" checked={allRooms} onChange={() => setAllRooms(true)} />
          <span>All Rooms, now and later</span>
        </label>
        <label className="choice">
          <input type="radio" name="rooms-grant" checked={!allRooms} onChange={() => setAllRooms(false)} />
          <span>Only the Rooms I choose</span>
        </label>
        {!allRooms ? (
          <div className="chosen" aria-label="Rooms the token reaches">
            {roomList.isPending ? <Loading what="Loading Rooms…" /> : null}
            {!roomList.isPending && (roomList.data ?? []).length === 0 ? <p className="muted">There is no Room yet, so the token will reach no Room.</p> : null}
            {(roomList.data ?? []).map((r) => (
              <label key={r.room_id} className="choice">
                <input type="checkbox" checked={rooms.includes(r.room_id)} onChange={(e) => setRooms(toggle(rooms, r.room_id, e.currentTarget.checked))} />
                <span>{r.name}</span>
              </label>
            ))}
          </div>
        ) : null}
      </fieldset>
      <FormError text={error} />
      <button type="submit" className="primary" disabled={busy || chosen.length === 0}>
        {busy ? "Creating…" : "Create token"}
      </button>
      {chosen.length === 0 ? <p className="muted">Choose at least one scope.</p> : null}
    </form>
  );
}
