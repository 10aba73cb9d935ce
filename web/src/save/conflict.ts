import type { ApiError, VersionEntry } from "../api";

// Conflict is a write refused because the Note moved on since the version
// it was based on (412): the version the server has now, the versions
// written since with who wrote each and what each changed.
export type Conflict = {
  currentVersion?: number;
  changes: VersionEntry[];
  // touches says whether tab was changed since (true when the server did
  // not say which tabs changed).
  touches: (tab: string) => boolean;
  // who names who changed tab (or the Note), each once: "Claude and you,
  // elsewhere" ("" when the server did not say).
  who: (me: string, tab?: string) => string;
};

export function conflictOf(e: ApiError): Conflict {
  const changes = e.changes;
  const cur = Number(e.currentVersion);
  const of = (tab: string) => changes.filter((c) => !c.changed || c.changed.length === 0 || c.changed.includes(tab));
  return {
    currentVersion: Number.isFinite(cur) && cur > 0 ? cur : undefined,
    changes,
    touches: (tab) => changes.length === 0 || of(tab).length > 0,
    who: (me, tab) => {
      const mine = tab ? of(tab) : [];
      return writers(mine.length ? mine : changes, me);
    },
  };
}

// writers names who wrote the changes, each once: "Claude and you".
export function writers(changes: VersionEntry[], me: string): string {
  const names: string[] = [];
  for (const c of changes) {
    let n = c.who?.name || (c.who?.kind === "person" ? "a person" : "an agent");
    if (n === me) n = "you, elsewhere";
    if (!names.includes(n)) names.push(n);
  }
  if (names.length <= 1) return names[0] ?? "";
  return names.slice(0, -1).join(", ") + " and " + names[names.length - 1];
}

// capital starts a sentence with s.
export const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
