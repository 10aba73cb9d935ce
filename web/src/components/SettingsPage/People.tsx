import { useState, type FormEvent } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, errorText, keys, queries, type Invitation, type Me, type Member, type Role } from "../../api";
import { when } from "../../ui";
import { Confirm, FormError, Reading, ShownOnce, useMessages } from "./parts";

// People: who is in the workspace, their role and whether they have set a
// password. An owner invites by email (the one-time link is shown once, to
// send), changes roles and removes people; the last owner keeps theirs.

const lastOwnerReason = "The workspace's last owner: make another person an owner first.";

export function People({ me }: { me: Me }) {
  const q = useQuery(queries.people());
  const qc = useQueryClient();
  const list = q.data ?? null;
  const owner = me.user.role === "owner";
  const owners = (list ?? []).filter((p) => p.role === "owner").length;
  const { say: setNotice, fail: setFailure, view: messages } = useMessages();
  const [removing, setRemoving] = useState<Member | null>(null);
  const [busy, setBusy] = useState(false);
  const [invited, setInvited] = useState<Invitation | null>(null);
  const reload = () => void qc.invalidateQueries({ queryKey: keys.people });

  const changeRole = (p: Member, role: Role) => {
    setFailure("");
    api
      .changeRole(p.id, role)
      .then((m) => {
        setNotice(`${m.email} is now ${m.role === "owner" ? "an owner" : "a member"}.`);
        reload();
      })
      .catch((e: unknown) => {
        setFailure(errorText(e));
        reload();
      });
  };
  const remove = () => {
    if (!removing) return;
    const p = removing;
    setBusy(true);
    setFailure("");
    api
      .removePerson(p.id)
      .then(() => {
        setNotice(`${p.email} is removed: their sessions and tokens ended and their connections are revoked.`);
        setRemoving(null);
        reload();
      })
      .catch((e: unknown) => {
        setRemoving(null);
        setFailure(errorText(e));
      })
      .finally(() => setBusy(false));
  };

  return (
    <section className="settings-part" aria-labelledby="people-title">
      <h2 id="people-title">People</h2>
      {owner ? (
        <InviteForm
          onInvited={(inv) => {
            setInvited(inv);
            setNotice("");
            reload();
          }}
        />
      ) : (
        <p className="muted">An owner of the workspace invites people and changes their roles.</p>
      )}
      {invited && invited.link ? (
        <ShownOnce id="invite-link" title={`Invitation for ${invited.person.email}`} label="One-time link" value={invited.link} onDone={() => setInvited(null)}>
          Send them this link: it lets them choose their password, works once, and expires {invited.expires_at ? new Date(invited.expires_at).toLocaleString() : "in 24 hours"}.{" "}
          <strong>It is shown only now.</strong>
        </ShownOnce>
      ) : null}
      {messages}
      <Reading error={q.error} isError={q.isError} loaded={list !== null} what="Loading people…" retry={() => void q.refetch()} />
      {list !== null && list.length === 1 && owner ? (
        <p className="settings-empty">Only you are in this workspace so far. Invite a person above: they get a one-time link to choose their password.</p>
      ) : null}
      {list !== null ? (
        <ul className="people-list" aria-label="People of the workspace">
          {list.map((p) => {
            const last = p.role === "owner" && owners <= 1;
            const who = p.name ? `${p.name} (${p.email})` : p.email;
            return (
              <li key={p.id} className="person" data-email={p.email}>
                <div className="person-main">
                  <span className="person-name">
                    {p.name || p.email}
                    {p.id === me.user.id ? <span className="you"> · you</span> : null}
                  </span>
                  {p.name ? <span className="person-email">{p.email}</span> : null}
                  <span className="person-meta">
                    {p.status === "invited" ? <span className="badge badge-invited">Invited · has not set a password yet</span> : <span className="badge">Active</span>} · added{" "}
                    {when(p.created_at)}
                  </span>
                  {owner && last ? <span className="person-reason">{lastOwnerReason}</span> : null}
                </div>
                <div className="person-actions">
                  {owner ? (
                    <>
                      <label className="sr-only" htmlFor={"role-" + p.id}>
                        Role of {who}
                      </label>
                      <select
                        id={"role-" + p.id}
                        className="role-select"
                        value={p.role}
                        disabled={last}
                        title={last ? lastOwnerReason : undefined}
                        onChange={(e) => changeRole(p, e.currentTarget.value === "owner" ? "owner" : "member")}
                      >
                        <option value="member">Member</option>
                        <option value="owner">Owner</option>
                      </select>
                      <button
                        type="button"
                        className="secondary small danger-text"
                        disabled={last}
                        title={last ? lastOwnerReason : undefined}
                        aria-label={"Remove " + who}
                        onClick={() => setRemoving(p)}
                      >
                        Remove
                      </button>
                    </>
                  ) : (
                    <span className="role-text">{p.role === "owner" ? "Owner" : "Member"}</span>
                  )}
                </div>
              </li>
            );
          })}
        </ul>
      ) : null}
      <Confirm id="remove-person" open={removing !== null} title="Remove this person?" act="Remove" acting="Removing…" busy={busy} onCancel={() => setRemoving(null)} onConfirm={remove}>
        {removing?.email} will be signed out everywhere: their sessions and personal access tokens end and their connected clients are revoked. What they
        wrote stays.
      </Confirm>
    </section>
  );
}

function InviteForm({ onInvited }: { onInvited: (inv: Invitation) => void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    api
      .invite({ email, role })
      .then((inv) => {
        setEmail("");
        setRole("member");
        onInvited(inv);
      })
      .catch((err: unknown) => setError(errorText(err)))
      .finally(() => setBusy(false));
  };
  return (
    <form className="settings-form invite-form" onSubmit={submit} aria-labelledby="invite-title">
      <h3 id="invite-title">Invite a person</h3>
      <div className="form-row">
        <label className="field grow">
          <span>Email</span>
          <input type="email" name="email" required autoComplete="off" placeholder="ada@example.com" value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label className="field">
          <span>Role</span>
          <select name="role" value={role} onChange={(e) => setRole(e.currentTarget.value === "owner" ? "owner" : "member")}>
            <option value="member">Member</option>
            <option value="owner">Owner</option>
          </select>
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Inviting…" : "Invite"}
        </button>
      </div>
      <FormError text={error} />
    </form>
  );
}
