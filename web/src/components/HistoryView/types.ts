import type { Actor, TabRef, VersionEntry } from "../../api";

export type HistoryProps = {
  noteId: string;
  tabs: TabRef[]; // the strip now, to name changed tabs
  me: string;
  selected: string; // the version open ("" none)
  onSelect: (version: number) => void;
  onBack: () => void;
  onRestored: (version: number) => void;
};

// kindText says what kind of change a version was.
const kindText: Record<string, string> = {
  note_created: "Created the Note",
  note_renamed: "Renamed the Note",
  access_changed: "Changed connected access",
  tab_created: "Added a tab",
  tab_renamed: "Renamed a tab",
  tab_moved: "Moved a tab",
  tab_deleted: "Deleted a tab",
  tab_edited: "Edited",
  text_saved: "Edited the text",
  text_edited: "Edited the text",
  source_added: "Added a source",
  source_deleted: "Deleted a source",
  sources: "Changed the sources",
  restored: "Restored an older version",
  note_deleted: "Moved the Note to the trash",
  note_untrashed: "Restored the Note from the trash",
};

export function describeKind(kind: string): string {
  if (kindText[kind]) return kindText[kind];
  const t = kind.replace(/_/g, " ").trim();
  return t ? t.charAt(0).toUpperCase() + t.slice(1) : "Changed";
}

// whoText names who made a version: the person (you, for the person signed
// in), or the connected client or token.
export function whoText(w: Actor, me: string): string {
  const name = w.name || (w.kind === "person" ? "A person" : "An agent");
  if (w.kind === "person") return name === me ? `${name} (you)` : name;
  if (w.kind === "client") return `${name} (connected client)`;
  if (w.kind === "token") return `${name} (access token)`;
  return name;
}

// goneTab names a tab no longer in the strip by its type (a tab ID starts
// with it: "slides-2-…").
export function goneTab(id: string): string {
  const type = id.split("-")[0];
  const names: Record<string, string> = { slides: "a Slides tab", sheet: "a Sheet tab" };
  return (names[type] ?? "a tab") + " since deleted";
}


export function sizeText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

// GROUP_WINDOW_MS is how close in time a writer's versions follow each
// other to be one entry of the history.
export const GROUP_WINDOW_MS = 5 * 60 * 1000;

// VersionGroup is one entry of the history: consecutive versions by one
// writer, each within GROUP_WINDOW_MS of the next, newest first.
export type VersionGroup = {
  key: number; // its oldest version: stays while newer versions join it
  versions: VersionEntry[];
  newest: VersionEntry;
  oldest: VersionEntry;
  changed: string[]; // the tabs any of them changed, each once
};

// alone are the kinds of change that always make an entry of their own.
const alone = new Set(["restored", "note_created", "note_deleted", "note_untrashed"]);

const writer = (v: VersionEntry) => v.who.kind + ":" + v.who.id;

// groupVersions groups versions, newest first, into the history's entries:
// a person typing for a few minutes is one entry, not one per pause; a
// restore and the Note's creation stay entries of their own.
export function groupVersions(versions: VersionEntry[], window = GROUP_WINDOW_MS): VersionGroup[] {
  const out: VersionGroup[] = [];
  for (const v of versions) {
    const g = out[out.length - 1];
    const joins =
      g !== undefined &&
      v.version > 1 &&
      !alone.has(v.kind) &&
      !alone.has(g.oldest.kind) &&
      writer(v) === writer(g.oldest) &&
      g.oldest.version === v.version + 1 &&
      Date.parse(g.oldest.at) - Date.parse(v.at) <= window;
    if (joins) {
      g.versions.push(v);
      g.oldest = v;
      g.key = v.version;
      for (const id of v.changed) if (!g.changed.includes(id)) g.changed.push(id);
    } else {
      out.push({ key: v.version, versions: [v], newest: v, oldest: v, changed: [...v.changed] });
    }
  }
  return out;
}

// clock is a time of day, "10:06".
export function clock(iso: string): string {
  return new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
}

// spanText is when a group's versions were made: "10:02–10:06", or one
// time for one version (or several in the same minute).
export function spanText(g: VersionGroup): string {
  const a = clock(g.oldest.at);
  const b = clock(g.newest.at);
  const day = new Date(g.newest.at).toDateString() === new Date().toDateString() ? "" : new Date(g.newest.at).toLocaleDateString(undefined, { month: "short", day: "numeric" }) + ", ";
  return day + (a === b ? b : `${a}–${b}`);
}

// whatText says what a group did: its kind when all its versions are of
// one kind, "Edited" when they differ.
export function whatText(g: VersionGroup): string {
  const kinds = new Set(g.versions.map((v) => v.kind));
  return kinds.size === 1 ? describeKind(g.newest.kind) : "Edited";
}
