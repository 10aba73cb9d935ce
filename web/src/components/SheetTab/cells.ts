// Cell values as a sheet stores them: a string, a number, a boolean or
// null (empty). What a person types or pastes is read the way a
// spreadsheet reads it: a number is a number, TRUE/FALSE a boolean, an
// empty cell null, anything else the text as typed.

export type Cell = string | number | boolean | null;

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

export function parseCell(raw: unknown): Cell {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === "number") return Number.isFinite(raw) ? raw : String(raw);
  if (typeof raw === "boolean") return raw;
  const s = String(raw);
  const t = s.trim();
  if (t === "") return null;
  if (NUMBER.test(t)) {
    const n = Number(t);
    if (Number.isFinite(n)) return n;
  }
  if (/^true$/i.test(t)) return true;
  if (/^false$/i.test(t)) return false;
  return s;
}

export function sameCell(a: unknown, b: unknown): boolean {
  return (a ?? null) === (b ?? null);
}

export function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (v === true) return "TRUE";
  if (v === false) return "FALSE";
  return String(v);
}

// colName is a column's letters: 0 → A, 25 → Z, 26 → AA.
export function colName(c: number): string {
  let s = "";
  let n = c + 1;
  while (n > 0) {
    const m = (n - 1) % 26;
    s = String.fromCharCode(65 + m) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}

export function cellName(r: number, c: number): string {
  return colName(c) + (r + 1);
}

// parseTSV reads a spreadsheet's text/plain clipboard: rows by line, cells
// by tab; a quoted cell may hold tabs, line breaks and doubled quotes. The
// line break a spreadsheet puts after the last row is no row.
export function parseTSV(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let i = 0;
  let atStart = true;
  while (i < text.length) {
    const ch = text[i];
    if (atStart && ch === '"') {
      // A quoted cell: up to the closing quote.
      let j = i + 1;
      let val = "";
      let closed = false;
      while (j < text.length) {
        if (text[j] === '"') {
          if (text[j + 1] === '"') {
            val += '"';
            j += 2;
            continue;
          }
          closed = true;
          j++;
          break;
        }
        val += text[j];
        j++;
      }
      const next = text[j];
      if (closed && (j >= text.length || next === "\t" || next === "\n" || next === "\r")) {
        cell = val;
        i = j;
        atStart = false;
        continue;
      }
      // Not a quoted cell after all: read the quote as text.
    }
    atStart = false;
    if (ch === "\t") {
      row.push(cell);
      cell = "";
      atStart = true;
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      atStart = true;
    } else {
      cell += ch;
    }
    i++;
  }
  if (cell !== "" || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

// parseHTMLTable reads the first table of a text/html clipboard (what
// spreadsheets put beside the text), or null when it holds none. The
// markup is parsed inert (no scripts run, nothing loads).
export function parseHTMLTable(html: string): string[][] | null {
  const doc = new DOMParser().parseFromString(html, "text/html");
  const table = doc.querySelector("table");
  if (!table) return null;
  const out: string[][] = [];
  for (const tr of Array.from(table.rows)) {
    out.push(Array.from(tr.cells).map((td) => (td.textContent ?? "").replace(/\u00a0/g, " ")));
  }
  return out;
}

// clipboardRange is the rectangle a paste carries: the HTML table when
// there is one, else the text as TSV; rows padded to one width.
export function clipboardRange(dt: DataTransfer | null): Cell[][] {
  if (!dt) return [];
  let rows: string[][] | null = null;
  const html = dt.getData("text/html");
  if (html) rows = parseHTMLTable(html);
  if (!rows || rows.length === 0) rows = parseTSV(dt.getData("text/plain") || dt.getData("text") || "");
  const width = rows.reduce((m, r) => Math.max(m, r.length), 0);
  return rows.map((r) => Array.from({ length: width }, (_, c) => parseCell(r[c] ?? "")));
}

// toTSV is a rectangle as a spreadsheet reads it from text/plain.
export function toTSV(rows: unknown[][]): string {
  return rows
    .map((r) =>
      r
        .map((v) => {
          const s = cellText(v);
          return /[\t\n\r"]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
        })
        .join("\t"),
    )
    .join("\n");
}
