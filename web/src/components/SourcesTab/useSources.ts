import { useCallback, useEffect, useState } from "react";
import { api, ApiError, errorText, type Source } from "../../api";
import { useFollowedTab } from "../useFollowedTab";
import { useSave, type Conflict } from "../../save";
import type { TabProps } from "../tab";

export type FieldErrors = { url: string; title: string };

// useSources is the Sources tab's state: the sources (the tab's query,
// read again when a write changes them), and adding and deleting one
// through the Note's save path, on the newest version of the Note seen.
export function useSources({ noteId, content, me, remote, onVersion }: TabProps) {
  const tabId = content.tab_id;
  const { saver } = useSave({ version: content.version, onVersion });
  // Any write to the Note moves its version; a write to the sources reads them again.
  const { q, reload } = useFollowedTab({
    noteId,
    content,
    remote,
    touches: (r) => r.changed.includes(tabId) || r.changed.includes("sources"),
    seen: useCallback((v: number) => saver.seen(v), [saver]),
  });
  const sources: Source[] = q.data.sources ?? [];
  const [notice, setNotice] = useState("");
  const [busy, setBusy] = useState(false);

  useEffect(() => saver.seen(q.data.version), [saver, q.data.version]);

  const stale = (c: Conflict, what: string) => {
    setNotice(`The Note changed meanwhile (by ${c.who(me) || "someone"}), so ${what} was not done. The sources are up to date now: try again.`);
    void reload();
  };

  // add answers the field errors the server found (none: added).
  const add = async (url: string, title: string): Promise<FieldErrors | null> => {
    setBusy(true);
    setNotice("");
    const out = await saver.run({
      send: (pre) => api.addSource({ id: noteId }, { url, title }, pre),
      retrying: (e) => setNotice("Not saved yet: " + e.message + " Foundry tries again in a moment."),
    });
    setBusy(false);
    if (out.ok) {
      setNotice("");
      void reload();
      return null;
    }
    if ("conflict" in out) {
      stale(out.conflict, "adding the source");
      return null;
    }
    const e = out.error;
    if (e instanceof ApiError && e.status === 409) return { url: "This source is already attached", title: "" };
    if (e instanceof ApiError && e.field === "title") return { url: "", title: e.message };
    if (e instanceof ApiError && e.field === "url") return { url: e.message, title: "" };
    setNotice(errorText(e));
    return null;
  };

  const remove = async (s: Source) => {
    setBusy(true);
    setNotice("");
    const out = await saver.run({ send: (pre) => api.deleteSource({ id: noteId }, s.source_id, pre) });
    setBusy(false);
    if (out.ok) void reload();
    else if ("conflict" in out) stale(out.conflict, "deleting the source");
    else setNotice(errorText(out.error));
  };

  return {
    sources,
    // The newest version of the Note this tab has seen.
    version: Math.max(q.data.version, remote?.version ?? 0),
    notice,
    busy,
    loadError: q.isError ? errorText(q.error) : "",
    reload: () => void reload(),
    add,
    remove,
  };
}
