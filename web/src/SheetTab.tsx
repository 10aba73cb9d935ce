import { useEffect, useRef, useState } from "react";
import { Notice } from "./ui";
import { call } from "./api";
import type { TabProps } from "./tabs";
import { SheetGrid, type GridCells } from "./sheet/SheetGrid";
import { Writer } from "./sheet/writer";
import "./sheet.css";

// The sheet tab: its sheets as sub-tabs (add, rename), and the selected
// sheet in a virtualized grid. Edits and pastes are guarded writes of at
// most 100 × 100 cells; what someone else writes shows as it lands.

type SheetRef = { sheet_id: string; name: string; rows?: number; cols?: number };
// OutlineSheet is a sheet as GET …/tabs/{tab_id}?cells=none gives it: its
// size, and its cells only from a server that does not know that read.
type OutlineSheet = { sheet_id: string; name: string; cells?: unknown[][]; rows?: number; cols?: number };
type Outline = { version: number; sheets?: OutlineSheet[] };

const outlineOf = (s: OutlineSheet): SheetRef => ({ sheet_id: s.sheet_id, name: s.name, rows: s.rows, cols: s.cols });
type SheetWritten = { version: number; sheet_id: string; name: string };

const MAX_SHEETS = 20;
const MAX_NAME = 100;

