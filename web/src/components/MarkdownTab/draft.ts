// A person's unsaved text, kept in the browser until the server has it:
// it survives a reload and a browser restart.

export type Draft = {
  text: string; // the person's text
  base: string; // the server's text it was started from
  version: number; // the Note's version that base is
  at: string; // when it was last typed, RFC 3339
};

const key = (noteId: string, tabId: string) => `foundry.draft:${noteId}:${tabId}`;

export function loadDraft(noteId: string, tabId: string): Draft | null {
  try {
    const raw = localStorage.getItem(key(noteId, tabId));
    if (!raw) return null;
    const d = JSON.parse(raw);
    if (typeof d?.text !== "string" || typeof d?.base !== "string" || typeof d?.version !== "number") return null;
    return { text: d.text, base: d.base, version: d.version, at: typeof d.at === "string" ? d.at : "" };
  } catch {
    return null;
  }
}

// saveDraft reports whether the browser kept it (storage may be full or off).
export function saveDraft(noteId: string, tabId: string, d: Draft): boolean {
  try {
    localStorage.setItem(key(noteId, tabId), JSON.stringify(d));
    return true;
  } catch {
    return false;
  }
}

export function clearDraft(noteId: string, tabId: string) {
  try {
    localStorage.removeItem(key(noteId, tabId));
  } catch {
    // nothing kept, nothing to clear
  }
}
