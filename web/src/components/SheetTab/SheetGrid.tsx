import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { defineGrid } from "./grid";
import { api, type CellFormat, type FormatChange, type Peer } from "../../api";
import { validColor, type Presence } from "../../live/presence";
import { type Cell, cellName, cellText, clipboardRange, colName, parseCell, sameCell, toTSV } from "./cells";
import { Writer } from "./writer";
import { isError, isFormula, shiftFormula } from "./formula";
import { FORMATS, formatAt, formatNumber, readFormats, type Formats, type NumberFormat } from "./format";
import type { Target } from "../target";

// SheetGrid is one sheet in a virtualized grid (RevoGrid: only the cells
// in view are in the DOM). The cells come in blocks of 100 × 100 as the
// person scrolls; every edit and paste is a guarded write of at most
// 100 × 100 cells through the tab's Writer. The cell the person selects is
// their presence; the others' selected cells are outlined in their colour.

export const BLOCK = 100; // rows and columns of one read or write (the API's limit)
const ROW_PX = 30;
const COL_PX = 112;
const MAX_PASTE_CELLS = 200_000;

// GridSize is a sheet's size as the tab's outline gives it.
export type GridSize = {
  rows: number; // rows the sheet has
  cols: number; // columns of its widest row
};

type Props = {
  noteId: string;
  tabId: string;
  sheetId: string;
  sheetName: string;
  size: GridSize;
  writer: Writer;
  reload: number; // grows when someone else changed this tab
  reloadWho: string; // who made that change, to name them
  onVersion: (v: number) => void;
  onNotice: (text: string) => void;
  peers: Peer[]; // the others in the Note
  presence: Presence | null;
  target: Target | null; // a cell the address points at (a search hit): selected and scrolled to
  widths: Record<string, number>; // column widths in px, by column index ("3"): others COL_PX
  formats: CellFormat[]; // number formats of ranges, a later one winning
  onWidths: (w: Record<string, number>) => void; // the person resized columns: save
  onFormat: (f: FormatChange) => void; // the person formatted a range: save
};

// Range is a rectangle as the grid gives it: columns x..x1, rows y..y1.
type Range = { x: number; y: number; x1: number; y1: number };

// PeerCell is another person's selected cell as the grid draws it.
type PeerCell = { name: string; color: string };

type Model = Record<string, Cell>;

// EditDetail is what the grid's edit events carry: one cell (rowIndex,
// prop, val, model) or a range (data, by row).
type EditDetail = { rowIndex?: number; prop?: string | number; val?: unknown; model?: Model; data?: Record<string, Model> } | null | undefined;
type Block = { gen: number; loading: boolean };

const prop = (c: number) => "c" + c;

// RECENT_MS is how long after saving a cell the page says who replaced it.
const RECENT_MS = 60_000;

type RevoGridEl = HTMLElement & {
  source: Model[];
  columns: { prop: string; name: string; size?: number }[];
  rowHeaders: boolean;
  range: boolean;
  resize: boolean;
  rowSize: number;
  colSize: number;
  theme: string;
  refresh: (t?: string) => Promise<void>;
  getFocused: () => Promise<{ cell: { x: number; y: number } } | null>;
  scrollToCoordinate: (cell: { x?: number; y?: number }) => Promise<void>;
  setCellsFocus: (start?: { x: number; y: number }, end?: { x: number; y: number }) => Promise<void>;
  getSelectedRange: () => Promise<Range | null>;
};

let defined = false;

