import { useEffect, useEffectEvent, useRef, useState } from "react";
import { keys, queries, queryClient, type Actor, type LiveWrite } from "../api";
import { pageLive } from "./connection";
import { noteTopic, type FromHub, type HubState } from "./protocol";
import type { Gone, Live, RemoteChange, Writer } from "./types";

// The live Note: its topic on the page's one live connection (connection.ts,
// a stream the whole browser shares), which resumes after a dropped stream
// from the last event heard, so nothing is missed. Each write invalidates
// what it changed in the query cache: the tab strip and the history are
// read again at once; a changed tab is marked stale, for its view to read
// when it is ready to take the change in (and for any later view of it to
// read afresh). When the stream could not deliver the Note's events (it
// fell behind, or the page was away in the back/forward cache) the Note
// reads itself again, every tab; when live updates stop for good (signed
// out), or the Note is gone, the page says so.

// WRITING_MS is how long after a write its writer is shown as writing.
const WRITING_MS = 8000;

// Invalidation tells the query cache what writes changed, once for every
// write that arrived in one task (a reopened stream can send a burst).
type Invalidation = { noteId: string; deleted: boolean; stale: Set<string>; gone: Set<string>; textOnly: boolean };

function invalidation(noteId: string): Invalidation {
  return { noteId, deleted: false, stale: new Set(), gone: new Set(), textOnly: true };
}

// TEXT_READ_MS is how often, at most, people typing in the markdown tab
// make the tab strip and the history be read again: a live editor pushes
// every keystroke or so, and neither changes with the text.
const TEXT_READ_MS = 2000;
const textReads = new Map<string, number>(); // Note → the timer of its pending read

function add(inv: Invalidation, r: RemoteChange) {
  if (r.kind === "note_deleted") inv.deleted = true;
  if (r.kind !== "text_edited" || r.changed.some((t) => t !== "markdown")) inv.textOnly = false;
  // A deleted tab is not read again (its view closes as the strip is read
  // again).
  for (const t of r.changed) (r.kind === "tab_deleted" ? inv.gone : inv.stale).add(t);
}

function invalidate(inv: Invalidation) {
  const id = inv.noteId;
  if (inv.deleted) {
    void queryClient.cancelQueries({ queryKey: keys.note(id) });
    return;
  }
  for (const t of inv.gone) void queryClient.cancelQueries({ queryKey: keys.tab(id, t) });
  for (const t of inv.stale) if (!inv.gone.has(t)) void queryClient.invalidateQueries({ queryKey: keys.tab(id, t), refetchType: "none" });
  if (inv.textOnly) {
    if (!textReads.has(id))
      textReads.set(
        id,
        window.setTimeout(() => {
          textReads.delete(id);
          readNote(id);
        }, TEXT_READ_MS),
      );
    return;
  }
  const pending = textReads.get(id);
  if (pending !== undefined) {
    window.clearTimeout(pending);
    textReads.delete(id);
  }
  readNote(id);
}

// readNote reads the Note's tab strip and history again, and marks the
// Notes list stale.
function readNote(id: string) {
  void queryClient.invalidateQueries({ queryKey: keys.note(id), exact: true });
  void queryClient.invalidateQueries({ queryKey: keys.history(id), exact: true });
  void queryClient.invalidateQueries({ queryKey: keys.allNotes, refetchType: "none" });
}

function parse<T>(data: unknown): T | null {
  try {
    return JSON.parse(String(data)) as T;
  } catch {
    return null;
  }
}

// sentence is a reason the server gave, as the page says it.
function sentence(reason: string): string {
  const r = reason.trim().replace(/[.:;,]+$/, "");
  return r ? r.charAt(0).toUpperCase() + r.slice(1) + "." : "";
}

// stopped is what the page says when live updates stopped for good.
function stopped(reason: string): Gone {
  const deleted = /not found|was deleted/i.test(reason);
  if (deleted) return { reason: "This Note was deleted.", deleted };
  return { reason: sentence(reason) || "Live updates stopped: reload the page to follow the Note again.", deleted };
}

const someone: Actor = { kind: "person", id: "", name: "Someone" };

