import { useEffect, useState } from "react";
import { ApiError, api, type LivePresence, type Peer, type PresenceBody } from "../api";
import { pageLive } from "./connection";
import { noteTopic, type FromHub } from "./protocol";

// Presence: where the person is in the open Note (the tab, and in it the
// cursor and selection of the markdown text, or the selected cell of a
// sheet), posted when it changes (at most every THROTTLE_MS) and every
// REPOST_MS while the page is open (the server forgets it 30 s after the
// last post); and who else is there, from the presence events of the
// page's live stream (the whole list each time). It is never a version of
// the Note.

const THROTTLE_MS = 100;
const REPOST_MS = 10_000;

// Where is what a tab's view says of where the person is in it.
export type Where = Pick<PresenceBody, "rev" | "selection" | "cell" | "slide">;

function newClientID(): string {
  const b = new Uint8Array(9);
  crypto.getRandomValues(b);
  return "p-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

// Presence posts one page's presence in one Note.
export class Presence {
  readonly id = newClientID();
  private tab = "";
  private where: Where = {};
  private sent = ""; // the body last posted
  private last = 0; // when it was posted
  private timer: ReturnType<typeof setTimeout> | undefined;
  private repost: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  private gone = false; // the Note is not there (deleted, out of reach): nothing more is posted
  private onPeers: (p: LivePresence) => void = () => {};
  readonly noteId: string;

  constructor(noteId: string) {
    this.noteId = noteId;
  }

  // listen sets who hears the presence a post answers.
  listen(fn: (p: LivePresence) => void) {
    this.onPeers = fn;
  }

  // open says the person is in tab (and nowhere in particular in it yet,
  // when it is another tab than before).
  open(tab: string) {
    if (tab === this.tab) return;
    this.tab = tab;
    this.where = {};
    this.post();
  }

  // at says where the person is in tab (a tab's view calls it).
  at(tab: string, where: Where) {
    this.tab = tab;
    this.where = where;
    this.post();
  }

  // stop posts nothing more: the Note can no longer be followed.
  stop() {
    this.gone = true;
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.repost);
  }

  // leave says the person left the Note.
  leave() {
    if (this.closed || this.gone) return;
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.repost);
    void api.presence(this.noteId, { client_id: this.id, tab_id: "" }).catch(() => {});
  }

  start() {
    clearInterval(this.repost);
    if (this.gone) return;
    this.closed = false;
    this.sent = "";
    this.repost = setInterval(() => this.send(true), REPOST_MS);
    this.post();
  }

  private post() {
    if (this.closed || !this.tab || this.timer !== undefined) return;
    const wait = Math.max(0, this.last + THROTTLE_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.send(false);
    }, wait);
  }

  private send(again: boolean) {
    if (this.closed || !this.tab) return;
    const body: PresenceBody = { client_id: this.id, tab_id: this.tab, ...this.where };
    const key = JSON.stringify(body);
    if (!again && key === this.sent) return;
    this.sent = key;
    this.last = Date.now();
    api
      .presence(this.noteId, body)
      .then((p) => {
        if (!this.closed && p && Array.isArray(p.peers)) this.onPeers(p);
      })
      .catch((e: unknown) => {
        if (e instanceof ApiError && (e.status === 404 || e.status === 403 || e.status === 410)) {
          this.gone = true;
          this.closed = true;
          clearTimeout(this.timer);
          clearInterval(this.repost);
          return;
        }
        // Presence is best effort: the next change or repost says it again.
        this.sent = "";
      });
  }
}

function parse(data: string): LivePresence | null {
  try {
    const v = JSON.parse(data) as LivePresence;
    return v && Array.isArray(v.peers) ? v : null;
  } catch {
    return null;
  }
}

// validColor is a peer's colour as the page uses it in CSS (#rrggbb), or
// a grey.
export function validColor(c: string): string {
  return /^#[0-9a-fA-F]{6}$/.test(c) ? c.toLowerCase() : "#6b7280";
}

// inkOn is the text colour readable on a peer's colour: black or white.
export function inkOn(color: string): string {
  const c = validColor(color);
  const ch = [1, 3, 5].map((i) => {
    const v = parseInt(c.slice(i, i + 2), 16) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  const lum = 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  return lum > 0.179 ? "#000000" : "#ffffff";
}

// usePresence is the page's presence in the Note noteId, and the others
// there (every client but this page's, the same person's other pages
// included).
export function usePresence(noteId: string): { presence: Presence; peers: Peer[] } {
  const [peers, setPeers] = useState<Peer[]>([]);
  const [presence, setPresence] = useState(() => new Presence(noteId));
  if (presence.noteId !== noteId) setPresence(new Presence(noteId));
  useEffect(() => {
    const take = (lp: LivePresence) => {
      if (lp.note_id && lp.note_id !== noteId) return;
      setPeers(lp.peers.filter((x) => x.client_id !== presence.id));
    };
    presence.listen(take);
    const off = pageLive().subscribe(noteTopic(noteId), (m: FromHub) => {
      if (m.t !== "presence") return;
      const lp = parse(m.data);
      if (lp) take(lp);
    });
    presence.start();
    const onHide = () => presence.leave();
    const onShow = (e: PageTransitionEvent) => {
      if (e.persisted) presence.start();
    };
    addEventListener("pagehide", onHide);
    addEventListener("pageshow", onShow);
    return () => {
      off();
      removeEventListener("pagehide", onHide);
      removeEventListener("pageshow", onShow);
      presence.leave();
      setPeers([]);
    };
  }, [noteId, presence]);
  return { presence, peers };
}
