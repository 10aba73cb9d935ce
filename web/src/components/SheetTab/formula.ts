// Formulas as a person writes them ("=SUM(B2:B9)") and what the fill
// handle does to them: a copy of a formula moved by (dr, dc) has its
// relative references moved as far, as a spreadsheet moves them. A
// reference with $ before its column or row keeps that part; one moved off
// the grid becomes #REF!; text in double quotes is left as it is; a
// sheet's name before "!" ('Sheet 2'!A1, Costs!B3) is kept and the
// reference after it moved.

export const MAX_ROWS = 1_048_576;
export const MAX_COLS = 16_384;

export const isFormula = (v: unknown): v is string => typeof v === "string" && v.startsWith("=");

// An error a formula computes to: #DIV/0!, #REF!, #NAME?, #N/A, #CYCLE!…
export const isError = (v: unknown): boolean => typeof v === "string" && /^#[A-Z0-9/]+[!?]?$/.test(v) && v.length <= 12;

const REF = /^(\$?)([A-Za-z]{1,3})(\$?)(\d+)$/;
const NUM = /^(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i;

// colIndex is a column's index from its letters: A → 0, AA → 26.
export function colIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

function letters(c: number): string {
  let s = "";
  let n = c + 1;
  while (n > 0) {
    const m = (n - 1) % 26;
    s = String.fromCharCode(65 + m) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}

// shiftRef moves one A1 reference; null when it leaves the grid.
function shiftRef(ref: string, dr: number, dc: number): string | null {
  const m = REF.exec(ref);
  if (!m) return ref;
  const [, cAbs, col, rAbs, row] = m;
  let c = colIndex(col);
  let r = Number(row) - 1;
  if (!cAbs) c += dc;
  if (!rAbs) r += dr;
  if (c < 0 || r < 0 || c >= MAX_COLS || r >= MAX_ROWS) return null;
  return cAbs + letters(c) + rAbs + (r + 1);
}

// shiftFormula is formula with its relative references moved by dr rows
// and dc columns. A value that is no formula is answered as it is.
export function shiftFormula(formula: string, dr: number, dc: number): string {
  if (!isFormula(formula) || (dr === 0 && dc === 0)) return formula;
  const s = formula;
  let out = "=";
  let i = 1;
  while (i < s.length) {
    const ch = s[i];
    if (ch === '"') {
      // Text: up to its closing quote ("" is a quote inside).
      let j = i + 1;
      while (j < s.length) {
        if (s[j] === '"') {
          if (s[j + 1] === '"') {
            j += 2;
            continue;
          }
          j++;
          break;
        }
        j++;
      }
      out += s.slice(i, j);
      i = j;
      continue;
    }
    if (ch === "'") {
      // A quoted sheet name: kept, with the "!" after it.
      let j = i + 1;
      while (j < s.length) {
        if (s[j] === "'") {
          if (s[j + 1] === "'") {
            j += 2;
            continue;
          }
          j++;
          break;
        }
        j++;
      }
      out += s.slice(i, j);
      i = j;
      continue;
    }
    if (/[0-9.]/.test(ch)) {
      const m = NUM.exec(s.slice(i));
      const n = m ? m[0].length : 1;
      out += s.slice(i, i + n);
      i += n;
      continue;
    }
    if (/[A-Za-z_$]/.test(ch)) {
      let j = i;
      while (j < s.length && /[A-Za-z0-9_.$]/.test(s[j])) j++;
      const word = s.slice(i, j);
      const next = s[j];
      if (next === "!" || next === "(" || !REF.test(word)) {
        // A sheet's name, a function's, TRUE, a named thing: kept.
        out += word;
      } else {
        out += shiftRef(word, dr, dc) ?? "#REF!";
      }
      i = j;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}
