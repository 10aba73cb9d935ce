import type { Peer } from "../../api";
import type { Presence, RemoteChange } from "../../live";
import type { SaveState } from "../../save";
import type { Target } from "../target";

export type MarkdownProps = {
  noteId: string;
  tabId: string;
  label: string;
  text: string; // the server's text
  version: number; // the Note's version that text is
  textRev: number; // the text's revision that text is
  me: string;
  peers: Peer[]; // the others in the Note
  presence: Presence | null; // where this page says the person is
  remote?: RemoteChange | null; // the newest write the page learned of
  target?: Target | null; // the place the address points at: its line is shown, with the cursor on it
  onVersion: (v: number) => void;
  onState: (s: SaveState) => void;
};

// TextConflict is text of the person's that could not be put on the
// server's text as it is: the server's text (at version and text
// revision rev) no longer says what changed since the person's base (a
// resync: more changes were made meanwhile than the server keeps, or a
// draft from before live editing), and the two changed the same lines.
// who wrote theirs, as far as the page knows.
export type TextConflict = { theirs: string; version: number; rev: number; who: string; base: string };

// Base is the server's text the editor's text was started from, and the
// Note's version that text is.
export type Base = { text: string; version: number };
