// A person's unsaved text, kept in the browser until the server has it:
// it survives a reload and a browser restart. A live editor keeps its
// unconfirmed change sets with it (updates, made by its client on base at
// rev): restored, they are pushed again as they were, so that the ones
// the server took before the page went are known as its own and not
// applied twice.

export type Draft = {
  text: string; // the person's text
  base: string; // the server's text it was started from
  version: number; // the Note's version that base is
  at: string; // when it was last typed, RFC 3339
  rev?: number; // the text's revision that base is
  client?: string; // the editor's collab client ID
  updates?: unknown[]; // its unconfirmed change sets (ChangeSet JSON), in order
};

const key = (noteId: string, tabId: string) => `foundry.draft:${noteId}:${tabId}`;

export function loadDraft(noteId: string, tabId: string): Draft | null {
  try {
    const raw = localStorage.getItem(key(noteId, tabId));
    if (!raw) return null;
    const d = JSON.parse(raw);
    if (typeof d?.text !== "string" || typeof d?.base !== "string" || typeof d?.version !== "number") return null;
    const out: Draft = { text: d.text, base: d.base, version: d.version, at: typeof d.at === "string" ? d.at : "" };
    if (typeof d.rev === "number" && typeof d.client === "string" && Array.isArray(d.updates)) {
      out.rev = d.rev;
      out.client = d.client;
      out.updates = d.updates as unknown[];
    }
    return out;
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
