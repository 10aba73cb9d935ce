import { useEffect, useEffectEvent, useRef, useState } from "react";
import { api, keys, queryClient, type NoteEvent } from "../api";
import type { Gone, Live, RemoteChange, Writer } from "./types";

// The live Note: one EventSource on GET /api/events?note_id=… per open
// Note. The browser reconnects by itself (the server sends retry: and the
// last event ID comes back as Last-Event-ID), so nothing is missed across
// a dropped connection. Each write invalidates what it changed in the
// query cache: the tab strip and the history are read again at once; a
// changed tab is marked stale, for its view to read when it is ready to
// take the change in (and for any later view of it to read afresh).

// WRITING_MS is how long after a write its writer is shown as writing.
const WRITING_MS = 8000;

function invalidate(noteId: string, r: RemoteChange) {
  if (r.kind === "note_deleted") {
    void queryClient.cancelQueries({ queryKey: keys.note(noteId) });
    return;
  }
  for (const t of r.changed) {
    // A deleted tab is not read again (its view closes as the strip
    // is read again).
    if (r.kind === "tab_deleted") void queryClient.cancelQueries({ queryKey: keys.tab(noteId, t) });
    else void queryClient.invalidateQueries({ queryKey: keys.tab(noteId, t), refetchType: "none" });
  }
  void queryClient.invalidateQueries({ queryKey: keys.note(noteId), exact: true });
  void queryClient.invalidateQueries({ queryKey: keys.history(noteId), exact: true });
  void queryClient.invalidateQueries({ queryKey: keys.allNotes, refetchType: "none" });
}

function parse<T>(data: unknown): T | null {
  try {
    return JSON.parse(String(data)) as T;
  } catch {
    return null;
  }
}

// reasonOf is why an end event says the server ended the stream: its
// data's reason ("" when it gives none). The end event is not in the
// OpenAPI document (only the write event's data is), so its data is read
// as nothing more than that.
function reasonOf(data: unknown): string {
  const d = parse<unknown>(data);
  return d !== null && typeof d === "object" && "reason" in d && typeof d.reason === "string" ? d.reason : "";
}

// onChange hears each write as it arrives (after the cache is told).
export function useLive(noteId: string, meId: string, onChange?: (r: RemoteChange) => void): Live {
  const [remote, setRemote] = useState<RemoteChange | null>(null);
  const [writer, setWriter] = useState<Writer | null>(null);
  const [gone, setGone] = useState<Gone | null>(null);
  const seq = useRef(0);
  const heard = useEffectEvent((r: RemoteChange) => onChange?.(r));
  useEffect(() => {
    if (typeof EventSource === "undefined") return;
    const es = api.noteEvents(noteId);
    let clear: number | undefined;
    let ended = ""; // the reason the server gave when it last ended the stream
    const onWrite = (ev: MessageEvent) => {
      const e = parse<NoteEvent>(ev.data);
      if (typeof e?.version !== "number") return;
      const who = { kind: e.actor?.kind ?? "unknown", id: e.actor?.id ?? "", name: e.actor?.name ?? "" };
      const mine = who.kind === "person" && who.id === meId;
      seq.current += 1;
      const r: RemoteChange = { seq: seq.current, version: e.version, kind: e.kind ?? "", changed: Array.isArray(e.changed) ? e.changed : [], who, mine };
      invalidate(noteId, r);
      setRemote(r);
      heard(r);
      if (!mine) {
        setWriter({ name: who.name || (who.kind === "person" ? "Someone" : "An agent"), kind: who.kind, at: Date.now() });
        window.clearTimeout(clear);
        clear = window.setTimeout(() => setWriter(null), WRITING_MS);
      }
      if (e.kind === "note_deleted") {
        es.close();
        window.clearTimeout(clear);
        setWriter(null);
        setGone({ reason: mine ? "You deleted this Note." : `${who.name || "Someone"} deleted this Note.`, deleted: true });
      }
    };
    // The server ends a stream with an end event saying why; the browser
    // then reconnects, and if that is refused the stream is closed.
    const onEnd = (ev: MessageEvent) => {
      ended = reasonOf(ev.data);
    };
    const onError = () => {
      if (es.readyState !== EventSource.CLOSED) return; // reconnecting by itself
      const deleted = /not found|was deleted/i.test(ended);
      setGone({ reason: deleted ? "This Note was deleted." : ended ? ended.charAt(0).toUpperCase() + ended.slice(1) + "." : "Live updates stopped: reload the page to follow the Note again.", deleted });
    };
    es.addEventListener("write", onWrite);
    es.addEventListener("end", onEnd);
    es.addEventListener("error", onError);
    return () => {
      window.clearTimeout(clear);
      es.removeEventListener("write", onWrite);
      es.removeEventListener("end", onEnd);
      es.removeEventListener("error", onError);
      es.close();
    };
  }, [noteId, meId]);
  return { remote, writer, gone };
}
