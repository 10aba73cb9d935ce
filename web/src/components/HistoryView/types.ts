import type { Actor, TabRef } from "../../api";

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
