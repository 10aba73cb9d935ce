import type { TabRef } from "../../api";

export type NotePageProps = { id: string; me: string; meId: string };

// StripWrites are the tab strip's changes, each a guarded write.
export type StripWrites = {
  busy: boolean;
  addTab: (type: "slides" | "sheet") => Promise<void>;
  move: (t: TabRef, to: number) => Promise<void>;
  rename: (t: TabRef, label: string) => Promise<boolean>;
  remove: (t: TabRef) => Promise<boolean>;
  importSheet: (file: File) => Promise<void>; // an .xlsx or .csv file as a new sheet tab
};

// An item with href is a link (a download: the browser saves what it
// answers, as an <a download>); any other item runs run.
export type MenuItem = { key: string; text: string; run: () => void; disabled?: boolean; danger?: boolean; href?: string };

// Fixed tabs are in every Note: they cannot be deleted.
export const fixedTypes = ["markdown", "files", "sources"];

// MaxLabel is the server's rule for a label, in characters. maxLength
// counts UTF-16 units (an emoji is two), so the field holds twice as many
// and the server's refusal of more says why.
export const MaxLabel = 100;