export function SheetGrid(p: Props) {
  const host = useRef<HTMLDivElement>(null);
  const wrap = useRef<HTMLDivElement>(null);
  const props = useRef(p);
  useEffect(() => {
    props.current = p;
  });
  const [ready, setReady] = useState(false);
  const st = useRef<{
    grid: RevoGridEl | null;
    models: Model[];
    cols: number;
    blocks: Map<string, Block>;
    gen: number; // the tab's changes seen: a block read before the newest is stale
    top: number;
    left: number;
    timer: number;
    before: Map<string, Cell>; // cells as they were before the grid's editor changed them
    editing: string; // "row,col" of the cell whose editor is open ("" none)
    held: boolean; // a redraw waits for the open editor to close
    skipped: boolean; // a read left the edited cell alone: read it again after
    mine: Map<string, { v: Cell; at: number }>; // cells this page saved lately, by "row,col"
    theirs: Map<string, Cell>; // what someone else wrote in a cell the person was editing
    replaced: string[]; // of those, the ones a read found replaced by someone else
    peers: Map<string, PeerCell>; // "row,col" of the others' selected cells
    computed: Map<string, Cell>; // what the formula cells compute to, by "row,col"
    formulas: boolean; // the sheet holds a formula: a write may change other cells
    formats: Formats;
    widths: Record<string, number>;
  }>({
    grid: null,
    models: [],
    cols: 0,
    blocks: new Map(),
    gen: 0,
    top: 0,
    left: 0,
    timer: 0,
    before: new Map(),
    editing: "",
    held: false,
    skipped: false,
    mine: new Map(),
    theirs: new Map(),
    replaced: [],
    peers: new Map(),
    computed: new Map(),
    formulas: false,
    formats: readFormats(p.formats),
    widths: { ...p.widths },
  });
  // The selected cell (the edit bar's), what the person types in the edit
  // bar (null: not editing there), and a count that grows when the cells
  // changed (the edit bar shows the newest).
  const [bar, setBar] = useState<{ r: number; c: number; raw: Cell; format: string } | null>(null);
  const [draft, setDraft] = useState<string | null>(null);
  const sel = useRef<{ r: number; c: number } | null>(null);
  // syncBar shows the selected cell's newest content in the edit bar.
  const syncBar = () => {
    const at = sel.current;
    if (!at) return;
    const s = st.current;
    const raw = (s.models[at.r]?.[prop(at.c)] ?? null) as Cell;
    const format = formatAt(s.formats, at.r, at.c) ?? "general";
    setBar((b) => (b && b.r === at.r && b.c === at.c && b.raw === raw && b.format === format ? b : { r: at.r, c: at.c, raw, format }));
  };

  // editorOpen says whether the grid's cell editor is open.
  const editorOpen = () => !!st.current.grid?.querySelector("revogr-edit");

  // redraw shows the models again, once the person closes an open editor
  // (a redraw under it would reset what they are typing).
  const redraw = () => {
    const s = st.current;
    if (!s.grid) return;
    if (editorOpen()) {
      s.held = true;
      return;
    }
    if (s.grid.isConnected) void s.grid.refresh("all").catch(() => {});
  };

  // shown is what cell (r, c) shows: a formula's computed value, else the
  // value; a number in the cell's format.
  const shown = (r: number, c: number, raw: unknown): { text: string; num: boolean; err: boolean; bool: boolean } => {
    const s = st.current;
    const v = isFormula(raw) ? (s.computed.get(r + "," + c) ?? null) : raw;
    if (typeof v === "number") return { text: formatNumber(v, formatAt(s.formats, r, c)), num: true, err: false, bool: false };
    return { text: cellText(v), num: false, err: isFormula(raw) && isError(v), bool: typeof v === "boolean" };
  };

  const width = (c: number) => st.current.widths[String(c)] || COL_PX;
  // colAt is the column at x px from the left.
  const colAt = (x: number) => {
    let c = 0;
    for (let at = 0; c < st.current.cols; c++) {
      at += width(c);
      if (at > x) break;
    }
    return c;
  };

  // columns is the grid's columns for n of them.
  // A cell shows as a spreadsheet shows it: TRUE and FALSE, not true and false.
  const columns = (n: number) =>
    Array.from({ length: n }, (_, c) => ({
      prop: prop(c),
      name: colName(c),
      size: width(c),
      minSize: 32,
      cellTemplate: (_h: unknown, p: { model: Record<string, unknown>; prop: string | number; rowIndex: number }) => shown(p.rowIndex, c, p.model[p.prop]).text,
      // Numbers right, text left, an error in its colour; another
      // person's selected cell outlined in their colour (a style the grid
      // sets through the CSSOM, which the page's policy allows).
      cellProperties: (p: { rowIndex: number; model: Record<string, unknown>; prop: string | number }) => {
        const v = shown(p.rowIndex, c, p.model[p.prop]);
        const cls = { "cell-num": v.num, "cell-err": v.err, "cell-bool": v.bool, "cell-formula": isFormula(p.model[p.prop]) };
        const o = st.current.peers.get(p.rowIndex + "," + c);
        if (!o) return { class: cls };
        return { class: { ...cls, "peer-cell": true }, "data-peer": o.name, title: o.name, style: { boxShadow: `inset 0 0 0 2px ${o.color}` } };
      },
    }));

  // grow makes the grid at least rows × cols (and a margin to type into).
  const grow = (rows: number, cols: number) => {
    const s = st.current;
    const g = s.grid;
    let changed = false;
    const wantRows = Math.max(rows + 20, 100);
    if (s.models.length < wantRows) {
      for (let r = s.models.length; r < wantRows; r++) s.models.push({});
      changed = true;
    }
    const wantCols = Math.max(cols + 3, 26);
    if (s.cols < wantCols) {
      s.cols = wantCols;
      if (g) g.columns = columns(wantCols);
    }
    if (changed && g) g.source = s.models.slice(); // a new array, the same rows: the grid sees the change
  };

  // put sets cell (r, c) in the grid's models, unless the person has an
  // edit of it not yet saved (theirs comes first).
  const put = (r: number, c: number, v: unknown) => {
    const s = st.current;
    if (r >= s.models.length) return;
    if (props.current.writer.pending(props.current.sheetId, r, c) || (s.editing === r + "," + c && editorOpen())) {
      // The person's edit of this cell comes first: what someone else put
      // there meanwhile is kept to say, once the person's is saved, what
      // it replaced.
      if (!props.current.writer.pending(props.current.sheetId, r, c)) s.skipped = true;
      const was = s.models[r]?.[prop(c)] ?? null;
      if (!sameCell(parseStored(v), was)) s.theirs.set(r + "," + c, parseStored(v));
      return;
    }
    const val = parseStored(v);
    const k = r + "," + c;
    const m = s.mine.get(k);
    if (m && Date.now() - m.at <= RECENT_MS && !sameCell(val, m.v)) s.replaced.push(`${cellName(r, c)} “${cellText(m.v)}” with “${cellText(val)}”`);
    if (m && (Date.now() - m.at > RECENT_MS || !sameCell(val, m.v))) s.mine.delete(k);
    if (val === null) delete s.models[r][prop(c)];
    else s.models[r][prop(c)] = val;
  };

  // ensureVisible reads the blocks in view that are not yet read, or were
  // read before the tab last changed.
  const ensureVisible = () => {
    const s = st.current;
    const g = s.grid;
    if (!g || !host.current) return;
    const h = host.current.clientHeight || 600;
    const w = host.current.clientWidth || 1000;
    const r0 = Math.floor(s.top / ROW_PX), r1 = Math.ceil((s.top + h) / ROW_PX) + 5;
    const c0 = colAt(s.left), c1 = colAt(s.left + w) + 2;
    const loads: Promise<void>[] = [];
    for (let br = Math.floor(r0 / BLOCK); br * BLOCK <= Math.min(r1, s.models.length - 1); br++) {
      for (let bc = Math.floor(c0 / BLOCK); bc * BLOCK <= Math.min(c1, s.cols - 1); bc++) {
        const key = br + "." + bc;
        const b = s.blocks.get(key);
        if (b && (b.loading || b.gen === s.gen)) continue;
        loads.push(loadBlock(br, bc));
      }
    }
    if (loads.length > 0)
      void Promise.all(loads).then(() => {
        redraw();
        syncBar();
      });
  };

  const loadBlock = async (br: number, bc: number) => {
    const s = st.current;
    const key = br + "." + bc;
    const gen = s.gen;
    s.blocks.set(key, { gen: s.blocks.get(key)?.gen ?? -1, loading: true });
    try {
      const { noteId, tabId, sheetId } = props.current;
      const res = await api.cells({ id: noteId, tab_id: tabId }, { sheet_id: sheetId, row: br * BLOCK, col: bc * BLOCK, rows: BLOCK, cols: BLOCK });
      props.current.onVersion(res.version);
      // A formula cell holds its formula (what its editor opens with) and
      // shows what it computes to.
      const fs = new Map<string, string>();
      for (const f of res.formulas ?? []) fs.set(f.row + "," + f.col, f.formula);
      if (fs.size > 0) s.formulas = true;
      (res.values ?? []).forEach((row, i) =>
        row.forEach((v, j) => {
          const r = br * BLOCK + i, c = bc * BLOCK + j;
          const f = fs.get(r + "," + c);
          if (f !== undefined) s.computed.set(r + "," + c, parseStored(v));
          else s.computed.delete(r + "," + c);
          put(r, c, f ?? v);
        }),
      );
      s.blocks.set(key, { gen, loading: false });
      if (s.replaced.length > 0) {
        // Two people wrote one cell at once: the later write stays, and
        // the one whose value went is told by whom and with what.
        const list = s.replaced.splice(0);
        const more = list.length > 3 ? ` and ${list.length - 3} more` : "";
        props.current.onNotice(`${props.current.reloadWho || "Someone"} replaced your ${list.slice(0, 3).join("; ")}${more}.`);
      }
    } catch (e) {
      s.blocks.delete(key);
      if (!(e instanceof DOMException)) props.current.onNotice(e instanceof Error ? e.message : String(e));
    }
  };

  // write shows values at (r0, c0) and saves them in writes of at most
  // BLOCK × BLOCK cells, each with the values the person saw before.
  const write = (r0: number, c0: number, vals: Cell[][], edited = true) => {
    const s = st.current;
    const g = s.grid;
    // A formula written, or cells others' formulas read: what they compute
    // is read again once the write is saved.
    const holdsFormula = vals.some((row) => row.some(isFormula));
    if (holdsFormula) s.formulas = true;
    const width = vals.reduce((m, r) => Math.max(m, r.length), 0);
    grow(r0 + vals.length, c0 + width);
    for (let i = 0; i < vals.length; i += BLOCK) {
      for (let j = 0; j < width; j += BLOCK) {
        const part = vals.slice(i, i + BLOCK).map((row) => row.slice(j, j + BLOCK));
        const base = part.map((row, a) =>
          row.map((_, b) => {
            const k = r0 + i + a + "," + (c0 + j + b);
            const was = edited ? s.before.get(k) : undefined;
            s.before.delete(k);
            return was !== undefined ? was : ((s.models[r0 + i + a]?.[prop(c0 + j + b)] ?? null) as Cell);
          }),
        );
        props.current.writer.cells(props.current.sheetId, r0 + i, c0 + j, part, base, {
          // The server's cells where the write goes, read after a refusal
          // because the tab changed: shown, then the person's kept.
          conflict: (server) => {
            const lost: string[] = [];
            server.forEach((row, a) =>
              row.forEach((v, b) => {
                if (b >= part[a].length) return;
                if (!sameCell(v, base[a][b]) && !sameCell(v, part[a][b])) {
                  lost.push(`${cellName(r0 + i + a, c0 + j + b)}: “${cellText(v)}” was replaced by your “${cellText(part[a][b])}”`);
                }
              }),
            );
            if (lost.length > 0) {
              const more = lost.length > 5 ? ` and ${lost.length - 5} more` : "";
              props.current.onNotice("Someone else changed cells you were editing; yours were kept. " + lost.slice(0, 5).join("; ") + more + ".");
            }
            s.gen++;
            ensureVisible();
          },
          saved: () => {
            const at = Date.now();
            const lost: string[] = [];
            part.forEach((row, a) =>
              row.forEach((v, b) => {
                const k = r0 + i + a + "," + (c0 + j + b);
                s.mine.set(k, { v, at });
                const other = s.theirs.get(k);
                s.theirs.delete(k);
                if (other !== undefined && !sameCell(other, v) && !sameCell(other, base[a][b])) lost.push(`${cellName(r0 + i + a, c0 + j + b)}: “${cellText(other)}” was replaced by your “${cellText(v)}”`);
              }),
            );
            if (s.formulas) {
              s.gen++;
              ensureVisible();
            }
            if (lost.length > 0) {
              const more = lost.length > 5 ? ` and ${lost.length - 5} more` : "";
              props.current.onNotice("Someone else changed cells you were editing; yours were saved after theirs. " + lost.slice(0, 5).join("; ") + more + ".");
            }
          },
          refused: (server) => {
            // A refused write: the server's cells are shown again.
            if (server) server.forEach((row, a) => row.forEach((v, b) => put(r0 + i + a, c0 + j + b, v)));
            s.gen++;
            ensureVisible();
            redraw();
          },
        });
      }
    }
    vals.forEach((row, a) =>
      row.forEach((v, b) => {
        const m = s.models[r0 + a];
        if (!m) return;
        if (isFormula(v) && m[prop(c0 + b)] !== v) s.computed.delete(r0 + a + "," + (c0 + b));
        if (v === null) delete m[prop(c0 + b)];
        else m[prop(c0 + b)] = v;
      }),
    );
    void g?.refresh("all");
    syncBar();
  };

  // fill copies the cells of src over the rest of dst (the fill handle
  // dragged from src to dst), as one write: a formula with its relative
  // references moved by how far its copy is from it, a value as it is.
  const fill = (src: Range, dst: Range) => {
    const s = st.current;
    const h = src.y1 - src.y + 1, w = src.x1 - src.x + 1;
    // The new cells: the part of dst beyond src (the handle moves one way).
    let r0 = dst.y, r1 = dst.y1, c0 = dst.x, c1 = dst.x1;
    if (dst.y1 > src.y1) r0 = src.y1 + 1;
    else if (dst.y < src.y) r1 = src.y - 1;
    else if (dst.x1 > src.x1) c0 = src.x1 + 1;
    else if (dst.x < src.x) c1 = src.x - 1;
    else return;
    if ((r1 - r0 + 1) * (c1 - c0 + 1) > MAX_PASTE_CELLS) {
      props.current.onNotice(`Fill at most ${MAX_PASTE_CELLS} cells at a time.`);
      return;
    }
    const mod = (a: number, n: number) => ((a % n) + n) % n;
    const vals: Cell[][] = [];
    for (let r = r0; r <= r1; r++) {
      const row: Cell[] = [];
      for (let c = c0; c <= c1; c++) {
        const sr = src.y + mod(r - src.y, h), sc = src.x + mod(c - src.x, w);
        const raw = (s.models[sr]?.[prop(sc)] ?? null) as Cell;
        row.push(isFormula(raw) ? shiftFormula(raw, r - sr, c - sc) : raw);
      }
      vals.push(row);
    }
    write(r0, c0, vals, false);
  };

  // selection is the selected range, or the selected cell.
  const selection = async (): Promise<Range | null> => {
    const g = st.current.grid;
    if (!g) return null;
    const r = await g.getSelectedRange();
    if (r) return r;
    const f = (await g.getFocused())?.cell ?? (sel.current ? { x: sel.current.c, y: sel.current.r } : null);
    return f ? { x: f.x, y: f.y, x1: f.x, y1: f.y } : null;
  };

  // applyFormat gives the selection a number format (display only).
  const applyFormat = async (format: NumberFormat) => {
    const r = await selection();
    if (!r) {
      props.current.onNotice("Select the cells to format first.");
      return;
    }
    const range = cellName(r.y, r.x) + (r.x1 !== r.x || r.y1 !== r.y ? ":" + cellName(r.y1, r.x1) : "");
    const s = st.current;
    s.formats = [...s.formats, { rect: { r0: r.y, c0: r.x, r1: r.y1, c1: r.x1 }, format }];
    // "general" takes the range's formats away.
    props.current.onFormat({ range, format });
    redraw();
    syncBar();
  };

  // The grid: made once per sheet.
  useEffect(() => {
    if (!defined) {
      defineGrid();
      defined = true;
    }
    const s = st.current;
    const el = host.current;
    if (!el) return;
    const size = props.current.size;
    s.models = [];
    s.cols = 0;
    const g = document.createElement("revo-grid") as RevoGridEl;
    g.rowHeaders = true;
    g.range = true;
    g.resize = true;
    g.rowSize = ROW_PX;
    g.colSize = COL_PX;
    g.theme = "compact";
    g.setAttribute("aria-label", "Cells of sheet " + props.current.sheetName);
    s.grid = g;
    grow(size.rows, size.cols);
    g.source = s.models;
    g.columns = columns(s.cols);

    const onEdit = (e: Event) => {
      const d = (e as CustomEvent<EditDetail>).detail;
      const edits: { r: number; c: number; v: Cell }[] = [];
      if (d && d.data && typeof d.data === "object" && d.rowIndex === undefined) {
        for (const [ri, m] of Object.entries(d.data as Record<string, Model>)) {
          for (const [k, v] of Object.entries(m ?? {})) if (/^c\d+$/.test(k)) edits.push({ r: Number(ri), c: Number(k.slice(1)), v: parseCell(v) });
        }
      } else if (d && typeof d.prop === "string" && /^c\d+$/.test(d.prop)) {
        edits.push({ r: Number(d.rowIndex), c: Number(d.prop.slice(1)), v: parseCell(d.val) });
      }
      if (edits.length === 0) return;
      // Each edited cell is one rectangle row by row: a range edit writes
      // its bounding box only when it covers it fully.
      let minR = Infinity, maxR = -1, minC = Infinity, maxC = -1;
      for (const x of edits) {
        minR = Math.min(minR, x.r); maxR = Math.max(maxR, x.r);
        minC = Math.min(minC, x.c); maxC = Math.max(maxC, x.c);
      }
      const full = edits.length === (maxR - minR + 1) * (maxC - minC + 1);
      if (full) {
        const vals: Cell[][] = Array.from({ length: maxR - minR + 1 }, () => Array(maxC - minC + 1).fill(null));
        for (const x of edits) vals[x.r - minR][x.c - minC] = x.v;
        write(minR, minC, vals);
      } else {
        for (const x of edits) write(x.r, x.c, [[x.v]]);
      }
    };

    // The value a cell had when its editor opened is what the person
    // changed: if someone else changes it meanwhile, the save says so.
    const onEditStart = (e: Event) => {
      const d = (e as CustomEvent<EditDetail>).detail;
      if (d && typeof d.prop === "string" && d.model) {
        s.editing = d.rowIndex + "," + d.prop.slice(1);
        s.before.set(s.editing, (d.model[d.prop] ?? null) as Cell);
      }
    };
    const onBeforeEdit = (e: Event) => {
      const d = (e as CustomEvent<EditDetail>).detail;
      if (!d || typeof d.prop !== "string" || !d.model) return;
      const k = d.rowIndex + "," + d.prop.slice(1);
      if (!s.before.has(k)) s.before.set(k, (d.model[d.prop] ?? null) as Cell);
    };
    const onBeforeRange = (e: Event) => {
      const d = (e as CustomEvent<EditDetail & { oldRange?: Range | null; newRange?: Range | null }>).detail;
      const o = d?.oldRange, n = d?.newRange;
      if (o && n && (o.x !== n.x || o.y !== n.y || o.x1 !== n.x1 || o.y1 !== n.y1)) {
        // The fill handle: this page writes the copies (formulas moved).
        e.preventDefault();
        fill(o, n);
        return;
      }
      if (!d?.data) return;
      for (const [ri, m] of Object.entries(d.data as Record<string, Model>)) {
        for (const k of Object.keys(m ?? {})) if (/^c\d+$/.test(k)) s.before.set(ri + "," + k.slice(1), (s.models[Number(ri)]?.[k] ?? null) as Cell);
      }
    };

    const onPaste = (e: Event) => {
      e.preventDefault(); // the grid's own paste: this one writes
      const ce = (e as CustomEvent).detail?.event as ClipboardEvent | undefined;
      // The paste is the grid's when the focus is in it, or nowhere: the
      // grid moves the focus onto the cell a person selects (or that Enter
      // moves to) only on the next frame, so a paste right after finds it
      // on the page's body. A paste into another field is that field's.
      const at = document.activeElement;
      const nowhere = !at || at === document.body;
      if (!ce || (!nowhere && !g.contains(at) && !g.contains(ce.target as Node))) return;
      const t = ce.target as HTMLElement | null;
      if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return; // an open cell editor takes the text
      const vals = clipboardRange(ce.clipboardData);
      ce.preventDefault();
      if (vals.length === 0 || vals[0].length === 0) return;
      if (vals.length * vals[0].length > MAX_PASTE_CELLS) {
        props.current.onNotice(`This paste has ${vals.length * vals[0].length} cells; paste at most ${MAX_PASTE_CELLS} at a time.`);
        return;
      }
      void g.getFocused().then((f) => {
        const r0 = f?.cell.y ?? 0, c0 = f?.cell.x ?? 0;
        write(r0, c0, vals, false);
      });
    };

    // The cell the person selects is where they are, for the others.
    const onFocus = () => {
      void g.getFocused().then((f) => {
        const { presence, tabId, sheetId } = props.current;
        if (f) {
          sel.current = { r: f.cell.y, c: f.cell.x };
          setDraft(null);
          syncBar();
        }
        if (f && presence) presence.at(tabId, { cell: { sheet_id: sheetId, row: f.cell.y, col: f.cell.x } });
      });
    };

    // A column's border dragged in its header: its width is saved.
    const onResize = (e: Event) => {
      const d = (e as CustomEvent<Record<string, { prop?: string; size?: number }>>).detail ?? {};
      const out: Record<string, number> = {};
      for (const col of Object.values(d)) {
        if (!col || typeof col.prop !== "string" || !/^c\d+$/.test(col.prop) || typeof col.size !== "number") continue;
        const c = col.prop.slice(1);
        const px = Math.round(col.size);
        s.widths[c] = px;
        out[c] = px;
      }
      if (Object.keys(out).length > 0) props.current.onWidths(out);
    };

    // Keys typed into a field outside the grid (the edit bar) are that
    // field's: the grid, which hears the whole page's keys, leaves them.
    // A click in the edit bar or the format buttons keeps the selection
    // (the grid would drop it for a click outside it).
    const onFocusLost = (e: Event) => {
      const at = document.activeElement;
      if (at && wrap.current?.contains(at) && !g.contains(at)) e.preventDefault();
    };
    // A press in the grid leaves the edit bar (the grid keeps the DOM
    // focus where it was, and the bar would keep the keys).
    const onDown = () => {
      const at = document.activeElement;
      if (at instanceof HTMLElement && wrap.current?.contains(at) && !g.contains(at)) at.blur();
    };
    const onBeforeKey = (e: Event) => {
      const t = (e as CustomEvent<{ original?: Event }>).detail?.original?.target as Node | null | undefined;
      if (t instanceof HTMLElement && !g.contains(t) && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) e.preventDefault();
    };

    const onCopy = (e: Event) => {
      const d = (e as CustomEvent).detail as { event: ClipboardEvent; data?: unknown[][] };
      if (!d?.event?.clipboardData || !d.data) return;
      e.preventDefault();
      d.event.clipboardData.setData("text/plain", toTSV(d.data));
    };

    const onScroll = (e: Event) => {
      const d = (e as CustomEvent).detail as { dimension: string; coordinate: number };
      if (d.dimension === "rgRow") s.top = d.coordinate;
      else if (d.dimension === "rgCol") s.left = d.coordinate;
      window.clearTimeout(s.timer);
      s.timer = window.setTimeout(ensureVisible, 120);
    };

    // The grid's cells and column headers sit in plain boxes: each row box
    // gets its ARIA role (and the row numbers theirs), so that the grid's
    // structure is whole for assistive technology.
    const roles = () => {
      for (const r of g.querySelectorAll(".rgRow:not([role]), .header-rgRow:not([role])")) r.setAttribute("role", "row");
      for (const c of g.querySelectorAll("revogr-row-headers revogr-data .rgCell:not([role])")) c.setAttribute("role", "rowheader");
      for (const c of g.querySelectorAll("revogr-row-headers .rgHeaderCell:not([role])")) c.setAttribute("role", "columnheader");
      // The grid's credit link stays in view but out of the grid's
      // structure (a grid holds rows only) and out of the tab order.
      for (const a of g.querySelectorAll("revogr-attribution:not([aria-hidden])")) a.setAttribute("aria-hidden", "true");
      for (const a of g.querySelectorAll("revogr-attribution a:not([tabindex])")) a.setAttribute("tabindex", "-1");
    };
    const mo = new MutationObserver(() => {
      roles();
      if (!editorOpen() && (s.held || s.skipped)) {
        // The editor closed: what waited for it is shown now.
        s.held = false;
        s.editing = "";
        if (s.skipped) {
          s.skipped = false;
          s.gen++;
          ensureVisible();
        }
        void g.refresh("all");
      }
    });
    mo.observe(g, { childList: true, subtree: true, attributes: true, attributeFilter: ["class", "role"] });

    g.addEventListener("beforeeditstart", onEditStart);
    g.addEventListener("beforeedit", onBeforeEdit);
    g.addEventListener("beforerangeedit", onBeforeRange);
    g.addEventListener("afteredit", onEdit);
    g.addEventListener("beforepaste", onPaste);
    g.addEventListener("beforecopyapply", onCopy);
    g.addEventListener("viewportscroll", onScroll);
    g.addEventListener("afterfocus", onFocus);
    g.addEventListener("aftercolumnresize", onResize);
    g.addEventListener("beforekeydown", onBeforeKey);
    g.addEventListener("beforefocuslost", onFocusLost);
    g.addEventListener("mousedown", onDown, true);
    el.appendChild(g);
    setReady(true);
    ensureVisible();
    return () => {
      window.clearTimeout(s.timer);
      mo.disconnect();
      g.removeEventListener("beforeeditstart", onEditStart);
      g.removeEventListener("beforeedit", onBeforeEdit);
      g.removeEventListener("beforerangeedit", onBeforeRange);
      g.removeEventListener("afteredit", onEdit);
      g.removeEventListener("beforepaste", onPaste);
      g.removeEventListener("beforecopyapply", onCopy);
      g.removeEventListener("viewportscroll", onScroll);
      g.removeEventListener("afterfocus", onFocus);
      g.removeEventListener("aftercolumnresize", onResize);
      g.removeEventListener("beforekeydown", onBeforeKey);
      g.removeEventListener("beforefocuslost", onFocusLost);
      g.removeEventListener("mousedown", onDown, true);
      g.remove();
      s.grid = null;
      s.blocks.clear();
    };
    // The grid is made once per sheet (its helpers read the newest props
    // through props.current): only a new sheet makes it again.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [p.sheetId]);

  useEffect(() => {
    const g = st.current.grid;
    if (g) g.setAttribute("aria-label", "Cells of sheet " + p.sheetName);
  }, [p.sheetName]);

  // The cell the address points at: the grid scrolls to it and selects
  // it, once it has drawn itself, and the others see the person there.
  const row = p.target?.row;
  const col = p.target?.col;
  const key = p.target?.key;
  useEffect(() => {
    const g = st.current.grid;
    if (!g || row === undefined || col === undefined) return;
    let stop = false;
    grow(row + 1, col + 1);
    const land = async () => {
      for (let i = 0; i < 300 && !stop && !g.querySelector("revogr-data"); i++) await nextFrame();
      if (stop) return;
      await g.scrollToCoordinate({ x: col, y: row });
      await g.setCellsFocus({ x: col, y: row }, { x: col, y: row });
      const { presence, tabId, sheetId } = props.current;
      presence?.at(tabId, { cell: { sheet_id: sheetId, row, col } });
    };
    void land();
    return () => {
      stop = true;
    };
    // grow reads the grid through refs; the place is its row, column and
    // key (a new visit to the same cell goes there again).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [row, col, key]);

  // The others' selected cells in this sheet, drawn again as they move.
  const { peers, tabId, sheetId } = p;
  useEffect(() => {
    const next = new Map<string, PeerCell>();
    for (const o of peers) {
      if (o.tab_id !== tabId || o.cell?.sheet_id !== sheetId) continue;
      next.set((o.cell.row ?? 0) + "," + (o.cell.col ?? 0), { name: o.person?.name || "Someone", color: validColor(o.color) });
    }
    const s = st.current;
    const same = next.size === s.peers.size && [...next].every(([k, v]) => s.peers.get(k)?.name === v.name && s.peers.get(k)?.color === v.color);
    if (same) return;
    s.peers = next;
    redraw();
    // redraw is made anew each render and reads the grid through refs.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [peers, tabId, sheetId]);

  // The sheet's widths and formats as the tab's outline has them (someone
  // else may have changed them): the grid draws them.
  const widthsKey = JSON.stringify(p.widths);
  const formatsKey = JSON.stringify(p.formats);
  const laidOut = useRef(false);
  useEffect(() => {
    // The grid is made with them: only a later change is drawn here (a
    // grid not yet connected refuses to be redrawn).
    if (!laidOut.current) {
      laidOut.current = true;
      return;
    }
    const s = st.current;
    s.widths = { ...props.current.widths };
    s.formats = readFormats(props.current.formats);
    if (s.grid?.isConnected) s.grid.columns = columns(s.cols);
    redraw();
    // The keys stand for the objects; columns and redraw read refs.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [widthsKey, formatsKey]);

  // Someone else changed the tab: what is in view is read again; the rest
  // when it comes into view. The selection and an open editor stay.
  useEffect(() => {
    if (p.reload === 0) return;
    st.current.gen++;
    ensureVisible();
    // Only a new change by someone else reads again; ensureVisible is
    // made anew each render and reads the grid's state through refs.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [p.reload]);

  // The edit bar: the selected cell's name and what it holds (a formula
  // cell its formula), edited there and saved with Enter.
  const selCell = bar;
  const barValue = draft ?? cellText(bar?.raw ?? null);
  const backToGrid = () => {
    const g = st.current.grid;
    if (!g || !bar) return;
    const at = document.activeElement;
    if (at instanceof HTMLElement && !g.contains(at)) at.blur();
    void g.setCellsFocus({ x: bar.c, y: bar.r }, { x: bar.c, y: bar.r });
  };
  const onBarKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (!bar) return;
    if (e.key === "Enter") {
      e.preventDefault();
      if (draft !== null) {
        const v = parseCell(draft);
        if (!sameCell(v, bar.raw)) write(bar.r, bar.c, [[v]], false);
      }
      setDraft(null);
      backToGrid();
    } else if (e.key === "Escape") {
      e.preventDefault();
      setDraft(null);
      backToGrid();
    }
  };
  const fmtHere = bar?.format ?? "";
  const onFormatClick = (e: MouseEvent<HTMLButtonElement>) => {
    const f = FORMATS.find((x) => x.key === e.currentTarget.dataset.format);
    if (f) void applyFormat(f.key);
  };

  return (
    <div className="sheet-sheet" ref={wrap}>
      <div className="sheet-toolbar" role="toolbar" aria-label="Number format">
        <span className="sheet-toolbar-label muted">Format</span>
        {FORMATS.map((f) => (
          <button
            key={f.key}
            type="button"
            className="sheet-fmt"
            data-format={f.key}
            title={f.title}
            aria-pressed={fmtHere === f.key}
            disabled={!selCell}
            onClick={onFormatClick}
          >
            {f.text}
          </button>
        ))}
      </div>
      <div className="sheet-editbar">
        <label className="sheet-cellname" htmlFor={"sheet-bar-" + p.sheetId}>
          {selCell ? cellName(selCell.r, selCell.c) : ""}
        </label>
        <span className="sheet-fx" aria-hidden="true">
          fx
        </span>
        <input
          id={"sheet-bar-" + p.sheetId}
          className="sheet-barinput"
          aria-label={selCell ? `Content of ${cellName(selCell.r, selCell.c)}` : "Content of the selected cell"}
          autoComplete="off"
          spellCheck={false}
          disabled={!selCell}
          value={barValue}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onBarKey}
        />
      </div>
      <div className="sheet-grid" ref={host} data-ready={ready ? "1" : undefined}>
        {!ready && <p className="muted">Opening the sheet…</p>}
      </div>
    </div>
  );
}

function nextFrame(): Promise<void> {
  return new Promise((r) => requestAnimationFrame(() => r()));
}

function parseStored(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  return String(v);
}
