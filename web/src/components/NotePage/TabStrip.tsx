import { useRef, useState, type DragEvent, type KeyboardEvent, type RefObject } from "react";
import { api, type Peer, type TabRef } from "../../api";
import { validColor } from "../../live";
import { Menu } from "./Menu";
import { RenameTab } from "./RenameTab";
import { fixedTypes, type MenuItem, type StripWrites } from "./types";
import { shownSheet } from "../tab";

type Props = {
  noteId: string;
  tabs: TabRef[];
  current: TabRef;
  writes: StripWrites;
  tabRefs: RefObject<Record<string, HTMLButtonElement | null>>;
  open: (t: TabRef, focus?: boolean) => void;
  onDelete: (t: TabRef) => void;
  peers: Peer[]; // the others in the Note: a dot in their colour on their tab
  meId: string;
};

// TabStrip is the Note's tabs (exact tab IDs; arrows move, Alt+Shift+arrows
// and dragging reorder, F2 and a double click rename, Delete deletes) and
// its two menus: the open tab's actions, and adding a tab.
export function TabStrip({ noteId, tabs, current, writes, tabRefs, open, onDelete, peers, meId }: Props) {
  const [renaming, setRenaming] = useState<string | null>(null);
  const [addOpen, setAddOpen] = useState(false);
  const [actionsOpen, setActionsOpen] = useState(false);
  const [dragId, setDragId] = useState<string | null>(null);
  const [dropAt, setDropAt] = useState<number | null>(null);
  const dragRef = useRef<string | null>(null);
  const { busy, move } = writes;

  const index = tabs.findIndex((t) => t.tab_id === current.tab_id);
  const onStripKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if ((e.target as HTMLElement).tagName === "INPUT") return;
    const i = index;
    if (e.altKey && e.shiftKey && (e.key === "ArrowLeft" || e.key === "ArrowRight")) {
      e.preventDefault();
      void move(current, e.key === "ArrowLeft" ? i - 1 : i + 1);
      return;
    }
    if (e.key === "F2") {
      e.preventDefault();
      setRenaming(current.tab_id);
      return;
    }
    if (e.key === "Delete" && !fixedTypes.includes(current.type)) {
      e.preventDefault();
      onDelete(current);
      return;
    }
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    let j = -1;
    if (e.key === "ArrowRight") j = (i + 1) % tabs.length;
    else if (e.key === "ArrowLeft") j = (i - 1 + tabs.length) % tabs.length;
    else if (e.key === "Home") j = 0;
    else if (e.key === "End") j = tabs.length - 1;
    if (j < 0) return;
    e.preventDefault();
    open(tabs[j], true);
  };

  // Dragging a tab onto another puts it at that tab's place.
  const onDragStart = (e: DragEvent<HTMLButtonElement>, t: TabRef) => {
    dragRef.current = t.tab_id;
    setDragId(t.tab_id);
    if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
    e.dataTransfer?.setData("text/plain", t.tab_id);
  };
  const onDragOver = (e: DragEvent<HTMLButtonElement>, i: number) => {
    if (dragRef.current === null) return;
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = "move";
    if (dropAt !== i) setDropAt(i);
  };
  const onDrop = (e: DragEvent<HTMLButtonElement>, i: number) => {
    e.preventDefault();
    const t = tabs.find((x) => x.tab_id === dragRef.current);
    dragRef.current = null;
    setDragId(null);
    setDropAt(null);
    if (t) void move(t, i);
  };
  const onDragEnd = () => {
    dragRef.current = null;
    setDragId(null);
    setDropAt(null);
  };

  return (
    <div className="strip-bar" aria-busy={busy}>
      <div className="tabstrip" role="tablist" aria-labelledby="note-title" onKeyDown={onStripKey}>
        {tabs.map((t, i) => {
          const selected = t.tab_id === current.tab_id;
          if (renaming === t.tab_id) {
            return (
              <RenameTab
                key={t.tab_id}
                tab={t}
                onCancel={() => setRenaming(null)}
                onSave={async (label) => {
                  const ok = await writes.rename(t, label);
                  if (ok) setRenaming(null);
                  return ok;
                }}
              />
            );
          }
          const cls = "tab" + (dragId === t.tab_id ? " is-dragging" : "") + (dropAt === i && dragId !== t.tab_id ? " is-drop" : "");
          return (
            <button
              key={t.tab_id}
              type="button"
              role="tab"
              id={"tab-" + t.tab_id}
              data-tab-id={t.tab_id}
              aria-selected={selected}
              aria-controls="tabpanel"
              tabIndex={selected ? 0 : -1}
              title={(i < 9 ? `Ctrl+${i + 1} · ` : "") + "double-click to rename, drag to move"}
              ref={(el) => {
                tabRefs.current[t.tab_id] = el;
              }}
              onClick={() => open(t)}
              onDoubleClick={() => setRenaming(t.tab_id)}
              draggable={!busy}
              onDragStart={(e) => onDragStart(e, t)}
              onDragOver={(e) => onDragOver(e, i)}
              onDrop={(e) => onDrop(e, i)}
              onDragEnd={onDragEnd}
              className={cls}
            >
              <span className="tab-type" aria-hidden="true">
                {typeIcon(t.type)}
              </span>
              {t.label || t.type}
              {peers
                .filter((p) => p.tab_id === t.tab_id && p.person?.id !== meId)
                .map((p) => (
                  <span key={p.client_id} className="tab-peer" aria-hidden="true" title={p.person?.name} style={{ backgroundColor: validColor(p.color) }} />
                ))}
            </button>
          );
        })}
      </div>
      <div className="strip-tools">
        <Menu
          id="tab-actions"
          label={`Actions for the tab “${current.label || current.type}”`}
          text="⋯"
          open={actionsOpen}
          setOpen={setActionsOpen}
          items={[
            { key: "rename", text: "Rename… (F2)", run: () => setRenaming(current.tab_id) },
            { key: "left", text: "Move left (Alt+Shift+←)", disabled: index === 0, run: () => void move(current, index - 1) },
            { key: "right", text: "Move right (Alt+Shift+→)", disabled: index === tabs.length - 1, run: () => void move(current, index + 1) },
            ...fileItems(noteId, current, () => document.getElementById("tab-import-file")?.click()),
            fixedTypes.includes(current.type)
              ? { key: "delete", text: "Delete (every Note keeps this tab)", disabled: true, run: () => {} }
              : { key: "delete", text: "Delete…", danger: true, run: () => onDelete(current) },
          ]}
        />
        <input
          id="tab-import-file"
          type="file"
          className="tab-import-file"
          accept=".xlsx,.csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,text/csv"
          aria-label="Spreadsheet to import"
          tabIndex={-1}
          hidden
          onChange={(e) => {
            const f = e.target.files?.[0];
            e.target.value = "";
            if (f) void writes.importSheet(f);
          }}
        />
        <Menu
          id="add-tab"
          label="Add a tab"
          text="+"
          open={addOpen}
          setOpen={setAddOpen}
          items={[
            { key: "slides", text: "▭ Slides tab", run: () => void writes.addTab("slides") },
            { key: "sheet", text: "▦ Sheet tab", run: () => void writes.addTab("sheet") },
          ]}
        />
      </div>
    </div>
  );
}

