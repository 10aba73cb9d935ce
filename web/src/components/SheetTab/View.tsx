import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { Notice } from "../../ui";
import type { TabProps } from "../tab";
import { SheetGrid } from "./SheetGrid";
import { useSheet } from "./useSheet";
import { MAX_NAME } from "./types";

// The sheet tab: its sheets as sub-tabs (add, rename), and the selected
// sheet in a virtualized grid. Edits and pastes are guarded writes of at
// most 100 × 100 cells; what someone else writes shows as it lands.
export function SheetTab(p: TabProps) {
  const { noteId, content, onVersion } = p;
  const s = useSheet(p);
  const { sheets, sel, busy, renaming } = s;
  if (!sel) {
    return (
      <div className="empty">
        <p>This sheet tab has no sheets yet. Add one to start typing.</p>
        <button type="button" className="primary" onClick={s.addSheet} disabled={busy}>
          Add sheet
        </button>
      </div>
    );
  }

  const onKeyTabs = (e: KeyboardEvent) => {
    if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
    const i = sheets.findIndex((x) => x.sheet_id === sel.sheet_id);
    const j = (i + (e.key === "ArrowRight" ? 1 : sheets.length - 1)) % sheets.length;
    s.setCurrent(sheets[j].sheet_id);
    e.preventDefault();
    requestAnimationFrame(() => document.getElementById("sheet-tab-" + sheets[j].sheet_id)?.focus());
  };

  return (
    <div className="sheet-tab">
      <div className="sheet-bar">
        <div className="sheet-tabs" role="tablist" aria-label="Sheets" onKeyDown={onKeyTabs}>
          {sheets.map((x) => (
            <button
              key={x.sheet_id}
              id={"sheet-tab-" + x.sheet_id}
              type="button"
              role="tab"
              aria-selected={x.sheet_id === sel.sheet_id}
              aria-controls="sheet-panel"
              tabIndex={x.sheet_id === sel.sheet_id ? 0 : -1}
              className="sheet-subtab"
              onClick={() => s.setCurrent(x.sheet_id)}
              onDoubleClick={() => s.setRenaming(x.sheet_id)}
            >
              {x.name}
            </button>
          ))}
        </div>
        <div className="sheet-actions">
          <button type="button" className="secondary small" onClick={s.addSheet} disabled={busy}>
            Add sheet
          </button>
          <button type="button" className="secondary small" onClick={() => s.setRenaming(sel.sheet_id)} disabled={busy || renaming !== null}>
            Rename sheet
          </button>
        </div>
      </div>
      {renaming === sel.sheet_id && <RenameForm name={sel.name} busy={busy} onSave={(n) => s.rename(sel.sheet_id, n)} onCancel={() => s.setRenaming(null)} />}
      <Notice text={s.notice} onDismiss={() => s.setNotice("")} role="status" className="sheet-notice" />
      <p className="muted sheet-hint">Click a cell and type, or paste a range from a spreadsheet. A value starting with = is a formula, such as =SUM(B2:B9).</p>
      <div id="sheet-panel" role="tabpanel" aria-labelledby={"sheet-tab-" + sel.sheet_id}>
        <SheetGrid
          key={sel.sheet_id}
          noteId={noteId}
          tabId={content.tab_id}
          sheetId={sel.sheet_id}
          sheetName={sel.name}
          size={{ rows: sel.rows ?? 0, cols: sel.cols ?? 0 }}
          writer={s.writer}
          reload={s.reload}
          reloadWho={s.reloadWho}
          onVersion={onVersion}
          onNotice={s.setNotice}
          peers={p.peers}
          presence={p.presence}
          widths={sel.widths ?? {}}
          formats={sel.formats ?? []}
          onWidths={(w) => void s.layout(sel.sheet_id, { widths: w })}
          onFormat={(f) => void s.layout(sel.sheet_id, { format: f })}
          target={p.target && p.target.row !== undefined && (!p.target.sheet || p.target.sheet === sel.sheet_id) ? p.target : null}
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
