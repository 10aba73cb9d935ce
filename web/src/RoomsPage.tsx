import { useQuery } from "@tanstack/react-query";
import { errorText, queries } from "./api";
import { Link } from "./router";
import { ErrorBox, Loading } from "./ui";
import "./rooms.css";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

// RoomsPage lists the workspace's cloud Rooms, each leading to its launcher.
export function RoomsPage() {
  const q = useQuery(queries.rooms());
  const rooms = q.data ?? null;
  const error = q.isError ? errorText(q.error) : "";
  const load = () => void q.refetch();


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