// onChange hears each write as it arrives (after the cache is told), and
// each re-read of the whole Note (kind "resync", every tab changed).
export function useLive(noteId: string, meId: string, onChange?: (r: RemoteChange) => void): Live {
  const [remote, setRemote] = useState<RemoteChange | null>(null);
  const [writer, setWriter] = useState<Writer | null>(null);
  const [gone, setGone] = useState<Gone | null>(null);
  const seq = useRef(0);
  const heard = useEffectEvent((r: RemoteChange) => onChange?.(r));
  useEffect(() => {
    const live = pageLive();
    let clear: number | undefined;
    let over = false; // the Note is gone: nothing more is heard of it
    let halted = false; // live updates stopped (the page says so)
    let batch: Invalidation | null = null;
    const changed = (r: RemoteChange) => {
      if (!batch) {
        const inv = (batch = invalidation(noteId));
        queueMicrotask(() => {
          batch = null;
          invalidate(inv);
        });
      }
      add(batch, r);
    };
    const tell = (r: RemoteChange) => {
      setRemote(r);
      heard(r);
    };
    const onWrite = (data: string) => {
      const e = parse<LiveWrite>(data);
      if (typeof e?.version !== "number") return;
      const who = { kind: e.actor?.kind ?? "unknown", id: e.actor?.id ?? "", name: e.actor?.name ?? "" };
      const mine = who.kind === "person" && who.id === meId;
      // A write the page holds already (sent again as the stream opened on
      // a new topic after an earlier event) is no one writing now.
      const known = queryClient.getQueryData(queries.note(noteId).queryKey)?.version ?? 0;
      seq.current += 1;
      const r: RemoteChange = { seq: seq.current, version: e.version, kind: e.kind ?? "", changed: Array.isArray(e.changed) ? e.changed : [], who, mine, text: Array.isArray(e.text) ? e.text : undefined };
      changed(r);
      tell(r);
      if (!mine && e.version > known) {
        setWriter({ name: who.name || (who.kind === "person" ? "Someone" : "An agent"), kind: who.kind, at: Date.now() });
        window.clearTimeout(clear);
        clear = window.setTimeout(() => setWriter(null), WRITING_MS);
      }
      if (e.kind === "note_deleted") {
        end({ reason: mine ? "You deleted this Note." : `${who.name || "Someone"} deleted this Note.`, deleted: true });
      }
    };
    const end = (g: Gone) => {
      over = true;
      window.clearTimeout(clear);
      setWriter(null);
      setGone(g);
    };
    // resync reads the Note again, every tab: its events could not all be
    // delivered.
    const resync = async () => {
      await queryClient.invalidateQueries({ queryKey: keys.note(noteId), exact: true, refetchType: "none" });
      void queryClient.invalidateQueries({ queryKey: keys.history(noteId), exact: true });
      void queryClient.invalidateQueries({ queryKey: ["note", noteId, "tab"], refetchType: "none" });
      let note;
      try {
        note = await queryClient.fetchQuery(queries.note(noteId));
      } catch {
        return; // the Note's own read says what failed
      }
      if (over) return;
      seq.current += 1;
      tell({ seq: seq.current, version: note.version, kind: "resync", changed: note.tabs.map((t) => t.tab_id), who: someone, mine: false });
    };
    const onMessage = (m: FromHub) => {
      if (over) return;
      if (m.t === "write") onWrite(m.data);
      else if (m.t === "gone") end(m.deleted ? { reason: "This Note was deleted.", deleted: true } : { reason: sentence(m.reason) || "This Note can no longer be followed.", deleted: false });
      else if (m.t === "resync") void resync();
    };
    const onState = (s: HubState) => {
      if (over) return;
      if (s.state === "stopped") {
        halted = true;
        window.clearTimeout(clear);
        setWriter(null);
        setGone(stopped(s.reason));
      } else if (s.state === "live" && halted) {
        // Live again (a page of this browser opened it anew): what was
        // written meanwhile never reached the page.
        halted = false;
        setGone(null);
        void resync();
      }
    };
    const off = live.subscribe(noteTopic(noteId), onMessage);
    const unwatch = live.watch(onState);
    return () => {
      over = true;
      window.clearTimeout(clear);
      off();
      unwatch();
    };
  }, [noteId, meId]);
  return { remote, writer, gone };
}
