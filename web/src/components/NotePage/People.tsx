import type { Peer, TabRef } from "../../api";
import { inkOn, validColor } from "../../live";

// People is who else has the Note open (presence): one coloured circle
// with the initials of each person, saying in which tab they are.

function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return "?";
  const first = [...words[0]][0] ?? "";
  const last = words.length > 1 ? ([...words[words.length - 1]][0] ?? "") : "";
  return (first + last).toUpperCase();
}

export function People({ peers, tabs, meId }: { peers: Peer[]; tabs: TabRef[]; meId: string }) {
  // One circle a person (their newest tab wins when they have the Note
  // open twice); the person signed in here is not listed.
  const byPerson = new Map<string, Peer>();
  for (const p of peers) {
    if (!p.tab_id || p.person?.id === meId) continue;
    byPerson.set(p.person?.id || p.client_id, p);
  }
  if (byPerson.size === 0) return null;
  const tabName = (id: string) => {
    const t = tabs.find((x) => x.tab_id === id);
    return t ? t.label || t.type : "another tab";
  };
  return (
    <ul className="peers" aria-label="Also in this Note" id="note-peers">
      {[...byPerson.values()].map((p) => {
        const name = p.person?.name || "Someone";
        const where = `${name}, in ${tabName(p.tab_id)}`;
        const c = validColor(p.color);
        return (
          <li key={p.person?.id || p.client_id} className="peer" title={where} data-person={name} data-tab-id={p.tab_id}>
            <span className="peer-avatar" aria-hidden="true" style={{ backgroundColor: c, color: inkOn(c) }}>
              {initials(name)}
            </span>
            <span className="sr-only">{where}</span>
          </li>
        );
      })}
    </ul>
  );
}
