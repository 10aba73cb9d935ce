import { createElement, useEffect, useRef, useState } from "react";
import type { RemoteChange } from "./tabs";
import "./live.css";

// The live Note: one EventSource on GET /api/events?note_id=… per open
// Note. The browser reconnects by itself (the server sends retry: and the
// last event ID comes back as Last-Event-ID), so nothing is missed across
// a dropped connection.

// Writer is who wrote the Note last, while that is recent.
export type Writer = { name: string; kind: string; at: number };

// WRITING_MS is how long after a write its writer is shown as writing.
const WRITING_MS = 8000;

type StreamEvent = {
  cursor: string;
  kind: string;
  version: number;
  changed: string[] | null;
  actor: { kind: string; id: string; name: string };
};

// Gone says why the Note can no longer be followed (it was deleted, or the
// person was signed out), once the stream has ended for good.
export type Gone = { reason: string; deleted: boolean };

export function useLive(noteId: string, meId: string): { remote: RemoteChange | null; writer: Writer | null; gone: Gone | null } {
  const [remote, setRemote] = useState<RemoteChange | null>(null);
  const [writer, setWriter] = useState<Writer | null>(null);
  const [gone, setGone] = useState<Gone | null>(null);
  const seq = useRef(0);
  useEffect(() => {
    setGone(null);
    if (typeof EventSource === "undefined") return;
    const es = new EventSource("/api/events?note_id=" + encodeURIComponent(noteId));
    let clear: number | undefined;
    let ended = ""; // the reason the server gave when it last ended the stream
    const onWrite = (ev: MessageEvent) => {
      let e: StreamEvent;
      try {
        e = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (typeof e?.version !== "number") return;
      const who = { kind: e.actor?.kind ?? "unknown", id: e.actor?.id ?? "", name: e.actor?.name ?? "" };
      const mine = who.kind === "person" && who.id === meId;
      seq.current += 1;
      setRemote({ seq: seq.current, version: e.version, kind: e.kind ?? "", changed: Array.isArray(e.changed) ? e.changed : [], who, mine });
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
      try {
        const d = JSON.parse(ev.data);
        if (typeof d?.reason === "string") ended = d.reason;
      } catch {
        ended = "";
      }
    };
    const onError = () => {
      if (es.readyState !== EventSource.CLOSED) return; // reconnecting by itself
      const deleted = /not found|was deleted/i.test(ended);
      setGone({ reason: deleted ? "This Note was deleted." : ended ? ended.charAt(0).toUpperCase() + ended.slice(1) + "." : "Live updates stopped: reload the page to follow the Note again.", deleted });
    };
    es.addEventListener("write", onWrite as EventListener);
    es.addEventListener("end", onEnd as EventListener);
    es.addEventListener("error", onError);
    return () => {
      window.clearTimeout(clear);
      es.removeEventListener("write", onWrite as EventListener);
      es.removeEventListener("end", onEnd as EventListener);
      es.removeEventListener("error", onError);
      es.close();
    };
  }, [noteId, meId]);
  return { remote, writer, gone };
}

// LiveMarker says who is writing to the Note, while they are (the latest
// writer when several write). Its place in the header is kept when it is
// empty, so the header does not move when it appears.
export function LiveMarker({ writer }: { writer: Writer | null }) {
  return createElement(
    "span",
    { className: "live-marker" + (writer ? " is-on" : ""), role: "status", "aria-live": "polite", "aria-atomic": "true", id: "live-marker" },
    writer
      ? createElement(
          "span",
          { className: "live-pill", title: `${writer.name} is writing` },
          createElement("span", { className: "live-dot", "aria-hidden": "true" }),
          createElement("span", { className: "live-text" }, `${writer.name} is writing…`),
        )
      : null,
  );
}

// LiveGone says the Note can no longer be followed, and why.
export function LiveGone({ gone }: { gone: Gone | null }) {
  if (!gone) return null;
  return createElement(
    "div",
    { className: "live-gone notice", role: "alert" },
    createElement("p", null, createElement("strong", null, gone.reason), gone.deleted ? " Nothing typed here can be saved any more: copy out anything you need." : null),
    createElement("a", { href: "/", className: "secondary button" }, "Back to Notes"),
  );
}
