import { useState } from "react";
import { api, errorText, type TabRef } from "../../api";
import { Link, navigate } from "../../router";
import { Dialog, ErrorBox, Loading, Notice } from "../../ui";
import type { SaveState } from "../../save";
import { TabView } from "./TabView";
import { HistoryView } from "../HistoryView";
import { LiveGone, LiveMarker } from "../../live";
import { TabStrip } from "./TabStrip";
import { Menu } from "./Menu";
import { NoteTitle } from "./NoteTitle";
import { People } from "./People";
import { trashed } from "../../NotesPage";
import { useNotePage } from "./useNotePage";
import type { NotePageProps } from "./types";
import "../../strip.css";

// The Note page: its header (title, version, saving state, History, and
// the Note menu: Rename, Duplicate, Download as a zip, Move to trash), its
// tab strip (exact tab IDs in the
// URL; add, rename, reorder, delete), and the open tab — or, with ?history
// in the URL, the Note's history.

const stateText: Record<SaveState, string> = {
  saved: "Saved",
  saving: "Saving…",
  unsaved: "Unsaved changes",
  offline: "Offline: kept here",
  conflict: "Conflict",
  error: "Not saved",
};

export function NotePage(props: NotePageProps) {
  const { me, meId } = props;
  const page = useNotePage(props);
  const { note, tabs, current, writes } = page;
  const [deleting, setDeleting] = useState<TabRef | null>(null);
  const [noteMenu, setNoteMenu] = useState(false);
  // A Note just made opens with its title field (?title=new in the URL).
  const [titling, setTitling] = useState<"" | "rename" | "new">(() => (new URLSearchParams(location.search).get("title") === "new" ? "new" : ""));
  const [trashing, setTrashing] = useState(false);
  const [busy, setBusy] = useState(false);

  if (page.error) {
    return (
      <section className="page">
        <Link to="/" className="back">
          ← Notes
        </Link>
        <ErrorBox text={errorText(page.error)} onRetry={page.retry} />
      </section>
    );
  }
  if (!note || !current) {
    return (
      <section className="page">
        <Loading what="Opening the Note…" />
      </section>
    );
  }

  const remove = async (t: TabRef) => {
    const ok = await writes.remove(t);
    setDeleting(null);
    if (ok && current.tab_id === t.tab_id) {
      const rest = tabs.filter((x) => x.tab_id !== t.tab_id);
      if (rest[0]) page.open(rest[0], true);
    }
  };

  const doneTitling = () => {
    setTitling("");
    if (new URLSearchParams(location.search).has("title")) navigate(location.pathname, true);
  };
  const duplicate = () => {
    setBusy(true);
    api
      .duplicateNote(note.id)
      .then((n) => navigate("/notes/" + encodeURIComponent(n.id)))
      .catch((e: unknown) => page.setNotice(errorText(e)))
      .finally(() => setBusy(false));
  };
  const moveToTrash = () => {
    setBusy(true);
    api
      .deleteNote({ id: note.id, version: page.version })
      .then((w) => {
        trashed.current = { id: note.id, title: note.title, version: w?.version ?? 0 };
        navigate("/");
      })
      .catch((e: unknown) => {
        setTrashing(false);
        page.setNotice(errorText(e));
      })
      .finally(() => setBusy(false));
  };

  const viewing = page.hist !== null;
  return (
    <section className="page wide note-page">
      <div className="note-head">
        <Link to="/" className="back">
          ← Notes
        </Link>
        <NoteTitle id={note.id} title={note.title} version={page.version} editing={titling} onDone={doneTitling} onVersion={page.seen} onFailed={page.setNotice} />
        <div className="note-status">
          <LiveMarker writer={page.live.writer} />
          <People peers={page.peers} tabs={tabs} meId={meId} />
          <span className="version">Version {page.version}</span>
          {viewing ? null : (
            <span className={"save-state is-" + page.save} role="status" aria-live="polite" id="save-state">
              {stateText[page.save]}
            </span>
          )}
          <button
            type="button"
            className={"secondary small" + (viewing ? " is-on" : "")}
            id="history-button"
            aria-pressed={viewing}
            onClick={() => (viewing ? page.closeHistory() : page.showHistory(""))}
          >
            History
          </button>
          <Menu
            id="note-actions"
            label="Note actions"
            text="⋯"
            open={noteMenu}
            setOpen={setNoteMenu}
            items={[
              { key: "rename", text: "Rename Note", run: () => setTitling("rename"), disabled: viewing },
              { key: "duplicate", text: "Duplicate", run: duplicate, disabled: busy },
              { key: "download", text: "Download (.zip)", href: api.exportHref(note.id, false), run: () => {} },
              { key: "download-history", text: "Download with history (.zip)", href: api.exportHref(note.id, true), run: () => {} },
              { key: "trash", text: "Move to trash", run: () => setTrashing(true), danger: true, disabled: busy },
            ]}
          />
        </div>
      </div>
      <LiveGone gone={page.live.gone} />
      <Notice text={page.notice} onDismiss={() => page.setNotice("")} role="alert" className="strip-notice" />
      {viewing ? (
        <HistoryView
          noteId={note.id}
          tabs={tabs}
          me={me}
          selected={page.hist ?? ""}
          onSelect={(v) => page.showHistory(String(v))}
          onBack={page.closeHistory}
          onRestored={page.restored}
        />
      ) : (
        <>
          <TabStrip noteId={note.id} tabs={tabs} current={current} writes={writes} tabRefs={page.tabRefs} open={page.open} onDelete={setDeleting} peers={page.peers} meId={meId} />
          <div className="tabpanel" role="tabpanel" id="tabpanel" aria-labelledby={"tab-" + current.tab_id}>
            <TabView
              key={current.tab_id}
              noteId={note.id}
              tab={current}
              me={me}
              meId={meId}
              remote={page.tabRemote}
              peers={page.peers}
              presence={page.presence}
              target={page.target}
              onVersion={page.seen}
              onState={page.setSave}
            />
          </div>
        </>
      )}
      <Dialog id="trash-note" open={trashing} title="Move this Note to the trash?" onClose={() => setTrashing(false)}>
        <p>
          “{note.title}” leaves your Notes and every agent's reach. The trash keeps it, as it is, for 30 days: restore it from Notes → Trash
          until then.
        </p>
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => setTrashing(false)} disabled={busy} autoFocus>
            Cancel
          </button>
          <button type="button" className="danger" id="trash-note-confirm" onClick={moveToTrash} disabled={busy}>
            {busy ? "Moving…" : "Move to trash"}
          </button>
        </div>
      </Dialog>
      <Dialog id="delete-tab" open={deleting !== null} title="Delete this tab?" onClose={() => setDeleting(null)}>
        <p>
          The {deleting?.type} tab “{deleting?.label}” and everything in it will be deleted, for you and for every agent. The Note's History
          keeps it: restore an older version to bring it back.
        </p>
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => setDeleting(null)} disabled={writes.busy} autoFocus>
            Cancel
          </button>
          <button type="button" className="danger" id="delete-tab-confirm" onClick={() => deleting && void remove(deleting)} disabled={writes.busy}>
            {writes.busy ? "Deleting…" : "Delete tab"}
          </button>
        </div>
      </Dialog>
    </section>
  );
}
