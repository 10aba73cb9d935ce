import type { Actor, TextUpdate } from "../api";

// RemoteChange is one write to the open Note that the page learned of from
// the live event stream (GET /api/events): its version, the tab IDs it
// changed, and who made it. seq grows with every change the page learns
// of, so that a tab can tell a new change from one it has handled.
export type RemoteChange = {
  seq: number;
  version: number;
  kind: string;
  changed: string[];
  who: Actor;
  mine: boolean; // written by the person signed in here (this page or another)
  // text is what the write did to the markdown text, as its updates, when
  // the event carried them (else an editor pulls them).
  text?: TextUpdate[];
};

// Writer is who wrote the Note last, while that is recent.
export type Writer = { name: string; kind: string; at: number };

// Gone says why the Note can no longer be followed (it was deleted, or the
// person was signed out), once the stream has ended for good.
export type Gone = { reason: string; deleted: boolean };

export type Live = { remote: RemoteChange | null; writer: Writer | null; gone: Gone | null };
