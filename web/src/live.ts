import { createElement, useEffect, useRef, useState } from "react";
import type { RemoteChange } from "./tabs";

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

export function useLive(noteId: string, meId: string): { remote: RemoteChange | null; writer: Writer | null } {
  const [remote, setRemote] = useState<RemoteChange | null>(null);
  const [writer, setWriter] = useState<Writer | null>(null);
  const seq = useRef(0);
  useEffect(() => {
    if (typeof EventSource === "undefined") return;
    const es = new EventSource("/api/events?note_id=" + encodeURIComponent(noteId));
    let clear: number | undefined;
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
    };
    es.addEventListener("write", onWrite as EventListener);
    return () => {
      window.clearTimeout(clear);
      es.removeEventListener("write", onWrite as EventListener);
      es.close();
    };
  }, [noteId, meId]);
  return { remote, writer };
}

// LiveMarker says who is writing to the Note, while they are.
export function LiveMarker({ writer }: { writer: Writer | null }) {
  return createElement(
    "span",
    { className: "live-marker" + (writer ? " is-on" : ""), role: "status", "aria-live": "polite", id: "live-marker" },
    writer ? createElement("span", { className: "live-dot", "aria-hidden": "true" }) : null,
    writer ? `${writer.name} is writing` : null,
  );
}
