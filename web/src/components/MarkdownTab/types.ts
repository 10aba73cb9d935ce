import type { RemoteChange } from "../../live";
import type { SaveState } from "../../save";

export type MarkdownProps = {
  noteId: string;
  tabId: string;
  label: string;
  text: string; // the server's text
  version: number; // the Note's version that text is
  me: string;
  remote?: RemoteChange | null; // the newest write the page learned of
  onVersion: (v: number) => void;
  onState: (s: SaveState) => void;
};

// TextConflict is a save refused because someone wrote this tab in
// between: their text (at version), who wrote it, and the text both
// started from.
export type TextConflict = { theirs: string; version: number; who: string; base: string };

// Base is the server's text the editor's text was started from, and the
// Note's version that text is.
export type Base = { text: string; version: number };
