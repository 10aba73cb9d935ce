import type { Slide } from "../../api";
import { textFields, type Clash, type Drafts, type Lost, type TextField } from "./types";

// The person's unsaved slide text, kept in the browser until the server
// has it: it survives a reload and a browser restart. Next to each field's
// text is the server's text it was started from, so that on the way back
// a field someone else changed meanwhile is shown to choose, not saved
// over theirs.

type Stored = { drafts: Drafts; bases: Drafts; clashes: Record<string, Clash>; lost?: Lost[]; at: string };

const key = (noteId: string, tabId: string) => `foundry.slides-draft:${noteId}:${tabId}`;

export function keepDrafts(noteId: string, tabId: string, drafts: Drafts, base: Slide[], clashes: Record<string, Clash>, lost: Lost[]) {
  try {
    if (Object.keys(drafts).length === 0 && lost.length === 0) {
      localStorage.removeItem(key(noteId, tabId));
      return;
    }
    const bases: Drafts = {};
    for (const id of Object.keys(drafts)) {
      const s = base.find((x) => x.slide_id === id);
      if (!s) continue;
      bases[id] = {};
      for (const f of textFields) if (drafts[id][f] !== undefined) bases[id][f] = s[f];
    }
    const v: Stored = { drafts, bases, clashes, lost, at: new Date().toISOString() };
    localStorage.setItem(key(noteId, tabId), JSON.stringify(v));
  } catch {
    // storage full or off: the text is still on the page
  }
}

// restoreDrafts is what a kept draft means against the server's deck now:
// the text to save, the fields to choose, the text of slides now gone.
export function restoreDrafts(noteId: string, tabId: string, deck: Slide[]): { drafts: Drafts; clashes: Record<string, Clash>; lost: Lost[] } {
  const out = { drafts: {} as Drafts, clashes: {} as Record<string, Clash>, lost: [] as Lost[] };
  let st: Stored;
  try {
    const raw = localStorage.getItem(key(noteId, tabId));
    if (!raw) return out;
    st = JSON.parse(raw);
    if (!st || typeof st.drafts !== "object" || typeof st.bases !== "object") return out;
  } catch {
    return out;
  }
  if (Array.isArray(st.lost)) {
    for (const l of st.lost) {
      if (l && typeof l.title === "string" && typeof l.body === "string" && typeof l.notes === "string") out.lost.push({ title: l.title, body: l.body, notes: l.notes, who: String(l.who || "Someone") });
    }
  }
  for (const [id, d] of Object.entries(st.drafts ?? {})) {
    if (!d || typeof d !== "object") continue;
    const s = deck.find((x) => x.slide_id === id);
    if (!s) {
      const text = (f: TextField) => (typeof d[f] === "string" ? (d[f] as string) : "");
      if (text("title") || text("body") || text("notes")) out.lost.push({ title: text("title"), body: text("body"), notes: text("notes"), who: "Someone" });
      continue;
    }
    for (const f of textFields) {
      const m = d[f];
      if (typeof m !== "string" || m === s[f]) continue;
      const was = st.clashes?.[id + ":" + f];
      const b = st.bases?.[id]?.[f];
      if (was && typeof was.theirs === "string" && was.theirs === s[f]) out.clashes[id + ":" + f] = { theirs: s[f], who: String(was.who || "Someone") };
      else if (b !== s[f]) out.clashes[id + ":" + f] = { theirs: s[f], who: "Someone" };
      out.drafts[id] = { ...out.drafts[id], [f]: m };
    }
  }
  return out;
}
