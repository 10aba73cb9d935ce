// SaveState is what the Note's header says of the open tab's changes.
export type SaveState = "saved" | "saving" | "unsaved" | "offline" | "conflict" | "error";
