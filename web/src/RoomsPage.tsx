import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { api, errorText, keys, queries, queryClient } from "./api";
import { NameForm } from "./NameForm";
import { Link, navigate, takeNotice } from "./router";
import { Dialog, ErrorBox, Loading, Notice } from "./ui";
import "./rooms.css";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

// RoomsPage lists the workspace's cloud Rooms, each leading to its launcher.
export function RoomsPage() {
  const q = useQuery(queries.rooms());
  const rooms = q.data ?? null;
  const error = q.isError ? errorText(q.error) : "";
  const load = () => void q.refetch();
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState(takeNotice);
  const newRoom = (
    <button type="button" className="primary" onClick={() => setCreating(true)}>
      New Room
    </button>
  );

  return (
    <section className="page" aria-labelledby="rooms-title">
      <div className="page-head">
        <h1 id="rooms-title">Rooms</h1>
        {rooms !== null && rooms.length > 0 ? newRoom : null}
      </div>
      <p className="lead">Each Room has a launcher of apps that agents proposed and a person approved. Open a Room to run its apps.</p>
      <Notice text={notice} onDismiss={() => setNotice("")} role="status" />
      {error ? <ErrorBox text={error} onRetry={load} /> : null}
      {!error && rooms === null ? <Loading what="Loading Rooms…" /> : null}
      {rooms !== null && rooms.length === 0 ? (
        <div className="empty">
          <h2>No Rooms yet</h2>
          <p>A Room holds an app your agents build and you approve.</p>
          {newRoom}
        </div>
      ) : null}
      {rooms !== null && rooms.length > 0 ? (
        <ul className="rooms" id="rooms-list">
          {rooms.map((r) => (
            <li key={r.room_id} className="room-row">
              <div className="room-main">
                <Link to={"/rooms/" + encodeURIComponent(r.room_id)} className="room-name">
                  {r.name || "Untitled Room"}
                </Link>
                <span className="room-meta">
                  {r.owner?.name ? `Owned by ${r.owner.name} · ` : ""}
                  {plural(r.apps ?? 0, "app", "apps")}
                </span>
              </div>
              {r.pending > 0 ? (
                <span className="room-pending" aria-label={plural(r.pending, "proposal waits", "proposals wait") + " for approval"}>
                  {r.pending} pending
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      <Dialog id="new-room" open={creating} title="New Room" onClose={() => setCreating(false)}>
        <CreateRoomForm onClose={() => setCreating(false)} />
      </Dialog>
    </section>
  );
}

// CreateRoomForm creates the Room and opens it; it is made anew each time
// the dialog opens, so it starts empty.
function CreateRoomForm(props: { onClose: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const create = (name: string) => {
    setBusy(true);
    setError("");
    api
      .createRoom(name)
      .then((r) => {
        void queryClient.invalidateQueries({ queryKey: keys.rooms });
        navigate("/rooms/" + encodeURIComponent(r.room_id));
      })
      .catch((e: unknown) => {
        setError(errorText(e));
        setBusy(false);
      });
  };
  return <NameForm id="new-room-name" what="Room" submit="Create Room" busySubmit="Creating…" busy={busy} error={error} onClose={props.onClose} onSave={create} />;
}
