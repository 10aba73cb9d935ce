import { useCallback, useEffect, useState } from "react";
import { call } from "./api";
import { Link } from "./router";
import { ErrorBox, Loading } from "./ui";
import "./rooms.css";

// The Rooms REST answers (GET /api/rooms, GET /api/rooms/{id}).

export type Person = { id: string; name: string };

export type RoomSummary = { room_id: string; name: string; owner: Person; apps: number; pending: number; version: number | string };

export type RoomApp = {
  instance_id: string;
  name: string;
  kind: "snippet" | "repository";
  position: number;
  proposal_id?: string;
  repository?: { repository_id: string; name: string; version_id: string; build_state: string };
  added_at?: string;
};

export type Room = { room_id: string; name: string; owner: Person; version: number | string; can_manage: boolean; apps: RoomApp[] };

export const roomPath = (id: string) => "/api/rooms/" + encodeURIComponent(id);

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

// RoomsPage lists the workspace's cloud Rooms, each leading to its launcher.
export function RoomsPage() {
  const [rooms, setRooms] = useState<RoomSummary[] | null>(null);
  const [error, setError] = useState("");
  const load = useCallback(() => {
    setError("");
    const ac = new AbortController();
    call<{ rooms: RoomSummary[] }>("/api/rooms", { signal: ac.signal })
      .then((r) => setRooms(Array.isArray(r.rooms) ? r.rooms : []))
      .catch((e: unknown) => {
        if (ac.signal.aborted) return;
        setError(e instanceof Error ? e.message : String(e));
      });
    return () => ac.abort();
  }, []);
  useEffect(load, [load]);

  return (
    <section className="page" aria-labelledby="rooms-title">
      <div className="page-head">
        <h1 id="rooms-title">Rooms</h1>
      </div>
      <p className="lead">Each Room has a launcher of apps that agents proposed and a person approved. Open a Room to run its apps.</p>
      {error ? <ErrorBox text={error} onRetry={load} /> : null}
      {!error && rooms === null ? <Loading what="Loading Rooms…" /> : null}
      {rooms !== null && rooms.length === 0 ? (
        <div className="empty">
          <h2>No Rooms yet</h2>
          <p>
            An agent creates a Room through Foundry's <code>/mcp</code> address and proposes apps for it; they appear here once a Room exists.
          </p>
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
    </section>
  );
}
