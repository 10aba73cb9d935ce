// A place in a Note as its address names it, for a link that goes there
// (a search hit) and for the Note page that lands there: the tab by its
// exact ID, and in it a markdown line (line=12, 1-based), a slide (slide=
// its ID) or a sheet's cell (sheet= its ID, cell=B7). Back, forward and a
// reload go to the same place again.

// Place is where in a tab a link points.
export type Place = { line?: number; slide?: string; sheet?: string; cell?: string };

// Target is a Place as the page was sent to it: key is new each time, so
// that being sent to the same place again goes there again; row and col
// are the cell's, 0-based.
export type Target = Place & { key: number; tab: string; row?: number; col?: number };

// noteHref is the address of a Note's tab and a place in it.
export function noteHref(noteId: string, tabId: string, at: Place = {}): string {
  const q = new URLSearchParams({ tab: tabId });
  if (at.line !== undefined && at.line > 0) q.set("line", String(at.line));
  if (at.slide) q.set("slide", at.slide);
  if (at.cell) {
    if (at.sheet) q.set("sheet", at.sheet);
    q.set("cell", at.cell);
  }
  return "/notes/" + encodeURIComponent(noteId) + "?" + q.toString();
}

let sent = 0;

// targetOf is the place the address's query names (null: none), made
// anew.
export function targetOf(search: string): Target | null {
  const q = new URLSearchParams(search);
  const tab = q.get("tab") ?? "";
  const line = Number(q.get("line") ?? "");
  const slide = q.get("slide") ?? "";
  const cell = parseCellRef(q.get("cell") ?? "");
  if (!tab || (!(Number.isSafeInteger(line) && line > 0) && !slide && !cell)) return null;
  const t: Target = { key: ++sent, tab };
  if (Number.isSafeInteger(line) && line > 0) t.line = line;
  if (slide) t.slide = slide;
  if (cell) {
    t.cell = cell.name;
    t.row = cell.row;
    t.col = cell.col;
    const sheet = q.get("sheet");
    if (sheet) t.sheet = sheet;
  }
  return t;
}

// parseCellRef reads a cell's name ("B7", "aa10"): its row and column,
// 0-based; null when it is not one.
export function parseCellRef(s: string): { name: string; row: number; col: number } | null {
  const m = /^([A-Za-z]{1,4})([1-9][0-9]{0,6})$/.exec(s.trim());
  if (!m) return null;
  let col = 0;
  for (const ch of m[1].toUpperCase()) col = col * 26 + (ch.charCodeAt(0) - 64);
  return { name: m[1].toUpperCase() + m[2], row: Number(m[2]) - 1, col: col - 1 };
}
