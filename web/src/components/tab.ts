import type { Peer, TabContent } from "../api";
import type { Presence, RemoteChange } from "../live";
import type { SaveState } from "../save";
import type { Target } from "./target";

// The contract between the Note page and the view of each tab kind (a
// module of its own, which both import, so that neither imports the other
// for it).

// TabProps is what every tab's view gets from the Note page.
export type TabProps = {
  noteId: string;
  content: TabContent; // the tab as the server had it when the view opened
  me: string; // the signed-in person's name, as changes name them
  meId: string; // the signed-in person's user ID
  // remote is the newest write the page learned of (null: none yet). A
  // view whose tab is in remote.changed reloads what changed, without
  // losing what the person has not saved.
  remote: RemoteChange | null;
  peers: Peer[]; // the others in the Note (presence), but this page
  presence: Presence | null; // where this page says the person is
  onVersion: (v: number) => void; // the Note's version the view last saw
  onState: (s: SaveState) => void; // the saving state the header shows
  // target is the place in this tab the address points at (a search
  // hit): the view shows it and puts the focus there, once per key.
  target: Target | null;
};

// shownSheet is the sheet each sheet tab of this page shows, by tab ID:
// the tab's menu downloads that one as .csv.
export const shownSheet = new Map<string, string>();
