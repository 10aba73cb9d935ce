import { useEffect, useRef, useState, type DragEvent, type KeyboardEvent } from "react";
import { useQuery } from "@tanstack/react-query";
import { api, ApiError, errorText, keys, queries, queryClient, type AppChange, type Room, type RoomApp } from "./api";
import { AppFrame } from "./AppFrame";
import { NameForm } from "./NameForm";
import { Link, navigate } from "./router";
import { Confirm, Dialog, ErrorBox, Loading, when, Notice } from "./ui";
import "./rooms.css";

// RoomPage is a Room's launcher: a tab bar of its approved apps, the
// selected one running in the sandbox; its manager renames, reorders and
// removes them.
export function RoomPage({ id }: { id: string }) {
  const q = useQuery(queries.room(id));
  const room = q.data ?? null;
  const [selected, setSelected] = useState("");
  const [notice, setNotice] = useState("");
  const [renaming, setRenaming] = useState<RoomApp | null>(null);
  const [removing, setRemoving] = useState<RoomApp | null>(null);
  const [busy, setBusy] = useState(false);
  const [roomDialog, setRoomDialog] = useState<"" | "rename" | "delete">("");
  const [roomError, setRoomError] = useState("");
  const [dragging, setDragging] = useState("");
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});

  const refresh = () => void q.refetch();
  // setRoom shows the Room as this page changed it.
  const setRoom = (f: (r: Room) => Room) => queryClient.setQueryData<Room>(keys.room(id), (r) => (r ? f(r) : r));

  useEffect(() => {
    if (room) document.title = (room.name || "Room") + " · Foundry";
  }, [room]);

  // failed shows why a change was refused; a Room changed meanwhile (412)
  // is read again.
  const failed = (e: unknown) => {
    const text = e instanceof Error ? e.message : String(e);
    if (e instanceof ApiError && (e.status === 412 || e.status === 404)) {
      setNotice((e.status === 412 ? "This Room changed meanwhile, so nothing was changed: it is shown as it is now. " : "") + text);
      refresh();
      return;
    }
    setNotice(text);
  };

  const patch = async (app: RoomApp, change: AppChange) => {
    if (!room) return false;
    setBusy(true);
    try {
      const r = await api.patchApp(room, app.instance_id, change);
      setRoom((x) => ({ ...x, version: r.version ?? x.version, apps: applyChange(x.apps, app.instance_id, change) }));
      return true;
    } catch (e) {
      failed(e);
      return false;
    } finally {
      setBusy(false);
    }
  };

  const move = async (app: RoomApp, to: number) => {
    if (!room || to < 0 || to >= room.apps.length) return;
    const from = room.apps.findIndex((a) => a.instance_id === app.instance_id);
    if (from === to || from < 0) return;
    if (await patch(app, { position: to })) {
      setNotice(`${app.name} moved to place ${to + 1} of ${room.apps.length}.`);
      requestAnimationFrame(() => tabRefs.current[app.instance_id]?.focus());
    }
  };

  const remove = async () => {
    if (!room || !removing) return;
    const app = removing;
    setBusy(true);
    try {
      const res = await api.removeApp(room, app.instance_id);
      setRoom((x) => ({ ...x, version: res?.version ?? x.version, apps: x.apps.filter((a) => a.instance_id !== app.instance_id) }));
      setNotice(`${app.name} is removed from this Room's launcher.`);
      setRemoving(null);
      // Without the Room's new version in the answer, the next change needs it read again.
      if (res?.version === undefined) refresh();
    } catch (e) {
      setRemoving(null);
      failed(e);
    } finally {
      setBusy(false);
    }
  };

  const closeRoomDialog = () => {
    setRoomDialog("");
    setRoomError("");
  };

  // roomFailed keeps a refused name in its dialog; anything else closes
  // it and says why.
  const roomFailed = (e: unknown) => {
    if (e instanceof ApiError && e.status === 400) {
      setRoomError(e.message);
      return;
    }
    closeRoomDialog();
    failed(e);
  };

  const renameRoom = async (name: string) => {
    if (!room) return;
    setBusy(true);
    try {
      const w = await api.renameRoom(room, name);
      setRoom((x) => ({ ...x, name, version: w.version ?? x.version }));
      void queryClient.invalidateQueries({ queryKey: keys.rooms });
      closeRoomDialog();
      setNotice(`This Room is now called ${name}.`);
    } catch (e) {
      roomFailed(e);
    } finally {
      setBusy(false);
    }
  };

  const deleteRoom = async () => {
    if (!room) return;
    setBusy(true);
    try {
      await api.deleteRoom(room);
      queryClient.removeQueries({ queryKey: keys.room(id) });
      await queryClient.invalidateQueries({ queryKey: keys.rooms });
      navigate("/rooms", false, `The Room ${room.name || id} is deleted: its apps stopped and its waiting proposals were declined.`);
    } catch (e) {
      closeRoomDialog();
      failed(e);
      setBusy(false);
    }
  };

  if (q.isError && !room) {
    const status = q.error instanceof ApiError ? q.error.status : 0;
    return (
      <section className="page" aria-labelledby="room-title">
        <div className="page-head">
          <h1 id="room-title">{status === 404 ? "Room not found" : "This Room did not open"}</h1>
        </div>
        <ErrorBox text={errorText(q.error)} onRetry={status === 404 ? undefined : refresh} />
        <Link to="/rooms" className="button secondary">
          Back to Rooms
        </Link>
      </section>
    );
  }
  if (!room) return <Loading what="Opening the Room…" />;
  const r = room;
  const apps = r.apps;
  const current = apps.find((a) => a.instance_id === selected) ?? apps[0];

  const onStripKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (!current) return;
    const i = apps.findIndex((a) => a.instance_id === current.instance_id);
    let to: number;
    if (e.key === "ArrowRight") to = (i + 1) % apps.length;
    else if (e.key === "ArrowLeft") to = (i - 1 + apps.length) % apps.length;
    else if (e.key === "Home") to = 0;
    else if (e.key === "End") to = apps.length - 1;
    else return;
    e.preventDefault();
    if (e.altKey && e.shiftKey) {
      if (r.can_manage && !busy && (e.key === "ArrowRight" || e.key === "ArrowLeft")) {
        const dest = e.key === "ArrowRight" ? i + 1 : i - 1;
        if (dest >= 0 && dest < apps.length) move(current, dest);
      }
      return;
    }
    setSelected(apps[to].instance_id);
    tabRefs.current[apps[to].instance_id]?.focus();
  };

  const onDrop = (e: DragEvent, target: RoomApp) => {
    e.preventDefault();
    const app = apps.find((a) => a.instance_id === dragging);
    setDragging("");
    if (!app || app.instance_id === target.instance_id) return;
    move(app, apps.findIndex((a) => a.instance_id === target.instance_id));
  };

  return (
    <section className="page room-page" aria-labelledby="room-title">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/rooms">Rooms</Link>
        <span aria-hidden="true"> / </span>
        <span aria-current="page">{r.name || "Untitled Room"}</span>
      </nav>
      <div className="page-head">
        <h1 id="room-title">{r.name || "Untitled Room"}</h1>
        {r.owner?.name ? <span className="room-meta">Owned by {r.owner.name}</span> : null}
        {r.can_manage ? (
          <div className="room-actions" role="group" aria-label="Manage this Room">
            <button type="button" className="secondary small" id="room-rename" disabled={busy} onClick={() => setRoomDialog("rename")}>
              Rename Room
            </button>
            <button type="button" className="ghost small danger-text" id="room-delete" disabled={busy} onClick={() => setRoomDialog("delete")}>
              Delete Room
            </button>
          </div>
        ) : null}
      </div>
      <Notice text={notice} onDismiss={() => setNotice("")} role="status" />
      {apps.length === 0 || !current ? (
        <div className="empty">
          <h2>No apps in this Room yet</h2>
          <p>An agent proposes an app for this Room; once the Room's owner approves it under Needs your approval, it runs here.</p>
        </div>
      ) : (
        <>
          {r.can_manage ? (
            <div className="app-actions" aria-label={`Manage ${current.name}`} role="group">
              <span className="app-current">{current.name}</span>
              <button type="button" className="secondary small" disabled={busy} onClick={() => setRenaming(current)}>
                Rename
              </button>
              <button
                type="button"
                className="secondary small"
                disabled={busy || apps.indexOf(current) === 0}
                onClick={() => move(current, apps.indexOf(current) - 1)}
                aria-label={`Move left: ${current.name}`}
              >
                <span aria-hidden="true">←</span> Move left
              </button>
              <button
                type="button"
                className="secondary small"
                disabled={busy || apps.indexOf(current) === apps.length - 1}
                onClick={() => move(current, apps.indexOf(current) + 1)}
                aria-label={`Move right: ${current.name}`}
              >
                Move right <span aria-hidden="true">→</span>
              </button>
              <button type="button" className="ghost small danger-text" disabled={busy} onClick={() => setRemoving(current)}>
                Remove
              </button>
              <span className="app-hint">Drag a tab, or Alt+Shift+Arrow on it, to reorder.</span>
            </div>
          ) : null}
          <div className="launcher-bar">
            <div className="tabstrip launcher-tabs" role="tablist" aria-labelledby="room-title" onKeyDown={onStripKey}>
              {apps.map((a) => {
                const sel = a.instance_id === current.instance_id;
                return (
                  <button
                    key={a.instance_id}
                    type="button"
                    role="tab"
                    id={"app-tab-" + a.instance_id}
                    data-instance-id={a.instance_id}
                    aria-selected={sel}
                    aria-controls="app-panel"
                    tabIndex={sel ? 0 : -1}
                    className={"tab" + (dragging === a.instance_id ? " is-dragging" : "")}
                    draggable={r.can_manage && !busy}
                    onDragStart={(e) => {
                      setDragging(a.instance_id);
                      e.dataTransfer.effectAllowed = "move";
                      e.dataTransfer.setData("text/plain", a.name);
                    }}
                    onDragEnd={() => setDragging("")}
                    onDragOver={(e) => {
                      if (dragging) e.preventDefault();
                    }}
                    onDrop={(e) => onDrop(e, a)}
                    ref={(el) => {
                      tabRefs.current[a.instance_id] = el;
                    }}
                    onClick={() => setSelected(a.instance_id)}
                  >
                    {a.name || "Untitled app"}
                    {a.kind === "repository" ? <span className="tab-type"> · repository</span> : null}
                  </button>
                );
              })}
            </div>
          </div>
          <div className="tabpanel app-panel" role="tabpanel" id="app-panel" aria-labelledby={"app-tab-" + current.instance_id}>
            {current.kind === "repository" ? (
              <RepositoryApp app={current} />
            ) : (
              <AppFrame key={current.instance_id} roomId={r.room_id} instanceId={current.instance_id} name={current.name} />
            )}
          </div>
        </>
      )}
      <Dialog open={renaming !== null} title="Rename app" onClose={() => setRenaming(null)} id="rename-app">
        {renaming ? (
          <NameForm
            key={renaming.instance_id}
            id="app-name"
            what="app"
            initial={renaming.name}
            submit="Rename"
            busySubmit="Renaming…"
            busy={busy}
            onClose={() => setRenaming(null)}
            onSave={async (name) => {
              const app = renaming;
              if (await patch(app, { name })) setNotice(`Renamed to ${name}.`);
              setRenaming(null);
            }}
          />
        ) : null}
      </Dialog>
      <Dialog open={roomDialog === "rename"} title="Rename this Room" onClose={closeRoomDialog} id="rename-room">
        <NameForm
          id="room-name"
          what="Room"
          initial={r.name}
          submit="Rename"
          busySubmit="Renaming…"
          busy={busy}
          error={roomError}
          onClose={closeRoomDialog}
          onSave={renameRoom}
        />
      </Dialog>
      <Confirm
        id="delete-room"
        open={roomDialog === "delete"}
        title={`Delete ${r.name || "this Room"}?`}
        act="Delete Room"
        acting="Deleting…"
        busy={busy}
        onCancel={closeRoomDialog}
        onConfirm={deleteRoom}
      >
        “{r.name}” is deleted for everyone, with its launcher:{" "}
        {apps.length === 0
          ? "it has no apps."
          : apps.length === 1
            ? `its app ${apps[0].name} stops and no one can open it again.`
            : `its ${apps.length} apps stop and no one can open them again.`}{" "}
        Proposals waiting for approval in it are declined, and agents can no longer reach it.
      </Confirm>
      <Dialog open={removing !== null} title={`Remove ${removing?.name ?? "this app"}?`} onClose={() => setRemoving(null)} id="remove-app">
        <p>It leaves this Room's launcher for everyone. The data it kept in each person's browser stays there.</p>
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => setRemoving(null)} disabled={busy}>
            Cancel
          </button>
          <button type="button" className="danger" onClick={remove} disabled={busy}>
            Remove app
          </button>
        </div>
      </Dialog>
    </section>
  );
}

