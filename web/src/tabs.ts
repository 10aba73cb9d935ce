import type { TabContent } from "./api";
import type { SaveState } from "./MarkdownTab";

// RemoteChange is one write to the open Note that the page learned of from
// the live event stream (GET /api/events): its version, the tab IDs it
// changed, and who made it. seq grows with every change the page learns
// of, so that a tab can tell a new change from one it has handled.
export type RemoteChange = {
  seq: number;
  version: number;
  kind: string;
  changed: string[];
  who: { kind: string; id: string; name: string };
  mine: boolean; // written by the person signed in here (this page or another)
};

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
  onVersion: (v: number) => void; // the Note's version the view last saw
  onState: (s: SaveState) => void; // the saving state the header shows
};
