import { useEffect, useState } from "react";
import { api, errorText, keys, queryClient, type LayoutChange, type TabContent } from "../../api";
import type { RemoteChange } from "../../live";
import { useFollowedTab } from "../useFollowedTab";
import { useSave } from "../../save";
import { shownSheet, type TabProps } from "../tab";
import { Writer } from "./writer";
import { MAX_SHEETS, refOf } from "./types";
import type { SheetLayout } from "./types";

// useSheet is a sheet tab's state: its sheets (the tab's outline, a query
// read again when someone else changes the tab), the one shown, and the
// Writer that saves the edits through the Note's save path. The writer
// outlives the view: what the person typed is saved even when they leave
// the tab before it is.
export function useSheet({ noteId, content, remote, onVersion, onState, target }: TabProps) {
  const tabId = content.tab_id;
  // Someone else wrote this tab: the grid reads what is in view again (it
  // hears remote itself), and the sheets' names and sizes are read again
  // (without their cells), so a sheet an agent added or renamed shows at
  // once.
  const touches = (r: RemoteChange) => !r.mine && r.changed.includes(tabId);
  const { q: outline } = useFollowedTab({ noteId, content, remote, touches });
  const sheets = (outline.data.sheets ?? []).map(refOf);
  const [current, setCurrent] = useState<string>(() => target?.sheet || content.sheets?.[0]?.sheet_id || "");
  // The address points at a cell of another sheet (a search hit): that
  // sheet is shown.
  const [sentTo, setSentTo] = useState(target?.key ?? 0);
  if (target && target.key !== sentTo) {
    setSentTo(target.key);
    if (target.sheet) setCurrent(target.sheet);
  }
  const [notice, setNotice] = useState("");
  const [renaming, setRenaming] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const { saver } = useSave({ version: content.version, onVersion, outlive: true });
  const [writer] = useState(() => new Writer(noteId, tabId, saver, { onVersion, onState, onNotice: setNotice }));
  useEffect(() => {
    writer.listen({ onVersion, onState, onNotice: setNotice });
  }, [writer, onVersion, onState]);

  const other = remote && touches(remote) ? remote.seq : 0;
  const otherWho = remote && touches(remote) ? remote.who.name || (remote.who.kind === "person" ? "Someone" : "An agent") : "";

  const update = (f: (c: TabContent) => TabContent) => queryClient.setQueryData<TabContent>(keys.outline(noteId, tabId), (c) => (c ? f(c) : c));
  const at = { id: noteId, tab_id: tabId };

  const addSheet = async () => {
    if (sheets.length >= MAX_SHEETS) {
      setNotice(`A sheet tab holds at most ${MAX_SHEETS} sheets: add another sheet tab for more.`);
      return;
    }
    const names = new Set(sheets.map((s) => s.name));
    let n = sheets.length + 1;
    while (names.has("Sheet" + n)) n++;
    setBusy(true);
    try {
      const res = await writer.op((pre) => api.addSheet(at, "Sheet" + n, pre));
      update((c) => ({ ...c, sheets: [...(c.sheets ?? []), { sheet_id: res.sheet_id, name: res.name, cells: [], rows: 0, cols: 0 }] }));
      setCurrent(res.sheet_id);
      setNotice("");
    } catch (e) {
      setNotice(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  const rename = async (id: string, name: string) => {
    const clean = name.trim();
    if (clean === "") {
      setNotice("A sheet needs a name: type one, such as “Costs”.");
      return;
    }
    setBusy(true);
    try {
      const res = await writer.op((pre) => api.renameSheet(at, id, clean, pre));
      update((c) => ({ ...c, sheets: (c.sheets ?? []).map((s) => (s.sheet_id === id ? { ...s, name: res.name } : s)) }));
      setRenaming(null);
      setNotice("");
    } catch (e) {
      setNotice(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  // layout saves a sheet's column widths or a range's number format, and
  // keeps them in the outline (what the grid draws).
  const layout = async (id: string, change: LayoutChange) => {
    update((c) => ({
      ...c,
      sheets: (c.sheets ?? []).map((s) => {
        if (s.sheet_id !== id) return s;
        const l = s as typeof s & SheetLayout;
        const widths = { ...(l.widths ?? {}) };
        for (const [k, v] of Object.entries(change.widths ?? {})) {
          if (v > 0) widths[k] = v;
          else delete widths[k];
        }
        // A kept format joins the list; general (formats taken away) is
        // drawn by the grid at once and comes back in the next read.
        const f = change.format;
        const formats = f && f.format !== "general" ? [...(l.formats ?? []), { range: f.range, format: f.format }] : l.formats;
        return { ...s, widths, formats };
      }),
    }));
    try {
      await writer.op((pre) => api.sheetLayout(at, id, change, pre));
      if (change.format?.format === "general") void queryClient.invalidateQueries({ queryKey: keys.outline(noteId, tabId) });
    } catch (e) {
      setNotice("Not saved: " + errorText(e));
      void queryClient.invalidateQueries({ queryKey: keys.outline(noteId, tabId) });
    }
  };

  const sel = sheets.find((s) => s.sheet_id === current) ?? sheets[0];
  const selId = sel?.sheet_id ?? "";
  useEffect(() => {
    if (selId) shownSheet.set(tabId, selId);
  }, [tabId, selId]);
  return { sheets, sel, setCurrent, notice, setNotice, renaming, setRenaming, busy, addSheet, rename, layout, writer, reload: other, reloadWho: otherWho };
}