// applyChange is the launcher after one app's change: a new name, or a
// move to position (the others shift).
function applyChange(apps: RoomApp[], id: string, change: AppChange): RoomApp[] {
  let out = apps.map((a) => (a.instance_id === id && change.name !== undefined ? { ...a, name: change.name } : a));
  if (change.position !== undefined) {
    const from = out.findIndex((a) => a.instance_id === id);
    if (from >= 0) {
      const [a] = out.splice(from, 1);
      out.splice(change.position, 0, a);
      out = out.map((x, i) => ({ ...x, position: i }));
    }
  }
  return out;
}

function RepositoryApp({ app }: { app: RoomApp }) {
  const repo = app.repository;
  return (
    <div className="repo-app">
      <h2>{app.name}</h2>
      <dl className="repo-facts">
        <dt>Repository</dt>
        <dd>{repo?.name || "—"}</dd>
        <dt>Pinned version</dt>
        <dd>
          <code>{repo?.version_id || "—"}</code>
        </dd>
        <dt>Build</dt>
        <dd>{repo?.build_state || "unknown"}</dd>
        {app.added_at ? (
          <>
            <dt>Added</dt>
            <dd>{when(app.added_at)}</dd>
          </>
        ) : null}
      </dl>
      <p className="repo-note">This path does not build or deploy a bundle.</p>
    </div>
  );
}