export function SheetTab({ noteId, content, remote, onVersion, onState }: TabProps) {
  const [sheets, setSheets] = useState<SheetRef[]>(() => ((content.sheets ?? []) as OutlineSheet[]).map(outlineOf));
  const [current, setCurrent] = useState<string>(() => content.sheets?.[0]?.sheet_id ?? "");
  const [notice, setNotice] = useState("");
  const [renaming, setRenaming] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [reload, setReload] = useState(0);
  const seeded = useRef(new Set<string>());
  const seen = useRef(remote?.seq ?? 0);
  const hooks = useRef({ onVersion, onState, onNotice: setNotice });
  hooks.current = { onVersion, onState, onNotice: setNotice };
  const writer = useRef<Writer | null>(null);
  if (!writer.current) {
    writer.current = new Writer(noteId, content.tab_id, content.version, {
      onVersion: (v) => hooks.current.onVersion(v),
      onState: (s) => hooks.current.onState(s),
      onNotice: (t) => hooks.current.onNotice(t),
    });
  }
  // The writer outlives the view: what the person typed is saved even
  // when they leave the tab before it is.
  useEffect(() => {
    onVersion(content.version);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const tabPath = "/api/notes/" + encodeURIComponent(noteId) + "/tabs/" + encodeURIComponent(content.tab_id);
  const base = tabPath + "/sheets";

  // Someone else wrote this tab: the grid reads what is in view again, and
  // the sheets' names and sizes are read again (without their cells), so a
  // sheet an agent added or renamed shows at once.
  useEffect(() => {
    if (!remote || remote.seq <= seen.current) return;
    seen.current = remote.seq;
    if (remote.mine || !remote.changed.includes(content.tab_id)) return;
    setReload((n) => n + 1);
    const ctl = new AbortController();
    call<Outline>(tabPath + "?cells=none", { signal: ctl.signal })
      .then((o) => {
        if (!o.sheets) return;
        const got = o.sheets.map(outlineOf);
        setSheets((xs) => {
          // The order the server gives; a sheet it no longer has is gone.
          const same = got.length === xs.length && got.every((g, i) => g.sheet_id === xs[i].sheet_id && g.name === xs[i].name);
          return same ? xs : got;
        });
      })
      .catch(() => {});
    return () => ctl.abort();
  }, [remote, content.tab_id, tabPath]);

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
      const res = await writer.current!.op((v, key) => call<SheetWritten>(base, { method: "POST", body: { name: "Sheet" + n }, ifMatch: v, idempotencyKey: key }));
      setSheets((xs) => [...xs, { sheet_id: res.sheet_id, name: res.name }]);
      setCurrent(res.sheet_id);
      setNotice("");
    } catch (e) {
      setNotice(e instanceof Error ? e.message : String(e));
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
      const res = await writer.current!.op((v, key) =>
        call<SheetWritten>(base + "/" + encodeURIComponent(id), { method: "PATCH", body: { name: clean }, ifMatch: v, idempotencyKey: key }),
      );
      setSheets((xs) => xs.map((s) => (s.sheet_id === id ? { ...s, name: res.name } : s)));
      setRenaming(null);
      setNotice("");
    } catch (e) {
      setNotice(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  const sel = sheets.find((s) => s.sheet_id === current) ?? sheets[0];
  const selId = sel?.sheet_id ?? "";
  // A sheet takes its cells from the tab as read only the first time it
  // is shown (the grid keeps them from then on).
  useEffect(() => {
    if (selId) seeded.current.add(selId);
  }, [selId]);
  if (!sel) {
    return (
      <div className="empty">
        <p>This sheet tab has no sheets yet. Add one to start typing.</p>
        <button type="button" className="primary" onClick={addSheet} disabled={busy}>
          Add sheet
        </button>
      </div>
    );
  }

  // The sheet as the tab was read, the first time it is shown; after that
  // (or after someone else wrote) its cells come in blocks.
  // A sheet read with its cells (an older server) seeds the grid with them.
  let seed: GridCells;
  const read = (content.sheets as OutlineSheet[] | undefined)?.find((s) => s.sheet_id === sel.sheet_id);
  const cells = read?.cells ?? [];
  const width = cells.reduce((m, r) => Math.max(m, r?.length ?? 0), 0);
  const rows = Math.max(sel.rows ?? 0, cells.length);
  const cols = Math.max(sel.cols ?? 0, width);
  if (read && cells.length > 0 && !seeded.current.has(sel.sheet_id) && reload === 0) {
    seed = { rows, cols, cells };
  } else {
    seed = { rows, cols };
  }

  const onKeyTabs = (e: React.KeyboardEvent) => {
    if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
    const i = sheets.findIndex((s) => s.sheet_id === sel.sheet_id);
    const j = (i + (e.key === "ArrowRight" ? 1 : sheets.length - 1)) % sheets.length;
    setCurrent(sheets[j].sheet_id);
    e.preventDefault();
    requestAnimationFrame(() => document.getElementById("sheet-tab-" + sheets[j].sheet_id)?.focus());
  };

  return (
    <div className="sheet-tab">
      <div className="sheet-bar">
        <div className="sheet-tabs" role="tablist" aria-label="Sheets" onKeyDown={onKeyTabs}>
          {sheets.map((s) => (
            <button
              key={s.sheet_id}
              id={"sheet-tab-" + s.sheet_id}
              type="button"
              role="tab"
              aria-selected={s.sheet_id === sel.sheet_id}
              aria-controls="sheet-panel"
              tabIndex={s.sheet_id === sel.sheet_id ? 0 : -1}
              className="sheet-subtab"
              onClick={() => setCurrent(s.sheet_id)}
              onDoubleClick={() => setRenaming(s.sheet_id)}
            >
              {s.name}
            </button>
          ))}
        </div>
        <div className="sheet-actions">
          <button type="button" className="secondary small" onClick={addSheet} disabled={busy}>
            Add sheet
          </button>
          <button type="button" className="secondary small" onClick={() => setRenaming(sel.sheet_id)} disabled={busy || renaming !== null}>
            Rename sheet
          </button>
        </div>
      </div>
      {renaming === sel.sheet_id && <RenameForm name={sel.name} busy={busy} onSave={(n) => rename(sel.sheet_id, n)} onCancel={() => setRenaming(null)} />}
      <Notice text={notice} onDismiss={() => setNotice("")} role="status" className="sheet-notice" />
      <p className="muted sheet-hint">Click a cell and type, or paste a range from a spreadsheet. Numbers, TRUE and FALSE are kept as such.</p>
      <div id="sheet-panel" role="tabpanel" aria-labelledby={"sheet-tab-" + sel.sheet_id}>
        <SheetGrid
          key={sel.sheet_id}
          noteId={noteId}
          tabId={content.tab_id}
          sheetId={sel.sheet_id}
          sheetName={sel.name}
          seed={seed}
          seedVersion={content.version}
          writer={writer.current!}
          reload={reload}
          onVersion={onVersion}
          onNotice={setNotice}
        />
      </div>
    </div>
  );
}

function RenameForm(p: { name: string; busy: boolean; onSave: (name: string) => void; onCancel: () => void }) {
  const [name, setName] = useState(p.name);
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  return (
    <form
      className="sheet-rename"
      onSubmit={(e) => {
        e.preventDefault();
        p.onSave(name);
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") p.onCancel();
      }}
    >
      <label className="field">
        <span>Sheet name</span>
        <input ref={ref} value={name} maxLength={2 * MAX_NAME /* UTF-16 units: an emoji is two */} onChange={(e) => setName(e.target.value)} name="sheet-name" autoComplete="off" />
      </label>
      <button type="submit" className="primary small" disabled={p.busy}>
        Save
      </button>
      <button type="button" className="secondary small" onClick={p.onCancel}>
        Cancel
      </button>
    </form>
  );
}
