// The messages between a page and the hub that holds the browser's one
// live stream (GET /api/live): the hub runs in a SharedWorker for every tab
// of the origin, in the tab elected leader when there is no SharedWorker,
// or in the page itself (hub.ts). A page names the topics it follows and
// hears what the stream says of them.

// Topic is a stream topic: "note:<id>" (a Note's committed writes) or
// "proposals" (the person's pending-approvals count).
export type Topic = string;

export const PROPOSALS: Topic = "proposals";

export function noteTopic(id: string): Topic {
  return "note:" + id;
}

// ToHub is what a page sends: hello with every topic it follows (at
// first and whenever the set changes), ping every PING_MS, bye when it
// goes (pagehide: closed, or kept in the back/forward cache).
export type ToHub = { t: "hello"; client: string; topics: Topic[] } | { t: "ping"; client: string } | { t: "bye"; client: string };

// HubState is the stream's: connecting (not yet, or again after a drop),
// live, or stopped (refused, with the server's reason): then nothing more
// comes until a page says hello again.
export type HubState = { state: "connecting" | "live" | "stopped"; reason: string };

// FromHub is what the hub sends a page: hi (its hello was heard), who (a
// ping from a page the hub no longer knows: it dropped the page for
// silence, so the page says hello again and reads what it follows anew),
// the stream's state, and each event of a topic the page follows. A write's
// data is the event's data as the server sent it (the page reads it as the
// API's StreamEvent). A presence's data is the event's (the API's
// LivePresence: who is in the Note, the whole list each time).
export type FromHub =
  | { t: "hi" }
  | { t: "who" }
  | ({ t: "state" } & HubState)
  | { t: "write"; topic: Topic; cursor: string; data: string }
  | { t: "presence"; topic: Topic; data: string }
  | { t: "proposals"; pending: number }
  | { t: "gone"; topic: Topic; reason: string; deleted: boolean }
  | { t: "resync"; topic: Topic; reason: string };

// PING_MS is how often a page says it is still there; the hub drops a page
// it has not heard from for SILENT_MS (longer than a hidden tab's timers
// are throttled to: once a minute).
export const PING_MS = 20_000;
export const SILENT_MS = 150_000;