// fileItems are the tab menu's imports and downloads: a spreadsheet
// imported as a new sheet tab; a sheet tab as .xlsx (every sheet) or .csv
// (the sheet shown), the markdown as .md, a slides tab as a PDF: drawn by
// the server (Go fonts: Latin, Greek, Cyrillic) or printed by the browser
// (its own fonts, every script).
function fileItems(noteId: string, t: TabRef, pick: () => void): MenuItem[] {
  const at = { id: noteId, tab_id: t.tab_id };
  const items: MenuItem[] = [{ key: "import", text: "Import spreadsheet… (.xlsx, .csv)", run: pick }];
  if (t.type === "sheet") {
    items.push({ key: "xlsx", text: "Download .xlsx", href: api.tabExportHref(at, "xlsx"), run: () => {} });
    items.push({ key: "csv", text: "Download .csv (this sheet)", href: api.tabExportHref(at, "csv", shownSheet.get(t.tab_id)), run: () => {} });
  } else if (t.type === "markdown") {
    items.push({ key: "md", text: "Download .md", href: api.tabExportHref(at, "md"), run: () => {} });
  } else if (t.type === "slides") {
    items.push({ key: "pdf", text: "Download .pdf", href: api.tabExportHref(at, "pdf"), run: () => {} });
    items.push({ key: "print", text: "Print or save as PDF…", run: () => window.setTimeout(() => window.print(), 0) });
  }
  return items;
}

function typeIcon(type: string): string {
  switch (type) {
    case "markdown":
      return "¶";
    case "slides":
      return "▭";
    case "sheet":
      return "▦";
    case "sources":
      return "↗";
    case "files":
      return "▤";
  }
  return "•";
}
